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

// Depth-first GetKernelFunction over the tree; remembers the first refusal in `refusal`.
PackedFunc FindKernelInTree(const ObjectPtr<ModuleNode>& node, std::string_view name, Status* refusal) {
  StatusOr<PackedFunc> f = node->GetKernelFunction(name, node);
  if (f.ok() && f->defined()) return *f;
  if (refusal->ok()) {
    if (!f.ok() && f.status().code() != StatusCode::kNotFound) {
      *refusal = f.status();
    } else if (!node->provides_kernels() && node->GetFunction(name, node).defined()) {
      *refusal = InvalidArgument("kernel function '" + std::string(name) + "' is provided by a " + node->type_key() +
                                 " module, which has no kernels");
    }
  }
  for (const Module& m : node->imports()) {
    PackedFunc k = FindKernelInTree(m.node(), name, refusal);
    if (k.defined()) return k;
  }
  return PackedFunc();
}

}  // namespace

StatusOr<PackedFunc> ModuleNode::GetKernelFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) {
  if (provides_kernels()) {
    PackedFunc f = GetFunction(name, self);
    if (f.defined()) return f;
  }
  return NotFound("kernel function '" + std::string(name) + "' is not in module '" + type_key() + "'");
}

StatusOr<FfiKernel> ModuleNode::GetFfiKernel(std::string_view name, const ObjectPtr<ModuleNode>&) const {
  return InvalidArgument("kernel function '" + std::string(name) + "': module '" + type_key() +
                         "' is not a kernel library (tvm-ffi kernels come from the export's _lib)");
}

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
    return NotFound("cannot find function '" + std::string(name) + "' in the imported modules or the global registry");
  }
  env_cache_.emplace(std::string(name), f);
  return f;
}

PackedFunc Module::GetFunction(std::string_view name, bool query_imports) const {
  if (!node_) return PackedFunc();
  if (!query_imports) return node_->GetFunction(name, node_);
  return FindInTree(node_, name);
}

StatusOr<PackedFunc> Module::GetKernel(std::string_view name) const {
  if (!node_) return InvalidArgument("kernel function '" + std::string(name) + "': no kernel library module");
  Status refusal;
  PackedFunc f = FindKernelInTree(node_, name, &refusal);
  if (f.defined()) return f;
  if (!refusal.ok()) return refusal;
  return NotFound("kernel function '" + std::string(name) + "' is not in the kernel library or its imports");
}

}  // namespace sorun
