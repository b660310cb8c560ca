#include "serialization/module_blob.h"

#include <set>

#include "runtime/blob_loader.h"
#include "runtime/library_module.h"
#include "runtime/registry_keys.h"
#include "runtime/system_lib_module.h"

namespace sorun {

std::vector<uint64_t> BlobLayout::Children(size_t i) const {
  if (!has_import_tree || i + 1 >= row_ptr.size()) return {};
  return std::vector<uint64_t>(child_indices.begin() + static_cast<std::ptrdiff_t>(row_ptr[i]),
                               child_indices.begin() + static_cast<std::ptrdiff_t>(row_ptr[i + 1]));
}

StatusOr<uint64_t> ReadBlobPrefix(const uint8_t* blob, uint64_t symbol_size, const std::string& section) {
  if (symbol_size != 0 && symbol_size < 8) {
    return DataLoss(section + ": the symbol holds " + std::to_string(symbol_size) +
                    " bytes, fewer than the 8-byte length prefix");
  }
  uint64_t nbytes = 0;
  for (int i = 0; i < 8; ++i) nbytes |= static_cast<uint64_t>(blob[i]) << (8 * i);
  if (symbol_size != 0 && nbytes > symbol_size - 8) {
    return DataLoss(section + " byte 0: length prefix claims " + std::to_string(nbytes) +
                    " payload bytes but the symbol holds only " + std::to_string(symbol_size - 8));
  }
  return nbytes;
}

StatusOr<BlobExtent> LocateBlob(uint64_t address, uint64_t size, const std::vector<LoadSegment>& segments,
                                const char* symbol) {
  BlobExtent out;
  SORUN_ASSIGN_OR_RETURN(out.symbol, BoundSymbolBytes(symbol, address, size, segments));
  const std::string label =
      std::string(symbol) + (out.symbol.sized ? std::string()
                                              : " (no st_size: bounded by the end of PT_LOAD segment " +
                                                    std::to_string(out.symbol.segment) + ")");
  SORUN_ASSIGN_OR_RETURN(out.payload_size, ReadBlobPrefix(out.symbol.data, out.symbol.bytes, label));
  return out;
}

Status ParseModuleBlob(BinaryReader& reader, const BlobPayloadHandler& handler, BlobLayout* layout) {
  *layout = BlobLayout();
  layout->payload_size = reader.remaining();
  uint64_t count_at = reader.offset();
  uint64_t count = 0;
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadU64(&count), "entry count");
  if (count > reader.remaining() / 8) {
    return reader.ErrorAt(count_at, "entry count " + std::to_string(count) + " is impossible with " +
                                        std::to_string(reader.remaining()) + " bytes left");
  }
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t key_at = reader.offset();
    std::string key;
    SORUN_RETURN_IF_ERROR_CTX(reader.ReadString(&key, "type key"), "entry " + std::to_string(i));
    if (key == keys::kTypeKeyImportTree) {
      if (layout->has_import_tree) return reader.ErrorAt(key_at, "second _import_tree entry");
      layout->has_import_tree = true;
      SORUN_RETURN_IF_ERROR_CTX(reader.ReadU64Vector(&layout->row_ptr, "row_ptr"), "_import_tree");
      SORUN_RETURN_IF_ERROR_CTX(reader.ReadU64Vector(&layout->child_indices, "child_indices"), "_import_tree");
      continue;
    }
    BlobModuleEntry entry;
    entry.type_key = key;
    entry.key_offset = key_at;
    entry.payload_offset = reader.offset();
    size_t index = layout->modules.size();
    if (key == keys::kTypeKeyLib) {
      if (layout->lib_index >= 0) {
        return reader.ErrorAt(key_at, "multiple DSO modules (_lib entries " + std::to_string(layout->lib_index) +
                                          " and " + std::to_string(index) +
                                          "): the blob was written by a pre-v0.8 exporter");
      }
      layout->lib_index = static_cast<int>(index);
    } else {
      if (key.empty()) return reader.ErrorAt(key_at, "entry " + std::to_string(i) + " has an empty type key");
      size_t before = reader.position();
      Status s = handler(index, key, reader);
      if (!s.ok()) {
        return std::move(s).Annotate("entry " + std::to_string(i) + " ('" + key + "', type key at byte " +
                                     std::to_string(key_at) + ")");
      }
      if (reader.position() < before) {
        return Internal("payload handler for '" + key + "' moved the reader backwards");
      }
      entry.payload_size = reader.position() - before;
    }
    layout->modules.push_back(std::move(entry));
  }
  if (!reader.at_end()) {
    return reader.Error(std::to_string(reader.remaining()) + " trailing bytes after the " + std::to_string(count) +
                        " entries");
  }
  if (!layout->has_import_tree && layout->lib_index >= 0) {
    return DataLoss("blob has a _lib entry but no _import_tree: cannot place the kernel library");
  }
  if (layout->has_import_tree) SORUN_RETURN_IF_ERROR_CTX(ValidateImportTree(*layout), "_import_tree");
  SORUN_RETURN_IF_ERROR(ValidateKernelLibraryImports(*layout));
  return Status::Ok();
}

