// LibraryModuleNode: the kernel library (TVM's "DSO" / "library" module) — a shared library whose
// exported TVMBackendPackedCFunc symbols are the module's functions.
//
// Opening a library fills the __TVM* / __TVMFFI* context slots with this runtime's C API and points
// __tvm_module_ctx at the library module, so host code can call TVMBackendGetFuncFromEnv on it to
// reach the device modules it imports. There is at most one LibraryModuleNode per dlopen handle in
// the process (the context slot is a global of the library): opening the same file again returns
// the live node, and callers must check `reused` before attaching imports. Thread-safe after loading.
#ifndef SORUN_RUNTIME_LIBRARY_MODULE_H_
#define SORUN_RUNTIME_LIBRARY_MODULE_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/ffi_function.h"
#include "runtime/module.h"
#include "runtime/shared_library.h"

namespace sorun {

class LibraryModuleNode final : public ModuleNode {
 public:
  struct OpenResult {
    ObjectPtr<LibraryModuleNode> module;
    bool reused = false;  // true when the node already existed (its imports are already set)
  };
  // Opens `path` (or returns the live node for the same dlopen handle).
  static StatusOr<OpenResult> Open(const std::string& path);
  // The same for a library already opened (SharedLibrary::OpenDescriptor: a model from memory).
  static StatusOr<OpenResult> Open(ObjectPtr<SharedLibrary> library);
  ~LibraryModuleNode() override;

  const char* type_key() const override;
  const void* class_id() const override { return &kClassId; }
  static constexpr char kClassId = 0;
  // Any symbol of the library's scope (bare dlsym, plus the __tvm_main__ indirection): for the
  // runtime's own lookups by fixed names (_lookup_linked_param, __tvm_main__) and host code's
  // TVMBackendGetFuncFromEnv. Never for names read from a file: use GetKernelFunction.
  PackedFunc GetFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) override;
  // The kernel rule (runtime/registry_keys.h states it for every reader): `name` must be a symbol
  // defined by this library itself (not a dependency: its link map), of type STT_FUNC or
  // STT_GNU_IFUNC (an address without a covering dynamic symbol counts only inside an executable
  // segment of the library: an IFUNC's resolved code), global or weak, and not a reserved ABI name
  // (keys::IsReservedAbiSymbol). `__tvm_main__` resolves to the entry it names, which must pass the
  // rule. NotFound when no loaded file defines `name`; InvalidArgument saying why otherwise.
  StatusOr<PackedFunc> GetKernelFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) override;
  // The tvm-ffi kernel `name` (TVM 0.21+): the symbol `__tvm_ffi_<name>`, under the same kernel rule.
  // Names starting with '_' are reserved (`__tvm_ffi__library_bin`, ...). NotFound / InvalidArgument
  // as GetKernelFunction.
  StatusOr<FfiKernel> GetFfiKernel(std::string_view name, const ObjectPtr<ModuleNode>& self) const override;
  int property_mask() const override { return kModuleRunnable; }
  bool provides_kernels() const override { return true; }

  const ObjectPtr<SharedLibrary>& library() const { return library_; }
  // Address of a symbol of the library, or nullptr.
  void* FindSymbol(const char* name) const { return library_->FindSymbol(name); }
  // How many of the context slots (runtime/context_slots.h) the library defines (for tools and tests).
  int context_slots_filled() const { return context_slots_filled_; }

  // Attaches `children` as this library's imports the first time it is called for this node; later
  // calls (another load of the same file) keep the existing imports and return false. Serialised, so
  // concurrent loads of one file never observe a half-built import list.
  StatusOr<bool> AttachImportsOnce(const std::vector<Module>& children);

 private:
  explicit LibraryModuleNode(ObjectPtr<SharedLibrary> library);
  void InitContext();
  // The entry function named by an LLVM-style __tvm_main__ string (bounded by the symbol's size), or "".
  std::string MainTarget(const SharedLibrary::SymbolInfo& main) const;
  // The kernel rule for one symbol that is not __tvm_main__ (see GetKernelFunction).
  StatusOr<PackedFunc> CheckedKernel(const std::string& symbol, const ObjectPtr<ModuleNode>& self) const;
  // The address of `symbol` if it passes the kernel rule (minus the reserved-name check); `what` names
  // it in errors.
  StatusOr<void*> CheckedKernelAddress(const std::string& symbol, const std::string& what) const;

  ObjectPtr<SharedLibrary> library_;
  int context_slots_filled_ = 0;
  std::mutex imports_mutex_;
  bool imports_attached_ = false;
};

// TVM system-lib builds register symbols (`__tvm_dev_mblob`, their functions) at load time with
// TVMBackendRegisterSystemLibSymbol (runtime/c_runtime_api.h). These record and find them; a later
// registration of a name replaces the earlier one. Thread-safe.
void RegisterSystemLibSymbol(const std::string& name, void* ptr);
// The registered address, or null.
void* FindSystemLibSymbol(const std::string& name);
// How many registered names start with `prefix` ("" counts all).
size_t CountSystemLibSymbols(const std::string& prefix);
// Drops every registration whose address lies in [begin, end): called when a shared library that
// registered symbols (a system-lib build loaded as a .so) is unmapped.
void ForgetSystemLibSymbolsIn(uintptr_t begin, uintptr_t end);

}  // namespace sorun

#endif  // SORUN_RUNTIME_LIBRARY_MODULE_H_
