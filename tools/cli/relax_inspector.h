// `sorun inspect` for Relax VM exports (TVM 0.16 - 0.27, docs/relax.md): finds the blob symbol of any
// of the three container generations in a ModelFile (no dlopen; a library's symbol bounded by its
// PT_LOAD segment, BoundSymbolBytes + ReadBlobPrefix, the rule of the graph blobs), parses it with
// relax::ParseLibraryBlob / ParseVmExecutable, and fills the report: the module tree and device
// modules (the InspectReport fields the graph path fills too) and a RelaxInspection (executable,
// functions, main's inputs, constants with their alignment, classified callees, the verdict of
// relax::CheckRelaxExportSupported with the kernel predicate from the ELF's exported functions).
// Called by InspectModelFile; tools/cli/relax_report.h renders the RelaxInspection for `sorun inspect`.
// Pure functions of the file's bytes; reentrant.
#ifndef SORUN_TOOLS_CLI_RELAX_INSPECTOR_H_
#define SORUN_TOOLS_CLI_RELAX_INSPECTOR_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "relax/library_blob.h"
#include "relax/vm_disassembler.h"

namespace sorun {
namespace cli {

class ModelFile;
struct InspectReport;

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

// The TVM versions writing `generation`'s container: "TVM 0.16 - 0.20", "TVM 0.21", "TVM 0.22+".
const char* RelaxGenerationVersions(relax::BlobGeneration generation);

// True when the file is a Relax export: it defines __tvm_ffi_library_bin / __tvm_ffi__library_bin, or
// its __tvm_dev_mblob's first module is a Relax executable (TVM 0.16 - 0.20).
bool IsRelaxExportFile(const ModelFile& file);

// Reads the Relax export in `file` into `report` (kind kRelaxExport, blob fields, modules,
// device_modules, relax) and returns true; false (report untouched) when the container is well formed
// but its root is not a Relax executable (a tvm-ffi build of something else). DataLoss naming the
// symbol and byte offset for malformed bytes.
StatusOr<bool> InspectRelaxExport(const ModelFile& file, bool disassemble, InspectReport* report);

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_RELAX_INSPECTOR_H_
