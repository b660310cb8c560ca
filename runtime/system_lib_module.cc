#include "runtime/system_lib_module.h"

#include "runtime/c_runtime_api.h"
#include "runtime/context_slots.h"
#include "runtime/library_module.h"
#include "runtime/registry_keys.h"

namespace sorun {
namespace {

// The pointers set to the library module itself (and cleared when it goes), as for a dlopen'ed library:
// the legacy `__tvm_module_ctx` and tvm-ffi's `__tvm_ffi__library_ctx`, each under the prefix.
constexpr const char* kModuleContextSymbols[] = {keys::kSymbolModuleCtx, keys::kSymbolFfiLibraryCtx};

}  // namespace

ObjectPtr<SystemLibModuleNode> SystemLibModuleNode::Create(std::string prefix) {
  ObjectPtr<SystemLibModuleNode> node =
      ObjectPtr<SystemLibModuleNode>::FromRaw(new SystemLibModuleNode(std::move(prefix)));
  for (const ContextSlot& slot : ContextSlots()) {
    if (void** p = static_cast<void**>(node->FindSymbol(slot.name))) {
      *p = slot.function;
      ++node->context_slots_filled_;
    }
  }
  for (const char* name : kModuleContextSymbols) {
    if (void** ctx = static_cast<void**>(node->FindSymbol(name))) *ctx = static_cast<ModuleNode*>(node.get());
  }
  return node;
}

SystemLibModuleNode::~SystemLibModuleNode() {
  // The registered context outlives this module: never leave it pointing here.
  for (const char* name : kModuleContextSymbols) {
    if (void** ctx = static_cast<void**>(FindSymbol(name))) {
      if (*ctx == static_cast<ModuleNode*>(this)) *ctx = nullptr;
    }
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

StatusOr<FfiKernel> SystemLibModuleNode::GetFfiKernel(std::string_view name, const ObjectPtr<ModuleNode>& self) const {
  const std::string what = "kernel function '" + std::string(name) + "'";
  if (name.empty() || name[0] == '_') {
    return InvalidArgument(what + " is reserved by the tvm-ffi ABI (" + keys::kFfiKernelPrefix + std::string(name) +
                           " is a runtime symbol of the system library, never a kernel)");
  }
  const std::string prefixed = keys::kFfiKernelPrefix + prefix_ + std::string(name);
  const std::string plain = keys::kFfiKernelPrefix + std::string(name);
  void* address = FindSystemLibSymbol(prefixed);
  if (address == nullptr && !prefix_.empty()) address = FindSystemLibSymbol(plain);
  if (address == nullptr) {
    return NotFound(what + " is not registered with the system library (TVMFFIEnvModRegisterSystemLibSymbol: no " +
                    prefixed + (prefix_.empty() ? std::string() : " or " + plain) +
                    "; link the kernels' object of the model's system-lib build)");
  }
  return FfiKernel(std::string(name), reinterpret_cast<TVMFFISafeCallType>(address), self);
}

StatusOr<bool> SystemLibModuleNode::AttachImportsOnce(const std::vector<Module>& children) {
  std::lock_guard<std::mutex> lock(imports_mutex_);
  if (imports_attached_) return false;
  for (const Module& child : children) SORUN_RETURN_IF_ERROR(Import(child));
  imports_attached_ = true;
  return true;
}

}  // namespace sorun
