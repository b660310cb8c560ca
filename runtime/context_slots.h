// The context slots: pointer variables a TVM-built kernel library defines (weak, each named "__" + a C
// function of the runtime's C ABI, e.g. `__TVMFuncCall`) and calls the runtime through (TVM's `llvm`
// target). Loading a library stores each function's address into every slot the library defines
// (LibraryModuleNode::Open, runtime/library_module.h). This table is the one list of those names:
// docs/format.md lists the same, and the other slot-like symbols (`__tvm_module_ctx`,
// `__tvm_ffi__library_ctx`, set to the module itself) are keys in runtime/registry_keys.h.
// Immutable; any thread.
#ifndef SORUN_RUNTIME_CONTEXT_SLOTS_H_
#define SORUN_RUNTIME_CONTEXT_SLOTS_H_

#include <array>
#include <cstddef>

namespace sorun {

struct ContextSlot {
  const char* name;  // "__TVMFuncCall"
  void* function;    // &TVMFuncCall: the function of the name without the leading "__"
};

inline constexpr size_t kContextSlotCount = 11;

// Every slot, in TVM's order: the legacy C ABI's seven (runtime/c_runtime_api.h, TVM v0.8 - v0.20),
// then tvm-ffi's four (runtime/ffi_c_api.h, TVM 0.21+). Each is optional in a library.
const std::array<ContextSlot, kContextSlotCount>& ContextSlots();

}  // namespace sorun

#endif  // SORUN_RUNTIME_CONTEXT_SLOTS_H_