Status ValidateKernelLibraryImports(const BlobLayout& layout) {
  const size_t n = layout.modules.size();
  if (!layout.has_import_tree) {
    for (size_t i = 0; i < n; ++i) {
      if (keys::IsGraphExecutorTypeKey(layout.modules[i].type_key)) {
        return DataLoss("module " + std::to_string(i) + " ('" + layout.modules[i].type_key +
                        "') in a blob without _import_tree, where the kernel library imports every module: a "
                        "graph executor module cannot be imported by the kernel library");
      }
    }
    return Status::Ok();
  }
  if (layout.lib_index < 0) return Status::Ok();
  const size_t lib = static_cast<size_t>(layout.lib_index);
  std::vector<bool> seen(n, false);
  std::vector<size_t> stack{lib};
  seen[lib] = true;
  while (!stack.empty()) {
    const size_t m = stack.back();
    stack.pop_back();
    for (uint64_t c : layout.Children(m)) {
      if (c >= n || seen[c]) continue;
      seen[c] = true;
      if (keys::IsGraphExecutorTypeKey(layout.modules[c].type_key)) {
        return DataLoss("_import_tree: module " + std::to_string(c) + " ('" + layout.modules[c].type_key +
                        "') is imported below the kernel library (_lib, module " + std::to_string(lib) +
                        "): a graph executor module has no kernels and cannot be a dependency of the kernel "
                        "library");
      }
      stack.push_back(static_cast<size_t>(c));
    }
  }
  return Status::Ok();
}

