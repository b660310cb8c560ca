#include "runtime/system_lib_module.h"

#include "runtime/c_runtime_api.h"
#include "runtime/context_slots.h"
#include "runtime/library_module.h"
#include "runtime/registry_keys.h"

namespace sorun {

ObjectPtr<SystemLibModuleNode> SystemLibModuleNode::Create(std::string prefix) {
  ObjectPtr<SystemLibModuleNode> node =
      ObjectPtr<SystemLibModuleNode>::FromRaw(new SystemLibModuleNode(std::move(prefix)));
  for (const ContextSlot& slot : ContextSlots()) {
    if (void** p = static_cast<void**>(node->FindSymbol(slot.name))) {
      *p = slot.function;
      ++node->context_slots_filled_;
    }
  }
  if (void** ctx = static_cast<void**>(node->FindSymbol(keys::kSymbolModuleCtx))) {
    *ctx = static_cast<ModuleNode*>(node.get());
  }
  return node;
}

SystemLibModuleNode::~SystemLibModuleNode() {
  // The registered context outlives this module: never leave it pointing here.
  if (void** ctx = static_cast<void**>(FindSymbol(keys::kSymbolModuleCtx))) {
    if (*ctx == static_cast<ModuleNode*>(this)) *ctx = nullptr;
  }
}

const char* SystemLibModuleNode::type_key() const { return keys::kTypeKeyLibrary; }

void* SystemLibModuleNode::FindSymbol(const std::string& name) const { return FindSystemLibSymbol(prefix_ + name); }

PackedFunc SystemLibModuleNode::GetFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) {
  std::string symbol(name);
  void* addr = FindSymbol(symbol);
  if (addr == nullptr) return PackedFunc();
  return PackedFunc::FromCFunction(std::move(symbol), reinterpret_cast<TVMBackendPackedCFunc>(addr), self);
}

StatusOr<PackedFunc> SystemLibModuleNode::GetKernelFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) {
  std::string symbol(name);
  const std::string what = "kernel function '" + symbol + "'";
  if (keys::IsReservedAbiSymbol(symbol)) {
    return InvalidArgument(what +
                           " is reserved by the TVM ABI (a runtime symbol of the system library, never a kernel)");
  }
  void* addr = FindSymbol(symbol);
  if (addr == nullptr) {
    return NotFound(what + " is not registered with the system library (TVMBackendRegisterSystemLibSymbol" +
                    (prefix_.empty() ? std::string() : ", prefix '" + prefix_ + "'") + ")");
  }
  return PackedFunc::FromCFunction(std::move(symbol), reinterpret_cast<TVMBackendPackedCFunc>(addr), self);
}

StatusOr<bool> SystemLibModuleNode::AttachImportsOnce(const std::vector<Module>& children) {
  std::lock_guard<std::mutex> lock(imports_mutex_);
  if (imports_attached_) return false;
  for (const Module& child : children) SORUN_RETURN_IF_ERROR(Import(child));
  imports_attached_ = true;
  return true;
}

}  // namespace sorun
