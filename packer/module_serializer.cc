#include "packer/module_serializer.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "format/binary_writer.h"
#include "runtime/registry_keys.h"

namespace sorun {
namespace {

bool IsDso(const ModuleNode* m) { return (m->property_mask() & kModuleDsoExportable) != 0; }

// Groups in index order; a DSO group may hold several modules, every other group exactly one.
struct Indexing {
  std::vector<std::vector<const ModuleNode*>> groups;
  std::unordered_map<const ModuleNode*, size_t> index_of;
  std::vector<Module> dso_modules;
};

Indexing IndexModules(const Module& root) {
  Indexing ix;
  std::unordered_set<const ModuleNode*> visited{root.get()};
  std::vector<Module> stack{root};
  auto push_imports = [&](const Module& m) {
    for (const Module& child : m.imports()) {
      if (visited.insert(child.get()).second) stack.push_back(child);
    }
  };
  // Phase 0: number non-DSO modules; stop at DSO modules (the boundary).
  std::vector<Module> boundary;
  while (!stack.empty()) {
    Module m = stack.back();
    stack.pop_back();
    if (IsDso(m.get())) {
      boundary.push_back(m);
    } else {
      ix.index_of[m.get()] = ix.groups.size();
      ix.groups.push_back({m.get()});
      push_imports(m);
    }
  }
  if (boundary.empty()) return ix;
  // One slot for the merged DSO group: after all its parents, before all its children.
  const size_t dso_index = ix.groups.size();
  ix.groups.emplace_back();
  // Phase 1: expand from the DSO boundary.
  stack = std::move(boundary);
  while (!stack.empty()) {
    Module m = stack.back();
    stack.pop_back();
    if (IsDso(m.get())) {
      ix.groups[dso_index].push_back(m.get());
      ix.index_of[m.get()] = dso_index;
      ix.dso_modules.push_back(m);
    } else {
      ix.index_of[m.get()] = ix.groups.size();
      ix.groups.push_back({m.get()});
    }
    push_imports(m);
  }
  return ix;
}

}  // namespace

StatusOr<SerializedModuleTree> SerializeModuleTree(const Module& root) {
  if (!root.defined()) return InvalidArgument("cannot serialize a null module");
  Indexing ix = IndexModules(root);
  SerializedModuleTree out;
  out.dso_modules = ix.dso_modules;

  // CSR import tree.
  out.row_ptr.push_back(0);
  for (size_t parent = 0; parent < ix.groups.size(); ++parent) {
    std::vector<uint64_t> children;
    for (const ModuleNode* m : ix.groups[parent]) {
      for (const Module& child : m->imports()) {
        uint64_t c = ix.index_of.at(child.get());
        if (c != parent) children.push_back(c);
      }
    }
    std::sort(children.begin(), children.end());
    children.erase(std::unique(children.begin(), children.end()), children.end());
    if (!children.empty() && children[0] <= parent) {
      return FailedPrecondition(
          std::string("cannot export: several DSO-exportable modules cannot be merged into one library "
                      "without creating a cycle in the import tree (parent '") +
          ix.groups[parent][0]->type_key() + "', child '" + ix.groups[children[0]][0]->type_key() + "')");
    }
    out.child_indices.insert(out.child_indices.end(), children.begin(), children.end());
    out.row_ptr.push_back(out.child_indices.size());
  }

  out.has_import_tree = !(IsDso(root.get()) && root.imports().empty());
  BinaryWriter writer(/*origin=*/8);
  writer.WriteU64(out.has_import_tree ? ix.groups.size() + 1 : root.imports().size());
  for (const auto& group : ix.groups) {
    const ModuleNode* first = group[0];
    if (IsDso(first)) {
      if (out.has_import_tree) {
        writer.WriteString(keys::kTypeKeyLib);
        out.type_keys.push_back(keys::kTypeKeyLib);
      }
      continue;
    }
    const std::string key = first->type_key();
    if ((first->property_mask() & kModuleBinarySerializable) == 0) {
      return FailedPrecondition("cannot export: module '" + key + "' is not binary-serializable");
    }
    writer.WriteString(key);
    Status s = first->SaveToBinary(&writer);
    if (!s.ok()) return std::move(s).Annotate("serializing module '" + key + "'");
    out.type_keys.push_back(key);
  }
  if (out.has_import_tree) {
    writer.WriteString(keys::kTypeKeyImportTree);
    writer.WriteU64Vector(out.row_ptr);
    writer.WriteU64Vector(out.child_indices);
  } else {
    out.row_ptr.clear();
    out.child_indices.clear();
  }
  out.payload = writer.TakeBytes();
  return out;
}

}  // namespace sorun
