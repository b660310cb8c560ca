// GraphExecutorFactoryNode: TVM's GraphExecutorFactory module, the root of a packed model
// (docs/spec/FORMAT.md section 7). It owns the graph JSON (parsed and validated once), ONE read-only copy
// of the weights and the module name; its first import is the kernel library. Calling the function
// named `module_name` ("default") with devices creates a GraphExecutor that uses the shared weights
// in place: N executors cost N activation pools, not N copies of the weights (unlike TVM, creating
// executors does not consume the factory's params). Also get_graph_json, get_graph_params,
// remove_params, debug_create. Thread-safe: executors may be created from many threads.
#ifndef SORUN_GRAPH_EXECUTOR_FACTORY_MODULE_H_
#define SORUN_GRAPH_EXECUTOR_FACTORY_MODULE_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "format/binary_reader.h"
#include "graph_executor/graph_executor.h"
#include "graph_executor/graph_json.h"
#include "graph_executor/shared_weights.h"
#include "runtime/module.h"
#include "runtime/tensor_io.h"

namespace sorun {

// The factory payload (section 7.2) as read from a blob.
struct FactoryPayload {
  struct Param {
    std::string name;
    NDArrayHeader header;
    uint64_t offset = 0;  // where its NDArray starts in the reader's input
    Tensor tensor;        // set when tensors are loaded
  };
  std::string graph_json;
  std::vector<Param> params;  // alignment pads excluded
  uint64_t pad_count = 0;
  std::string module_name;
};

// Reads a factory payload. With `load_tensors` every param becomes a CPU Tensor (zero-copy when its
// data is 64-byte aligned and the reader has an owner; otherwise copied once, in 1 MiB chunks whose
// source pages in the mapped file are released as the copy passes them, so the peak is the copy plus
// one chunk); without, only headers are read (inspection).
Status ReadFactoryPayload(BinaryReader& reader, bool load_tensors, FactoryPayload* out);

// The device list of a packed call, from argument `first` on: DLDevice values and (device_type,
// device_id) integer pairs, in any mix (TVM passes either). InvalidArgument "<fn_name>: ..." for a
// type without an id, a value that is not a DLPack device type, or no device at all. The one parser
// of device arguments (the factory's create functions, tvm.graph_executor.create).
StatusOr<std::vector<DLDevice>> DevicesFromPackedArgs(const PackedArgs& args, int first, std::string_view fn_name);

class GraphExecutorFactoryNode final : public ModuleNode {
 public:
  // Validates the graph and that every param named like a graph input matches its shape and dtype.
  // `params_source` and `offsets` (one per param) place each param in errors, as read from a payload.
  static StatusOr<ObjectPtr<GraphExecutorFactoryNode>> Create(std::string graph_json, NamedTensors params,
                                                              std::string module_name = "default",
                                                              std::string params_source = {},
                                                              std::vector<uint64_t> offsets = {});

  const char* type_key() const override;
  const void* class_id() const override { return &kClassId; }
  static constexpr char kClassId = 0;
  PackedFunc GetFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) override;
  int property_mask() const override { return kModuleBinarySerializable | kModuleRunnable; }
  // Writes the payload with every parameter's data 64-byte aligned in the final library.
  Status SaveToBinary(BinaryWriter* writer) const override;
  std::vector<std::string> ListFunctionNames() const override;

  // An executor on `devices` (first = default device) using imports()[0] as the kernel library.
  StatusOr<std::unique_ptr<GraphExecutor>> CreateExecutor(const std::vector<DLDevice>& devices) const;

  const std::string& graph_json() const { return graph_json_; }
  const std::shared_ptr<const GraphSpec>& graph() const { return graph_; }
  const ObjectPtr<SharedWeights>& weights() const { return weights_; }
  const std::string& module_name() const { return module_name_; }

 private:
  GraphExecutorFactoryNode() = default;
  std::string graph_json_;
  std::shared_ptr<const GraphSpec> graph_;
  ObjectPtr<SharedWeights> weights_;
  std::string module_name_;
};

// Builds a factory module importing `kernel_lib` (TVM's tvm.graph_executor_factory.create).
StatusOr<Module> MakeGraphExecutorFactory(std::string graph_json, NamedTensors params, Module kernel_lib,
                                          std::string module_name = "default");

// Blob loader for "GraphExecutorFactory" (and the legacy "GraphRuntimeFactory").
StatusOr<Module> LoadGraphExecutorFactory(BinaryReader& reader);

}  // namespace sorun

#endif  // SORUN_GRAPH_EXECUTOR_FACTORY_MODULE_H_
