// SystemLibModuleNode: the kernel library of a TVM `system-lib` model, whose kernels and module blob
// are linked into the program itself and registered at startup by global constructors calling
// TVMBackendRegisterSystemLibSymbol (runtime/library_module.h records them). TVM's `runtime.SystemLib`
// (prefix): every lookup of `name` is a lookup of the registered `<prefix><name>`.
//
// Plays the part a LibraryModuleNode plays for a dlopen'ed model (type key "library"; the "_lib" entry
// of the blob): graph nodes and the Relax VM's function table name its kernels, and it fills the
// registered context slots (`__TVMBackendAllocWorkspace`, ..., `__tvm_module_ctx` and tvm-ffi's
// `__tvm_ffi__library_ctx`, as TVM's SystemLibrary does). The kernel rule for a system library: a
// registered name that is not a reserved ABI name (keys::IsReservedAbiSymbol); the program linked that
// code, so there is no file to check it against. Both generations register through the same table:
// TVM 0.8 - 0.20 with TVMBackendRegisterSystemLibSymbol, tvm-ffi builds (TVM 0.21+) with
// TVMFFIEnvModRegisterSystemLibSymbol.
//
// Ownership: created by loaders (serialization/system_lib_loader.h); owns nothing but its imports. The
// registered code and data live as long as the program. Thread-safe after loading.
#ifndef SORUN_RUNTIME_SYSTEM_LIB_MODULE_H_
#define SORUN_RUNTIME_SYSTEM_LIB_MODULE_H_

#include <mutex>
#include <string>
#include <vector>

#include "runtime/module.h"

namespace sorun {

class SystemLibModuleNode final : public ModuleNode {
 public:
  // A module over the symbols registered under `prefix`; writes the registered context slots and
  // `__tvm_module_ctx` (each must be registered as the address of a pointer variable, as TVM's codegen does).
  static ObjectPtr<SystemLibModuleNode> Create(std::string prefix);
  ~SystemLibModuleNode() override;

  const char* type_key() const override;
  const void* class_id() const override { return &kClassId; }
  static constexpr char kClassId = 0;
  // The registered `<prefix><name>` as a function, or a null PackedFunc. For the runtime's fixed names
  // only; names read from a file go through GetKernelFunction.
  PackedFunc GetFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) override;
  // The kernel rule above: NotFound when `<prefix><name>` is not registered; InvalidArgument for a
  // reserved ABI name.
  StatusOr<PackedFunc> GetKernelFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) override;
  // A tvm-ffi kernel: the registered `__tvm_ffi_<prefix><name>`, else `__tvm_ffi_<name>` (TVM 0.27's
  // SystemLibrary looks both up, in that order: its codegen registers a prefixed build's kernels as
  // `__tvm_ffi_<prefix><kernel>` and names them `<prefix><kernel>` in the executable). Names starting
  // with '_' are reserved (InvalidArgument); NotFound naming both symbols otherwise.
  StatusOr<FfiKernel> GetFfiKernel(std::string_view name, const ObjectPtr<ModuleNode>& self) const override;
  bool provides_kernels() const override { return true; }

  const std::string& prefix() const { return prefix_; }
  // The registered address of `<prefix><name>`, or nullptr.
  void* FindSymbol(const std::string& name) const;
  // How many context slots (runtime/context_slots.h) were registered and filled (for tests).
  int context_slots_filled() const { return context_slots_filled_; }
  // As LibraryModuleNode::AttachImportsOnce: the first call attaches `children`, later ones return false.
  StatusOr<bool> AttachImportsOnce(const std::vector<Module>& children);

 private:
  explicit SystemLibModuleNode(std::string prefix) : prefix_(std::move(prefix)) {}

  std::string prefix_;
  int context_slots_filled_ = 0;
  std::mutex imports_mutex_;
  bool imports_attached_ = false;
};

}  // namespace sorun

#endif  // SORUN_RUNTIME_SYSTEM_LIB_MODULE_H_
