// InspectModelFile: what a model library holds, read from its bytes without loading or executing it
// (`sorun inspect`, and the structural half of `sorun verify`).
//
// The file is read with ElfImage (ModelFile). Without `__tvm_dev_mblob` it is a plain kernel library
// (or, with `__tvm_ffi_*library_bin`, a TVM v0.21+ artifact sorun does not load); with one, the blob is
// walked with ParseModuleBlob and a header-only handler per type key:
//   GraphExecutorFactory / GraphRuntimeFactory  ReadFactoryPayload(load_tensors=false) + GraphSpec::Parse
//   cuda / opencl                                ReadDeviceModulePayload
//   const_loader / metadata                      constant names, shapes and symbols (docs/spec/FORMAT.md 7.4)
//   metadata_module                              empty payload
// A Relax VM export (IsRelaxExportFile: the __tvm_ffi_*library_bin symbols, or a __tvm_dev_mblob rooted
// in a Relax executable) is read by InspectRelaxExport (tools/cli/relax_inspector.h) instead.
// Any other type key is an error naming it (payloads are not length-delimited, so the walk cannot go
// on); the message lists the modules read before it. The report then holds the module tree, the graph
// (inputs, outputs, params, node counts), a memory plan (PlanMemory with one device per device type
// the graph uses, parameters bound), the device modules' kernels and the
// integrity record (present, and whether it matches the blob). Without device_index the plan uses
// the default device the model needs: opencl:0 / cuda:0 when its device modules are all of that
// kind, else cpu:0.
//
// Pure function of the file's bytes; reentrant.
#ifndef SORUN_TOOLS_CLI_MODEL_INSPECTOR_H_
#define SORUN_TOOLS_CLI_MODEL_INSPECTOR_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/device_module_payload.h"
#include "base/status.h"
#include "format/binary_reader.h"
#include "graph_executor/memory_plan.h"
#include "tools/cli/relax_inspector.h"

namespace sorun {
namespace cli {

enum class ArtifactKind {
  kPackedModel,    // has __tvm_dev_mblob
  kKernelLibrary,  // no blob: kernels only (three-file deployment's library)
  kTvmFfi,         // __tvm_ffi_* symbols but no Relax blob: TVM v0.21+, not a Relax export
  kRelaxExport,    // a Relax VM export (TVM 0.16 - 0.27): report.relax is set
};
// "packed_model", "kernel_library", "tvm_ffi", "relax_export"
const char* ArtifactKindName(ArtifactKind kind);

struct InspectedModule {
  uint64_t index = 0;
  std::string type_key;            // "_lib" for the kernel library
  std::vector<uint64_t> children;  // import-tree children (legacy layout: none)
  uint64_t key_offset = 0;         // byte offset of the type key in the blob
  uint64_t payload_bytes = 0;
};

struct InspectedTensor {
  std::string name;
  std::vector<int64_t> shape;
  DLDataType dtype{kDLFloat, 32, 1};
  uint64_t bytes = 0;
  bool is_param = false;
};

struct InspectedGraph {
  uint64_t module_index = 0;
  std::string type_key;     // GraphExecutorFactory or GraphRuntimeFactory
  std::string module_name;  // "default"
  uint64_t graph_json_bytes = 0;
  uint64_t num_nodes = 0;
  uint64_t num_op_nodes = 0;
  uint64_t num_entries = 0;
  std::vector<InspectedTensor> inputs;  // every arg node, params marked
  std::vector<InspectedTensor> outputs;
  std::vector<InspectedTensor> params;  // real parameters (alignment pads excluded)
  uint64_t param_bytes = 0;
  uint64_t pad_count = 0;                   // __sorun_pad_* entries
  std::vector<std::string> unused_params;   // params that are no graph input (TVM ignores them)
  std::vector<std::string> kernels;         // distinct func_names of the operators (no __nop / __copy), sorted
  std::vector<std::string> kernel_callers;  // per kernel, the first node calling it ("node 3 'fc'")
  std::vector<int> device_types;            // device types named by device_index; empty = default device
  // How the planned devices were chosen: "one device per device type of the graph", or the default
  // device: the device type of the model's device modules when they all share one, else cpu:0.
  std::string plan_basis;
  std::vector<DeviceMemory> memory;  // per planned device
};

struct InspectedKernel {
  std::string name;
  std::vector<std::string> arg_types;
  std::vector<std::string> launch_param_tags;
};

struct InspectedDeviceModule {
  uint64_t module_index = 0;
  std::string type_key;  // cuda / opencl
  std::string fmt;       // ptx / cubin / fatbin / cl
  uint64_t code_bytes = 0;
  std::vector<InspectedKernel> kernels;
};

struct InspectedConstants {
  uint64_t module_index = 0;
  std::string type_key;  // const_loader / metadata
  std::vector<InspectedTensor> constants;
  std::vector<std::string> symbols;
};

struct ChecksumInfo {
  bool present = false;
  uint64_t blob_bytes = 0;  // what the record covers
  std::string hash;         // stored XXH64, hex
  bool valid = false;       // the record matches the blob in the file
  std::string error;        // why not, when present and not valid
};

// The integrity record of `file` (if any) checked against the `blob_bytes` blob bytes at `blob` (the
// length prefix on). Shared by graph and Relax reports.
void InspectChecksum(const ModelFile& file, const uint8_t* blob, uint64_t blob_bytes, ChecksumInfo* out);

struct InspectReport {
  std::string path;
  bool is_tar = false;
  uint64_t file_bytes = 0;
  std::string elf_type;  // "shared object", "relocatable object" (per member for .tar), ...
  std::string machine;   // "x86_64"
  ArtifactKind kind = ArtifactKind::kKernelLibrary;
  std::vector<std::string> ffi_symbols;
  std::vector<std::string> host_functions;

  // Only for kPackedModel and kRelaxExport:
  std::string blob_section;      // ELF section of the blob symbol
  std::string blob_member;       // .tar member holding it
  uint64_t blob_bytes = 0;       // prefix + payload
  bool has_import_tree = false;  // "import_tree" layout (v0.7+), else "legacy" (flat imports of the library)
  std::vector<InspectedModule> modules;
  std::optional<InspectedGraph> graph;  // the first graph-executor factory, normally module 0
  std::vector<InspectedDeviceModule> device_modules;
  std::vector<InspectedConstants> constant_modules;
  ChecksumInfo checksum;
  std::optional<RelaxInspection> relax;  // kRelaxExport only

  // "import_tree", "legacy" or "none" (no blob).
  std::string format() const;
};

struct InspectOptions {
  bool disassemble = false;  // Relax exports: fill relax->disassembly
};

StatusOr<InspectReport> InspectModelFile(const std::string& path, const InspectOptions& options = {});

// The kernels of a cuda / opencl payload at `reader` (consumed exactly), read in `grammar`.
Status InspectDeviceModule(size_t index, const std::string& type_key, BinaryReader& reader, PayloadGrammar grammar,
                           InspectedDeviceModule* out);

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_MODEL_INSPECTOR_H_
