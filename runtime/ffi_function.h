// Calls across the tvm-ffi ABI (runtime/ffi_c_api.h) in both directions:
//   - FfiKernel: a compiled kernel of a TVM 0.21+ library (`__tvm_ffi_<name>`, the safe-call
//     signature), called by the Relax VM with TVMFFIAny arguments (tensors as DLTensor*);
//   - CallPackedWithFfiArgs: host code of such a library calling a sorun PackedFunc (a device
//     kernel, `__tvm_set_device`) through TVMFFIFunctionCall.
// Kernel errors come back through the per-thread last error (TVMFFIErrorSetRaisedFromCStr*) and become
// Aborted Status values naming the kernel, as legacy kernels' do (runtime/last_error.h).
// An FfiKernel is immutable and callable from many threads at once (kernels are reentrant).
#ifndef SORUN_RUNTIME_FFI_FUNCTION_H_
#define SORUN_RUNTIME_FFI_FUNCTION_H_

#include <cstdint>
#include <string>

#include "base/object.h"
#include "base/status.h"
#include "runtime/ffi_c_api.h"
#include "runtime/packed_func.h"

namespace sorun {

// "<kind>: <part0><part1>..." (NULL parts skipped; kind "Error" when NULL; at most 64 KiB kept).
std::string FfiErrorMessage(const char* kind, const char* const* parts, int32_t num_parts);

// Type name of a tvm-ffi type index ("int", "DLTensor*", "object(70)").
std::string FfiTypeIndexName(int32_t type_index);

// Calls `f` with tvm-ffi arguments, converted to the legacy packed form (None, Int, Bool, Float,
// OpaquePtr, DataType, Device, DLTensorPtr, RawStr; anything else is InvalidArgument naming the
// argument). `result` (may be null) receives None, Int, Bool or Float; other return values are
// InvalidArgument.
Status CallPackedWithFfiArgs(const PackedFuncNode& f, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result);

// One compiled tvm-ffi kernel; `keep_alive` (the kernel library module) stays loaded while it lives.
class FfiKernel {
 public:
  FfiKernel() = default;
  FfiKernel(std::string name, TVMFFISafeCallType fn, ObjectPtr<Object> keep_alive)
      : name_(std::move(name)), fn_(fn), keep_alive_(std::move(keep_alive)) {}

  bool defined() const { return fn_ != nullptr; }
  const std::string& name() const { return name_; }
  TVMFFISafeCallType fn() const { return fn_; }
  // Runs the kernel; Aborted "function '<name>' failed (returned -1): <its message>" on failure.
  Status Call(const TVMFFIAny* args, int32_t num_args) const;

 private:
  std::string name_;
  TVMFFISafeCallType fn_ = nullptr;
  ObjectPtr<Object> keep_alive_;
};

// TVMFFIAny constructors (type index set, padding zero).
inline TVMFFIAny FfiNone() {
  TVMFFIAny a{};
  a.type_index = kTVMFFINone;
  return a;
}
inline TVMFFIAny FfiInt(int64_t v) {
  TVMFFIAny a{};
  a.type_index = kTVMFFIInt;
  a.v_int64 = v;
  return a;
}
inline TVMFFIAny FfiFloat(double v) {
  TVMFFIAny a{};
  a.type_index = kTVMFFIFloat;
  a.v_float64 = v;
  return a;
}
inline TVMFFIAny FfiDLTensor(DLTensor* t) {
  TVMFFIAny a{};
  a.type_index = kTVMFFIDLTensorPtr;
  a.v_ptr = t;
  return a;
}

}  // namespace sorun

#endif  // SORUN_RUNTIME_FFI_FUNCTION_H_
