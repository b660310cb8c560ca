// The module container of a Relax VM export (docs/spec/RELAX_FORMAT.md sections 2-3), in its three
// generations, told apart by the symbol that holds it:
//   __tvm_dev_mblob         TVM 0.16 - 0.20: the legacy layout (serialization/module_blob.h: u64 count,
//                           (type key, payload)*, "_import_tree" last), root "relax.Executable" (0.16 -
//                           0.19) or "relax.VMExecutable" (0.20); VM constants use the enum tags 0-5;
//   __tvm_ffi_library_bin   TVM 0.21: the same legacy layout; constants use tvm-ffi type indices;
//   __tvm_ffi__library_bin  TVM 0.22+: the import tree FIRST (indptr, child_indices), then per module a
//                           kind and a length-prefixed payload (none for "_lib").
// A Relax executable's payload is length-prefixed in every generation (u64 n + n bytes starting with
// the VM magic). Parsing borrows the caller's bytes (the result points into them), checks every
// count and length against the bytes left and the import tree (ValidateImportTree, one rule with the
// graph-executor blobs), and names the byte offset (from the start of the symbol, whose first 8 bytes
// are the length prefix) and the entry in each error. Pure functions; thread-safe.
#ifndef SORUN_RELAX_LIBRARY_BLOB_H_
#define SORUN_RELAX_LIBRARY_BLOB_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "runtime/registry_keys.h"
#include "serialization/module_blob.h"

namespace sorun {
namespace relax {

// The symbols of the three generations are keys::kSymbolDevMblob, keys::kSymbolFfiLibraryBin (0.21)
// and keys::kSymbolFfiLibraryBinV22 (runtime/registry_keys.h). The two executable type keys (there too):
inline constexpr const char* kTypeKeyRelaxExecutable = keys::kTypeKeyRelaxExecutable;      // TVM 0.16 - 0.19
inline constexpr const char* kTypeKeyRelaxVmExecutable = keys::kTypeKeyRelaxVmExecutable;  // TVM 0.20+

enum class BlobGeneration {
  kLegacyDevMblob,  // __tvm_dev_mblob, TVM 0.16 - 0.20
  kFfiLegacy021,    // __tvm_ffi_library_bin, TVM 0.21
  kFfiTreeFirst,    // __tvm_ffi__library_bin, TVM 0.22+
};

// The generation written under `symbol`; NotFound naming the three known symbols otherwise.
StatusOr<BlobGeneration> BlobGenerationForSymbol(std::string_view symbol);
const char* BlobSymbolName(BlobGeneration generation);
// True for "relax.Executable" and "relax.VMExecutable".
bool IsRelaxExecutableTypeKey(std::string_view type_key);
// True when the generation's VM constants are tagged with tvm-ffi type indices (0.21+), false for
// the enum tags 0-5 of TVM 0.16 - 0.20.
bool UsesFfiConstantTags(BlobGeneration generation);

// One module of the container, in container order.
struct LibraryBlobModule {
  std::string type_key;              // "relax.VMExecutable", "_lib", "cuda", ...
  uint64_t key_offset = 0;           // offset of the type key from the start of the symbol
  uint64_t payload_offset = 0;       // offset of the payload's first byte (after its length prefix)
  uint64_t payload_size = 0;         // 0 for "_lib"
  const uint8_t* payload = nullptr;  // borrowed; null for "_lib" and legacy payloads parsed by a handler
};

// A parsed container. Module 0 is the root when there is an import tree.
struct LibraryBlob {
  BlobGeneration generation = BlobGeneration::kFfiTreeFirst;
  uint64_t payload_size = 0;  // bytes after the 8-byte length prefix
  std::vector<LibraryBlobModule> modules;
  bool has_import_tree = false;
  std::vector<uint64_t> row_ptr;  // "indptr" in 0.22+
  std::vector<uint64_t> child_indices;
  int lib_index = -1;         // the "_lib" module, -1 if none
  int executable_index = -1;  // the first Relax executable module, -1 if none

  std::vector<uint64_t> Children(size_t i) const;
};

// Parses the container in the `symbol_size` bytes of `symbol` (the blob symbol's bytes from its length
// prefix on; the prefix may claim fewer bytes than the symbol holds, never more). `symbol_name` selects
// the generation. In the legacy layouts a payload carries no length unless it is a Relax executable:
// other modules (cuda, opencl, ...) are handed to `other_payloads`, which must consume exactly their
// payload; without one such a blob is Unimplemented, naming the module. DataLoss (offset + entry) on
// malformed bytes.
StatusOr<LibraryBlob> ParseLibraryBlob(const uint8_t* symbol, uint64_t symbol_size, std::string_view symbol_name,
                                       const BlobPayloadHandler& other_payloads = nullptr);

// The Relax executable that roots the container: module 0 of the import tree must be one. NotFound
// naming the root's type key otherwise (e.g. a graph-executor export).
StatusOr<const LibraryBlobModule*> RootExecutable(const LibraryBlob& blob);

}  // namespace relax
}  // namespace sorun

#endif  // SORUN_RELAX_LIBRARY_BLOB_H_
