// BlobAssembly: the GNU assembler source that defines a blob symbol from a file (the exporter's default
// route, packer/exporter.h, and `sorun compile`'s export hook, python/pack_binding.h): the symbol 64-byte
// aligned in a read-only section, plus sorun's checksum record. Pure functions; thread-safe.
#ifndef SORUN_PACKER_BLOB_ASSEMBLY_H_
#define SORUN_PACKER_BLOB_ASSEMBLY_H_

#include <cstdint>
#include <string>

#include "runtime/registry_keys.h"

namespace sorun {

// Blobs above this size go to a large-data section on x86-64 so >2 GiB images still link.
inline constexpr uint64_t kLargeBlobSectionThreshold = 1ull << 30;

// What BlobAssembly defines.
struct BlobAssemblyOptions {
  std::string symbol = keys::kSymbolDevMblob;  // a Relax export: the symbol TVM's exporter names
#if defined(__x86_64__)
  bool x86_64 = true;  // the object is for x86-64: a blob over 1 GiB goes to .lrodata (large data)
#else
  bool x86_64 = false;
#endif
};

// The assembly route's source: a 64-byte aligned global object `options.symbol` that `.incbin`s the
// `blob_bytes` bytes of the file at `blob_path` (length prefix + payload), plus the 32-byte checksum
// record `__sorun_blob_checksum` when `checksum_bytes` is not empty. Plain GNU as directives, for any ELF
// target (`sorun compile` assembles it with a cross compiler too).
std::string BlobAssembly(const std::string& blob_path, uint64_t blob_bytes, const std::string& checksum_bytes,
                         const BlobAssemblyOptions& options);

}  // namespace sorun

#endif  // SORUN_PACKER_BLOB_ASSEMBLY_H_
