// PackModel: the exporter as a library call (`sorun pack`). Builds the module tree
//   GraphExecutorFactory (graph JSON + params)  ->  host code ("_lib")  ->  device modules
// (without a graph: host code -> device modules, TVM's plain `lib.export_library`), and writes it with
// ExportLibrary as one .so (or .tar).
//
// Inputs:
//  - host code: .o, .a, C/C++/assembly sources (compiled with -I for every --include-dir, then -I for
//    a temporary directory holding the embedded ABI headers runtime/c_runtime_api.h and dlpack/dlpack.h),
//    and `.tar` libraries of a TVM three-file deployment (their objects are extracted). An object that
//    already defines __tvm_dev_mblob is refused (it would clash with the new blob).
//  - `.so` libraries: the blob is serialized and handed to PackFromSharedLibrary, which adds it to the
//    linked library with the ELF blob injector (packer/elf_blob_injector.h).
//  - a kernel library (`.so`, or `.tar` with TVM's devc.o) that already carries a blob of device
//    modules -- TVM's lib.get_lib().export_library() of an OpenCL/CUDA build, the library of its
//    three-file deployment -- keeps those modules: they are imported by the host code of the new tree
//    and the old blob is replaced (.so) or its object left out (.tar). A blob holding anything else
//    (a GraphExecutorFactory: a deploy library) is refused.
//  - device code: PTX / cubin / fatbin files (fmt from the extension) and OpenCL .cl sources, each with
//    its kernel description file (fmap.h). CUDA modules come from CreateCudaModule, OpenCL ones from
//    MakeOpenclPayloadModule: neither needs a GPU driver or an OpenCL platform.
//  - graph JSON (GraphSpec::Parse) and params file (ReadParamsDict): every param must be a graph input
//    of the same shape and dtype.
// After linking a .so, every kernel the graph calls must be exported by it.
// Errors name the file and the cause. Thread-compatible (runs the system compiler).
#ifndef SORUN_PACKER_MODEL_PACKER_H_
#define SORUN_PACKER_MODEL_PACKER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "packer/exporter.h"
#include "packer/relax_pack.h"

namespace sorun {

struct DeviceCodeFile {
  std::string type_key;   // "cuda" or "opencl"
  std::string code_path;  // .ptx / .cubin / .fatbin, or .cl
  std::string fmap_path;  // kernel description JSON
};

struct PackRequest {
  std::string output_path;
  std::string graph_path;   // empty: a kernel library (no factory)
  std::string params_path;  // optional, only with graph_path
  std::vector<std::string> lib_files;
  std::vector<std::string> include_dirs;
  std::vector<std::string> compile_flags;
  std::vector<std::string> link_flags;
  std::vector<DeviceCodeFile> device_code;
  bool tar = false;      // write a .tar even when output_path does not end in .tar
  bool c_route = false;  // BlobEmbedding::kCSource
  bool checksum = true;  // write __sorun_blob_checksum
  std::string module_name = "default";
};

struct PackResult {
  std::string output_path;
  uint64_t output_bytes = 0;
  bool is_tar = false;
  std::vector<std::string> type_keys;  // blob entries; empty when no blob was needed
  uint64_t blob_bytes = 0;
  std::string checksum_hash;  // XXH64 hex, when a record was written
  uint64_t param_count = 0;
  uint64_t param_bytes = 0;
};

// The kind of a --lib file from its extension: "object", "archive", "source", "tar", "shared", or ""
// (unknown).
std::string HostFileKind(const std::string& path);
// The CUDA code format of a device-code file from its extension: "ptx", "cubin", "fatbin", or "".
std::string CudaFormatFromExtension(const std::string& path);

StatusOr<PackResult> PackModel(const PackRequest& request);

// `--lib X.so`: writes `output_so`, a copy of `input_so` carrying `blob_bytes_with_prefix` as
// __tvm_dev_mblob (and `checksum_record`, when non-empty, as __sorun_blob_checksum), with
// packer/elf_blob_injector.h's InjectBlobIntoSharedLibrary. `replace_existing_blob`: the input
// has a blob (its device modules were carried over) that the new one replaces.
Status PackFromSharedLibrary(const std::string& input_so, const std::string& blob_bytes_with_prefix,
                             const std::string& checksum_record, const std::string& output_so,
                             bool replace_existing_blob = false);

// `sorun pack IN.so -o OUT.so` for a Relax VM export (TVM 0.16 - 0.27): its constants realigned and the
// checksum record added (packer/relax_pack.h), the output path checked first (CheckOutputFile); legacy
// containers' cuda/opencl payloads are walked with the device payload codec.
StatusOr<relax::RelaxPackReport> PackRelaxExport(const std::string& input_so, const std::string& output_so,
                                                 bool checksum);
// True when `path` is a Relax VM export (IsRelaxExport with the device payload codec).
StatusOr<bool> IsRelaxExportFile(const std::string& path);

}  // namespace sorun

#endif  // SORUN_PACKER_MODEL_PACKER_H_
