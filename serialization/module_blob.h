// The module blob (`__tvm_dev_mblob`, docs/spec/FORMAT.md section 2): its 8-byte length prefix, the entry
// stream (u64 count; per entry a type key then that module's inline payload; "_lib" marks the kernel
// library; "_import_tree" carries the CSR import tree) and the validation of the tree.
//
// Payloads carry no length, so the walk needs a handler that knows each type key's grammar: the
// loader runs the registered blob loaders (LoadBlobModules), `sorun inspect` passes a handler that
// only parses. Apart from LoadBlobModules everything here is a pure function of the bytes.
// Thread-compatible.
#ifndef SORUN_SERIALIZATION_MODULE_BLOB_H_
#define SORUN_SERIALIZATION_MODULE_BLOB_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "format/binary_reader.h"
#include "runtime/module.h"
#include "runtime/registry_keys.h"
#include "serialization/blob_extent.h"

namespace sorun {

// One module of the blob, in blob order.
struct BlobModuleEntry {
  std::string type_key;         // "_lib" for the kernel library
  uint64_t key_offset = 0;      // absolute offset of the type key
  uint64_t payload_offset = 0;  // absolute offset of the payload
  uint64_t payload_size = 0;    // bytes the payload took (0 for "_lib")
};

// The parsed structure of a blob.
struct BlobLayout {
  uint64_t payload_size = 0;  // bytes after the 8-byte length prefix
  std::vector<BlobModuleEntry> modules;
  bool has_import_tree = false;
  std::vector<uint64_t> row_ptr;
  std::vector<uint64_t> child_indices;
  int lib_index = -1;  // index of the "_lib" entry, -1 if none

  // Children of module `i` per the import tree (empty without a tree).
  std::vector<uint64_t> Children(size_t i) const;
};

// Consumes exactly the payload of module `index` with `type_key` from `reader`. Not called for "_lib".
using BlobPayloadHandler = std::function<Status(size_t index, const std::string& type_key, BinaryReader& reader)>;

// Checks the 8-byte little-endian length prefix at the start of a blob symbol of `symbol_size` bytes
// (0 = size unknown, trust the prefix) and returns the payload size. DataLoss when the prefix is
// truncated or claims more bytes than the symbol holds.
StatusOr<uint64_t> ReadBlobPrefix(const uint8_t* blob, uint64_t symbol_size, const std::string& section);

// The blob symbol located and bounded: BoundSymbolBytes (serialization/blob_extent.h) then
// ReadBlobPrefix over the bounded bytes.
struct BlobExtent {
  SymbolExtent symbol;        // symbol.data is the length prefix; symbol.bytes may be read
  uint64_t payload_size = 0;  // bytes after the prefix (8 + payload_size <= symbol.bytes)
};

// Where the blob symbol `symbol` (`__tvm_dev_mblob`, or a tvm-ffi `__tvm_ffi_*library_bin`; st_value
// `address`, st_size `size`, 0 = unknown) is and how long it is, given the PT_LOAD segments of its
// library. The one implementation used by the loader (facts of the loaded library) and the inspector
// (facts of the file). DataLoss naming the symbol and the segment.
StatusOr<BlobExtent> LocateBlob(uint64_t address, uint64_t size, const std::vector<LoadSegment>& segments,
                                const char* symbol = keys::kSymbolDevMblob);

// Walks the payload in `reader` (positioned after the prefix, covering exactly the payload): reads
// the count and every entry, calls `handler` for each non-"_lib" module, checks the handler consumed
// its payload, rejects a second "_lib", a repeated "_import_tree", "_lib" without an import tree and
// trailing bytes, then validates the import tree (ValidateImportTree) and what the kernel library
// imports (ValidateKernelLibraryImports).
Status ParseModuleBlob(BinaryReader& reader, const BlobPayloadHandler& handler, BlobLayout* layout);

// ParseModuleBlob with every payload handed to the loader registered for its type key
// (`runtime.module.loadbinary_<key>`, RunBlobLoader). Returns one module per entry in blob order; the
// "_lib" entry (layout->lib_index) is left undefined for the caller to fill with the kernel library.
StatusOr<std::vector<Module>> LoadBlobModules(BinaryReader& reader, BlobLayout* layout);

// Attaches the imports `layout` describes to `modules` (one per entry; the "_lib" entry, if any, must be
// `lib`, the kernel library: a LibraryModuleNode, or a SystemLibModuleNode for a system-lib model) and
// returns the root: module 0 with an import tree; without one (pre-v0.7 exporters), `lib` importing every
// module in blob order. The kernel library's own imports are attached once per loaded library
// (AttachImportsOnce: a second load of the same file keeps the first tree). The one rebuild used by every
// blob generation (serialization/loader.cc, system_lib_loader.cc, relax/).
StatusOr<Module> AttachImportTree(const std::vector<Module>& modules, const BlobLayout& layout, const Module& lib);

// row_ptr has one more entry than there are modules, starts at 0, never decreases and ends at
// child_indices.size(); children are in range, not the parent itself, not repeated in a row; the
// tree has no cycle and reaches every module from module 0. Errors name the offending index.
Status ValidateImportTree(const BlobLayout& layout);

// The tree rule for the kernel library: no graph executor module (keys::IsGraphExecutorTypeKey:
// GraphExecutorFactory, GraphRuntimeFactory, GraphExecutor) may be imported, directly or not, by
// "_lib" — nor appear in a blob without an import tree, where the kernel library imports every
// module. DataLoss naming the module's index and type key. Needs a valid tree (ValidateImportTree);
// called by ParseModuleBlob, so the loader, `inspect` and `verify` apply the same rule.
Status ValidateKernelLibraryImports(const BlobLayout& layout);

}  // namespace sorun

#endif  // SORUN_SERIALIZATION_MODULE_BLOB_H_
