// SharedWeights: the one read-only copy of a model's parameters that every executor of a factory
// uses, by name. On the CPU the tensors are used as they are (often zero-copy views into the mapped
// library); for another device each weight is uploaded once, on first request, and the uploaded copy
// is shared by all executors on that device (executor/device_weight_cache.h, the rule both executor
// kinds share). Thread-safe.
#ifndef SORUN_GRAPH_EXECUTOR_SHARED_WEIGHTS_H_
#define SORUN_GRAPH_EXECUTOR_SHARED_WEIGHTS_H_

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/object.h"
#include "base/status.h"
#include "executor/device_weight_cache.h"
#include "graph_executor/graph_json.h"
#include "runtime/tensor.h"
#include "runtime/tensor_io.h"

namespace sorun {

// What the params-vs-graph rule does with a param that names no input of the graph: a factory's own
// params may hold more (alignment pads, unused weights); a params file given beside a graph may not
// (one for another model is an error).
enum class ParamsOutsideGraph { kIgnored, kRefused };

// One param as the params-vs-graph rule sees it: a tensor's facts, or a header's read without its
// data (`sorun inspect`). `shape` must outlive the check; `device` (optional) is named in messages;
// `offset` (optional) is where its NDArray starts in the source, named in messages.
struct ParamSignature {
  static constexpr uint64_t kNoOffset = ~0ull;
  std::string_view name;
  DLDataType dtype{};
  const std::vector<int64_t>* shape = nullptr;
  const DLDevice* device = nullptr;
  uint64_t offset = kNoOffset;
};

// The one params-vs-graph rule, for every place params meet a graph (a factory's params, the params
// file of a three-file deployment, `sorun pack` and `sorun inspect`, load_params and share_params): a
// param named like an input of `graph` has that input's dtype and shape, and with kRefused every
// param names an input. InvalidArgument
// "<source>: param 'w' is float32[4, 9] on cpu:0 but <graph_name> input expects float32[4, 8]" or
// "<source>: param 'x' is not an input of <graph_name> (inputs: a, b)"; `source` may be empty. A param
// with an offset is placed as the params readers place their errors: "<source> byte 96: param 'w' ...".
Status CheckParamsAgainstGraph(const GraphSpec& graph, const std::vector<ParamSignature>& params,
                               ParamsOutsideGraph outside, const std::string& source,
                               const std::string& graph_name = "the graph");
// The same rule over tensors (a params file just read), each named with its device; `offsets` (empty,
// or one per tensor, as ReadParamsDict gives them) place them in `source`.
Status CheckParamsAgainstGraph(const GraphSpec& graph, const NamedTensors& params, ParamsOutsideGraph outside,
                               const std::string& source, const std::string& graph_name = "the graph",
                               const std::vector<uint64_t>& offsets = {});

class SharedWeights final : public Object {
 public:
  // `params`: CPU tensors by name (names unique). `source` names where they came from in errors (the
  // params file of a three-file deployment; empty for a factory's own params); `offsets` (empty, or one
  // per tensor: where ReadParamsDict found it in `source`) place each tensor in those errors.
  static StatusOr<ObjectPtr<SharedWeights>> Create(NamedTensors params, std::string source = {},
                                                   std::vector<uint64_t> offsets = {});

  // CheckParamsAgainstGraph over these weights, `source` naming them. A three-file deployment
  // refuses weights outside the graph: CheckAgainstGraph(spec, ParamsOutsideGraph::kRefused, graph_path).
  Status CheckAgainstGraph(const GraphSpec& graph, ParamsOutsideGraph outside = ParamsOutsideGraph::kIgnored,
                           const std::string& graph_name = "the graph") const;

  // The CPU tensor named `name`, or nullptr.
  const Tensor* Find(const std::string& name) const;
  // The weight on `device` (uploaded once per device, under that device's lock; the CPU tensor itself
  // for the CPU). Any thread.
  StatusOr<Tensor> OnDevice(const std::string& name, DLDevice device);

  const NamedTensors& params() const { return params_; }
  const std::string& source() const { return source_; }
  uint64_t total_bytes() const { return device_copies_->host_bytes(); }
  // Bytes uploaded to `device` so far. Any thread.
  uint64_t uploaded_bytes(DLDevice device) const { return device_copies_->device_bytes(device); }

 private:
  SharedWeights() = default;
  NamedTensors params_;
  std::string source_;
  std::vector<uint64_t> offsets_;                     // empty, or params_' offsets in source_
  std::unordered_map<std::string, size_t> index_;     // name -> index into params_ and device_copies_
  std::unique_ptr<DeviceWeightCache> device_copies_;  // params_' tensors, in order
};

}  // namespace sorun

#endif  // SORUN_GRAPH_EXECUTOR_SHARED_WEIGHTS_H_
