#include "relax/library_blob.h"

#include <utility>

#include "format/binary_reader.h"

namespace sorun {
namespace relax {
namespace {

// A Relax executable's payload: u64 length + bytes, bounded by the reader.
Status ReadLengthPrefixedPayload(BinaryReader& reader, LibraryBlobModule* module) {
  uint64_t length_at = reader.offset();
  uint64_t length = 0;
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadU64(&length), "payload length");
  if (length > reader.remaining()) {
    return reader.ErrorAt(length_at, "payload length " + std::to_string(length) + " runs past the end of the blob (" +
                                         std::to_string(reader.remaining()) + " bytes left)");
  }
  module->payload_offset = reader.offset();
  module->payload_size = length;
  return reader.ReadBytes(static_cast<size_t>(length), &module->payload, "payload");
}

std::string EntryLabel(size_t index, const std::string& key, uint64_t key_offset) {
  return "module " + std::to_string(index) + " ('" + key + "', type key at byte " + std::to_string(key_offset) + ")";
}

// TVM 0.22+: indptr, child_indices, then n_modules x (kind, [payload]).
Status ParseTreeFirst(BinaryReader& reader, LibraryBlob* blob) {
  uint64_t indptr_at = reader.offset();
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadU64Vector(&blob->row_ptr, "indptr"), "import tree");
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadU64Vector(&blob->child_indices, "child_indices"), "import tree");
  if (blob->row_ptr.empty()) return reader.ErrorAt(indptr_at, "import tree: indptr is empty (needs n_modules + 1)");
  blob->has_import_tree = true;
  const uint64_t n_modules = blob->row_ptr.size() - 1;
  for (uint64_t i = 0; i < n_modules; ++i) {
    LibraryBlobModule module;
    module.key_offset = reader.offset();
    SORUN_RETURN_IF_ERROR_CTX(reader.ReadString(&module.type_key, "kind"), "module " + std::to_string(i));
    if (module.type_key.empty())
      return reader.ErrorAt(module.key_offset, "module " + std::to_string(i) + " has an empty kind");
    const std::string label = EntryLabel(i, module.type_key, module.key_offset);
    if (module.type_key == keys::kTypeKeyLib) {
      if (blob->lib_index >= 0) {
        return reader.ErrorAt(module.key_offset, label + ": second _lib module (the first is module " +
                                                     std::to_string(blob->lib_index) + ")");
      }
      blob->lib_index = static_cast<int>(i);
      module.payload_offset = reader.offset();
    } else {
      SORUN_RETURN_IF_ERROR_CTX(ReadLengthPrefixedPayload(reader, &module), label);
    }
    blob->modules.push_back(std::move(module));
  }
  if (!reader.at_end()) {
    return reader.Error(std::to_string(reader.remaining()) + " trailing bytes after the " + std::to_string(n_modules) +
                        " modules");
  }
  return Status::Ok();
}

// TVM 0.16 - 0.21: the legacy entry stream, walked by ParseModuleBlob (one implementation of it).
Status ParseLegacy(BinaryReader& reader, const BlobPayloadHandler& other_payloads, LibraryBlob* blob) {
  std::vector<LibraryBlobModule> parsed;
  BlobLayout layout;
  SORUN_RETURN_IF_ERROR(ParseModuleBlob(
      reader,
      [&](size_t index, const std::string& type_key, BinaryReader& r) -> Status {
        parsed.resize(index + 1);
        if (IsRelaxExecutableTypeKey(type_key)) return ReadLengthPrefixedPayload(r, &parsed[index]);
        if (!other_payloads) {
          return Unimplemented("the legacy layout gives a '" + type_key +
                               "' payload no length and no parser for it was supplied");
        }
        return other_payloads(index, type_key, r);
      },
      &layout));
  parsed.resize(layout.modules.size());
  for (size_t i = 0; i < layout.modules.size(); ++i) {
    LibraryBlobModule& m = parsed[i];
    m.type_key = layout.modules[i].type_key;
    m.key_offset = layout.modules[i].key_offset;
    if (m.payload == nullptr) {  // "_lib" or a handler-parsed payload
      m.payload_offset = layout.modules[i].payload_offset;
      m.payload_size = layout.modules[i].payload_size;
    }
  }
  blob->modules = std::move(parsed);
  blob->has_import_tree = layout.has_import_tree;
  blob->row_ptr = std::move(layout.row_ptr);
  blob->child_indices = std::move(layout.child_indices);
  blob->lib_index = layout.lib_index;
  return Status::Ok();
}

