#include "runtime/module.h"

#include "runtime/function_registry.h"

namespace sorun {
namespace {

bool Reaches(const ModuleNode* from, const ModuleNode* target) {
  if (from == target) return true;
  for (const Module& m : from->imports()) {
    if (Reaches(m.get(), target)) return true;
  }
  return false;
}

PackedFunc FindInTree(const ObjectPtr<ModuleNode>& node, std::string_view name) {
  PackedFunc f = node->GetFunction(name, node);
  if (f.defined()) return f;
  for (const Module& m : node->imports()) {
    f = FindInTree(m.node(), name);
    if (f.defined()) return f;
  }
  return PackedFunc();
}

}  // namespace

Status ModuleNode::SaveToBinary(BinaryWriter* writer) const {
  return Unimplemented(std::string("module of type '") + type_key() + "' cannot be serialized");
}

Status ModuleNode::Import(Module child) {
  if (!child.defined()) return InvalidArgument("cannot import a null module");
  if (Reaches(child.get(), this)) {
    return InvalidArgument(std::string("importing '") + child.type_key() + "' into '" + type_key() +
                           "' would create an import cycle");
  }
  imports_.push_back(std::move(child));
  return Status::Ok();
}

StatusOr<PackedFunc> ModuleNode::GetFuncFromEnv(std::string_view name) {
  std::lock_guard<std::mutex> lock(env_mutex_);
  auto it = env_cache_.find(std::string(name));
  if (it != env_cache_.end()) return it->second;
  PackedFunc f;
  for (const Module& m : imports_) {
    f = FindInTree(m.node(), name);
    if (f.defined()) break;
  }
  if (!f.defined()) f = FunctionRegistry::Global().Get(name);
  if (!f.defined()) {
    return NotFound("cannot find function '" + std::string(name) +
                    "' in the imported modules or the global registry");
  }
  env_cache_.emplace(std::string(name), f);
  return f;
}

PackedFunc Module::GetFunction(std::string_view name, bool query_imports) const {
  if (!node_) return PackedFunc();
  if (!query_imports) return node_->GetFunction(name, node_);
  return FindInTree(node_, name);
}

}  // namespace sorun
