// ExportLibrary (TVM's export_library): a module tree plus host code become ONE shared library
// whose exported symbol `__tvm_dev_mblob` holds the serialized tree (docs/spec/FORMAT.md sections 1-2).
//
// The host code comes from the tree's HostCodeModuleNodes (objects, archives, C/C++/asm sources) and
// is compiled and linked with the system compiler. The blob is embedded by one of two routes:
//  - kAssembly (default; TVM's PackImportsToLLVM equivalent): an assembler file `.incbin`s the blob
//    file into a 64-byte aligned read-only symbol. Cost is a file copy, whatever the blob size.
//  - kCSource (TVM's PackImportsToC): a C file with the blob as a byte array. Portable to any C
//    compiler but slow and memory-hungry for large blobs.
// An output path ending in ".tar" writes the objects and the blob object into a tar archive instead
// (linked when loaded, as TVM does). Writing is atomic (temporary file + rename). Thread-safe.
#ifndef SORUN_PACKER_EXPORTER_H_
#define SORUN_PACKER_EXPORTER_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "packer/host_code_module.h"
#include "runtime/module.h"

namespace sorun {

enum class BlobEmbedding {
  kAssembly,
  kCSource,
};

struct ExportOptions {
  BlobEmbedding embedding = BlobEmbedding::kAssembly;
  // Compiler drivers; empty = $CC / $CXX, else cc / c++.
  std::string cc;
  std::string cxx;
  // Write the sorun integrity record (__sorun_blob_checksum) next to the blob. TVM ignores it.
  bool write_checksum = true;
  // If non-empty, intermediate files are written (and kept) here instead of a temporary directory.
  std::string work_dir;
};

// What an export produced (for tools and tests).
struct ExportReport {
  uint64_t blob_bytes = 0;  // prefix + payload
  std::vector<std::string> type_keys;
  bool has_import_tree = false;
  std::vector<std::string> linked_files;
};

// Exports the tree under `root` to `output_path` (.so, or .tar). Fails if the tree cannot be
// serialized, a host file has an unknown kind, or the compiler fails (its output is in the message).
StatusOr<ExportReport> ExportLibrary(const Module& root, const std::string& output_path,
                                     const ExportOptions& options = {});

// The linking half of ExportLibrary: compiles/links `host` and, when `blob_payload` is given, a blob
// holding exactly those payload bytes (anything, e.g. a blob assembled by hand in a test).
StatusOr<ExportReport> LinkLibraryWithBlob(const std::string* blob_payload, const std::vector<HostCode>& host,
                                           const std::string& output_path, const ExportOptions& options = {});

// The blob file content for `payload`: 8-byte little-endian length + payload.
std::string MakeBlobBytes(const std::string& payload);

}  // namespace sorun

#endif  // SORUN_PACKER_EXPORTER_H_