// The BlobLayout view of a parsed container, for the shared import-tree rules.
BlobLayout ToBlobLayout(const LibraryBlob& blob) {
  BlobLayout layout;
  layout.payload_size = blob.payload_size;
  for (const LibraryBlobModule& m : blob.modules) {
    BlobModuleEntry entry;
    entry.type_key = m.type_key;
    entry.key_offset = m.key_offset;
    entry.payload_offset = m.payload_offset;
    entry.payload_size = m.payload_size;
    layout.modules.push_back(std::move(entry));
  }
  layout.has_import_tree = blob.has_import_tree;
  layout.row_ptr = blob.row_ptr;
  layout.child_indices = blob.child_indices;
  layout.lib_index = blob.lib_index;
  return layout;
}

}  // namespace

StatusOr<BlobGeneration> BlobGenerationForSymbol(std::string_view symbol) {
  if (symbol == keys::kSymbolDevMblob) return BlobGeneration::kLegacyDevMblob;
  if (symbol == keys::kSymbolFfiLibraryBin) return BlobGeneration::kFfiLegacy021;
  if (symbol == keys::kSymbolFfiLibraryBinV22) return BlobGeneration::kFfiTreeFirst;
  return NotFound("'" + std::string(symbol) + "' is not a TVM module blob symbol (expected " + keys::kSymbolDevMblob +
                  ", " + keys::kSymbolFfiLibraryBin + " or " + keys::kSymbolFfiLibraryBinV22 + ")");
}

const char* BlobSymbolName(BlobGeneration generation) {
  switch (generation) {
    case BlobGeneration::kLegacyDevMblob: return keys::kSymbolDevMblob;
    case BlobGeneration::kFfiLegacy021: return keys::kSymbolFfiLibraryBin;
    case BlobGeneration::kFfiTreeFirst: return keys::kSymbolFfiLibraryBinV22;
  }
  return "?";
}

bool IsRelaxExecutableTypeKey(std::string_view type_key) {
  return type_key == kTypeKeyRelaxExecutable || type_key == kTypeKeyRelaxVmExecutable;
}

bool UsesFfiConstantTags(BlobGeneration generation) { return generation != BlobGeneration::kLegacyDevMblob; }

std::vector<uint64_t> LibraryBlob::Children(size_t i) const {
  if (!has_import_tree || i + 1 >= row_ptr.size() || row_ptr[i + 1] > child_indices.size() ||
      row_ptr[i] > row_ptr[i + 1]) {
    return {};
  }
  return std::vector<uint64_t>(child_indices.begin() + static_cast<std::ptrdiff_t>(row_ptr[i]),
                               child_indices.begin() + static_cast<std::ptrdiff_t>(row_ptr[i + 1]));
}

StatusOr<LibraryBlob> ParseLibraryBlob(const uint8_t* symbol, uint64_t symbol_size, std::string_view symbol_name,
                                       const BlobPayloadHandler& other_payloads) {
  LibraryBlob blob;
  SORUN_ASSIGN_OR_RETURN(blob.generation, BlobGenerationForSymbol(symbol_name));
  const std::string section(symbol_name);
  if (symbol_size < 8) {
    return DataLoss(section + ": the symbol holds " + std::to_string(symbol_size) +
                    " bytes, fewer than the 8-byte length prefix");
  }
  SORUN_ASSIGN_OR_RETURN(blob.payload_size, ReadBlobPrefix(symbol, symbol_size, section));
  BinaryReader reader(symbol + 8, static_cast<size_t>(blob.payload_size), section, 8);
  if (blob.generation == BlobGeneration::kFfiTreeFirst) {
    SORUN_RETURN_IF_ERROR(ParseTreeFirst(reader, &blob));
    const BlobLayout layout = ToBlobLayout(blob);
    SORUN_RETURN_IF_ERROR_CTX(ValidateImportTree(layout), section + ": import tree");
    SORUN_RETURN_IF_ERROR_CTX(ValidateKernelLibraryImports(layout), section);
  } else {
    SORUN_RETURN_IF_ERROR(ParseLegacy(reader, other_payloads, &blob));
  }
  for (size_t i = 0; i < blob.modules.size(); ++i) {
    if (IsRelaxExecutableTypeKey(blob.modules[i].type_key)) {
      blob.executable_index = static_cast<int>(i);
      break;
    }
  }
  return blob;
}

StatusOr<const LibraryBlobModule*> RootExecutable(const LibraryBlob& blob) {
  if (blob.modules.empty()) return NotFound(std::string(BlobSymbolName(blob.generation)) + " holds no modules");
  size_t root = 0;
  if (!blob.has_import_tree) {
    if (blob.modules.size() != 1) {
      return NotFound(std::string(BlobSymbolName(blob.generation)) + " has " + std::to_string(blob.modules.size()) +
                      " modules and no import tree: no root module");
    }
  }
  const LibraryBlobModule& m = blob.modules[root];
  if (!IsRelaxExecutableTypeKey(m.type_key)) {
    return NotFound(std::string(BlobSymbolName(blob.generation)) + ": the root module 0 is '" + m.type_key +
                    "', not a Relax VM executable (relax.VMExecutable / relax.Executable)");
  }
  return &m;
}

}  // namespace relax
}  // namespace sorun