Status ValidateImportTree(const BlobLayout& layout) {
  const size_t n = layout.modules.size();
  const auto& row_ptr = layout.row_ptr;
  const auto& child = layout.child_indices;
  if (n == 0) return DataLoss("import tree present but the blob holds no modules");
  if (row_ptr.size() != n + 1) {
    return DataLoss("row_ptr has " + std::to_string(row_ptr.size()) + " entries, expected " + std::to_string(n + 1) +
                    " (modules + 1)");
  }
  if (row_ptr[0] != 0) return DataLoss("row_ptr[0] is " + std::to_string(row_ptr[0]) + ", expected 0");
  for (size_t i = 0; i < n; ++i) {
    if (row_ptr[i + 1] < row_ptr[i]) {
      return DataLoss("row_ptr is not monotonic: row_ptr[" + std::to_string(i + 1) +
                      "] = " + std::to_string(row_ptr[i + 1]) + " < row_ptr[" + std::to_string(i) +
                      "] = " + std::to_string(row_ptr[i]));
    }
  }
  if (row_ptr[n] != child.size()) {
    return DataLoss("row_ptr ends at " + std::to_string(row_ptr[n]) + " but there are " + std::to_string(child.size()) +
                    " child indices");
  }
  for (size_t i = 0; i < n; ++i) {
    std::set<uint64_t> seen;
    for (uint64_t j = row_ptr[i]; j < row_ptr[i + 1]; ++j) {
      uint64_t c = child[j];
      if (c >= n) {
        return DataLoss("module " + std::to_string(i) + " imports module " + std::to_string(c) + ", out of range (" +
                        std::to_string(n) + " modules)");
      }
      if (c == i) return DataLoss("module " + std::to_string(i) + " imports itself");
      if (!seen.insert(c).second) {
        return DataLoss("module " + std::to_string(i) + " imports module " + std::to_string(c) + " twice");
      }
    }
  }
  // Cycle check (iterative DFS with colours) and reachability from module 0.
  std::vector<int> colour(n, 0);                   // 0 new, 1 on stack, 2 done
  std::vector<std::pair<size_t, uint64_t>> stack;  // (node, next child position)
  stack.emplace_back(0, row_ptr[0]);
  colour[0] = 1;
  while (!stack.empty()) {
    auto& [node, pos] = stack.back();
    if (pos == row_ptr[node + 1]) {
      colour[node] = 2;
      stack.pop_back();
      continue;
    }
    size_t c = static_cast<size_t>(child[pos++]);
    if (colour[c] == 1) {
      return DataLoss("import cycle: module " + std::to_string(node) + " imports its ancestor module " +
                      std::to_string(c));
    }
    if (colour[c] == 0) {
      colour[c] = 1;
      stack.emplace_back(c, row_ptr[c]);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (colour[i] == 0) {
      // Could still hide a cycle among unreachable modules; reachability is the error reported.
      return DataLoss("module " + std::to_string(i) + " ('" + layout.modules[i].type_key +
                      "') is not reachable from the root module 0");
    }
  }
  return Status::Ok();
}

StatusOr<Module> AttachImportTree(const std::vector<Module>& modules, const BlobLayout& layout, const Module& lib) {
  auto* library = ModuleNodeAs<LibraryModuleNode>(lib);
  auto* system_lib = ModuleNodeAs<SystemLibModuleNode>(lib);
  if (library == nullptr && system_lib == nullptr) return Internal("AttachImportTree: no kernel library module");
  if (modules.size() != layout.modules.size()) return Internal("AttachImportTree: one module per blob entry expected");
  // The kernel library's imports first: it may be shared with a concurrent load of the same file, and
  // attaching under its lock (once per library) makes its import list final before any Import below
  // walks it (the cycle check reads a child's imports). A validated tree cannot fail those Imports.
  std::vector<Module> lib_children;
  if (!layout.has_import_tree) {
    lib_children = modules;  // legacy layout: the library imports everything in blob order
  } else if (layout.lib_index >= 0) {
    for (uint64_t c : layout.Children(static_cast<size_t>(layout.lib_index))) lib_children.push_back(modules[c]);
  }
  if (!lib_children.empty() || layout.lib_index >= 0 || !layout.has_import_tree) {
    SORUN_RETURN_IF_ERROR(
        (library != nullptr ? library->AttachImportsOnce(lib_children) : system_lib->AttachImportsOnce(lib_children))
            .status());
  }
  if (!layout.has_import_tree) return lib;
  for (size_t i = 0; i < modules.size(); ++i) {
    if (static_cast<int>(i) == layout.lib_index) continue;
    for (uint64_t c : layout.Children(i)) SORUN_RETURN_IF_ERROR(modules[i].Import(modules[c]));
  }
  return modules[0];
}

StatusOr<std::vector<Module>> LoadBlobModules(BinaryReader& reader, BlobLayout* layout) {
  std::vector<Module> modules;
  SORUN_RETURN_IF_ERROR(ParseModuleBlob(
      reader,
      [&](size_t index, const std::string& type_key, BinaryReader& r) -> Status {
        SORUN_ASSIGN_OR_RETURN(Module m, RunBlobLoader(type_key, r));
        modules.resize(index + 1);
        modules[index] = std::move(m);
        return Status::Ok();
      },
      layout));
  modules.resize(layout->modules.size());
  return modules;
}

}  // namespace sorun
