// InspectReport: what `sorun inspect` and `sorun verify` know about a model file after reading its
// bytes (inspect/model_inspector.h fills it; inspect/relax_inspector.h fills the Relax part): the
// ELF facts, the module tree, the graph with its memory plan, the device modules' kernels, constant
// modules, the integrity record, the device types the model needs, and for a Relax export its
// RelaxInspection. Plain values with no
// pointers into the file: a report outlives the file it was read from. Thread-compatible.
#ifndef SORUN_INSPECT_INSPECT_REPORT_H_
#define SORUN_INSPECT_INSPECT_REPORT_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/executor_types.h"
#include "relax/library_blob.h"
#include "relax/vm_disassembler.h"
#include "runtime/data_type.h"

namespace sorun {

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

// One function-table entry.
struct RelaxFunctionSummary {
  std::string name;
  std::string kind;  // "vm function", "packed function", "vmtir function"
  std::vector<std::string> params;
  int64_t registers = 0;
  int64_t start_instr = 0, end_instr = 0;  // vm functions
};

// One tensor constant: its bytes in the file and the alignment it has when mapped (a library is mapped
// at page-congruent addresses, so the file offset's alignment up to 4096 is the address's).
struct RelaxTensorConstant {
  uint64_t index = 0;  // c[index]
  DLDataType dtype{kDLFloat, 32, 1};
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
  uint64_t alignment = 0;
  bool aligned() const { return alignment >= 64; }  // else copied at load
};

// What `sorun inspect` says about the Relax executable of a file.
struct RelaxInspection {
  std::string symbol;  // __tvm_dev_mblob / __tvm_ffi_library_bin / __tvm_ffi__library_bin
  relax::BlobGeneration generation = relax::BlobGeneration::kFfiTreeFirst;
  std::string tvm_versions;  // "TVM 0.22+", ...
  std::string root_type_key;
  bool magic_v2 = false;
  std::string version;  // "0.14"
  uint64_t num_instructions = 0;
  std::vector<RelaxFunctionSummary> functions;
  std::vector<relax::VmInputInfo> inputs;  // main's
  std::vector<TensorInfo> outputs;         // main's return value flattened (relax::DescribeOutputs); may be empty
  DTypeCodes dtype_codes = DTypeCodes::kTvmLegacy;  // how the executable numbers dtypes (names them)
  std::string inputs_note;                          // why there are none (no vm function 'main'), else ""
  uint64_t num_constants = 0;                       // every kind
  std::vector<RelaxTensorConstant> tensors;
  uint64_t tensor_bytes = 0;
  std::vector<relax::CalleeInfo> callees;  // the function table, classified
  bool system_lib = false;
  std::vector<std::string> refusals;  // relax::RelaxExportRefusals; empty: runnable
  std::string disassembly;            // relax::Disassemble, only when asked for
};

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
  // The device types the model's kernels need, from the blob's module type keys by the runtime's rule
  // (DeviceTypesOfModules, runtime/device_module_kind.h; NewExecutor refuses other devices): {kDLCPU}
  // when it has no device module (and for a file without a blob).
  std::vector<DLDeviceType> devices_needed{kDLCPU};

  // "import_tree", "legacy" or "none" (no blob).
  std::string format() const;
  // devices_needed by name: "cpu", "cuda", "cuda, opencl" (`sorun verify`'s verdict).
  std::string DevicesNeededNames() const;
  // `sorun inspect`'s device line: "cpu (no device module)", "cuda (its kernels are in a CUDA module)".
  std::string DescribeDevicesNeeded() const;
};

}  // namespace sorun

#endif  // SORUN_INSPECT_INSPECT_REPORT_H_
