// PackRelaxLibrary: `sorun pack IN.so -o OUT.so` for a Relax VM export (TVM 0.16 - 0.27, issue 17
// item 5). Reads the blob symbol of IN.so (whichever of __tvm_dev_mblob, __tvm_ffi_library_bin,
// __tvm_ffi__library_bin it defines), realigns the root executable's constants
// (packer/relax_realign.h), splices the new executable payload into the container in the SAME
// generation (every other byte of the container is kept: the length prefixes are the only sizes a
// container stores), and writes OUT.so with the ELF blob injector (packer/elf_blob_injector.h): the
// blob symbol is pointed at the new bytes, which start 64-byte aligned in a new PT_LOAD whose file
// offsets are congruent to its addresses modulo the page size, so every tensor constant is 64-byte
// aligned both in the file and once loaded; plus the `__sorun_blob_checksum` record over the new blob
// symbol (8 + payload bytes). The old blob bytes stay in the file, unreferenced (the injector keeps
// every existing byte at its offset), so the file grows by about one blob.
//
// Errors name the file: NotFound / InvalidArgument for a library that is not a Relax export (no blob
// symbol, or a root module that is not a Relax executable), DataLoss for a malformed container or
// executable (the relax/ parsers' messages), Unimplemented for compiled-mode executables and legacy
// containers with device modules when no `device_payloads` parser is given. Thread-compatible.
#ifndef SORUN_PACKER_RELAX_PACK_H_
#define SORUN_PACKER_RELAX_PACK_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "packer/relax_realign.h"
#include "relax/library_blob.h"
#include "serialization/module_blob.h"

namespace sorun {
namespace relax {

// The realigned container of one blob symbol.
struct RealignedBlob {
  std::string blob;  // the new symbol bytes: 8-byte length prefix + container
  BlobGeneration generation = BlobGeneration::kFfiTreeFirst;
  uint64_t executable_payload_offset = 0;  // from the symbol's start (same before and after)
  RealignReport report;
};

// Realigns the executable in `symbol_size` bytes of blob symbol `symbol_name` (its container as the
// relax/library_blob.h parser reads it; `device_payloads` walks legacy cuda/opencl payloads).
StatusOr<RealignedBlob> RealignLibraryBlob(const uint8_t* symbol, uint64_t symbol_size, std::string_view symbol_name,
                                           const BlobPayloadHandler& device_payloads = nullptr);

struct RelaxPackOptions {
  bool checksum = true;                // write __sorun_blob_checksum
  BlobPayloadHandler device_payloads;  // for legacy containers with cuda/opencl modules
};

struct RelaxPackReport {
  std::string blob_symbol;
  BlobGeneration generation = BlobGeneration::kFfiTreeFirst;
  uint64_t old_blob_bytes = 0;
  uint64_t new_blob_bytes = 0;
  uint64_t blob_file_offset = 0;  // of the new blob symbol in OUT.so
  uint64_t blob_address = 0;
  std::string checksum_record;  // empty with checksum = false
  uint64_t output_bytes = 0;
  RealignReport realign;
};

// True when the ELF file at `path` defines a blob symbol whose container's root is a Relax executable,
// false when it defines none or its root is something else (a graph-executor factory); errors when the
// file is not ELF or its container is malformed.
StatusOr<bool> IsRelaxExport(const std::string& path, const BlobPayloadHandler& device_payloads = nullptr);

StatusOr<RelaxPackReport> PackRelaxLibrary(const std::string& input_so, const std::string& output_so,
                                           const RelaxPackOptions& options = {});

}  // namespace relax
}  // namespace sorun

#endif  // SORUN_PACKER_RELAX_PACK_H_
