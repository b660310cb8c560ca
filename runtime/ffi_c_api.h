/*
 * The tvm-ffi C ABI (TVM 0.21+) as far as compiled kernels use it: the 16-byte TVMFFIAny value, the
 * type indices kernels pass and accept, the safe-call signature every exported kernel
 * (`__tvm_ffi_<name>`) has, and the C functions the runtime implements for them (docs/spec/RELAX_FORMAT.md
 * section 5). Layouts match tvm-ffi's c_api.h byte for byte (static_asserts in ffi_c_api.cc), so a
 * kernel library built by TVM 0.21 - 0.27 runs against these symbols with no libtvm_ffi present.
 *
 * sorun has no tvm-ffi object model: tensors cross as DLTensor* (kTVMFFIDLTensorPtr), which the
 * generated argument binders accept, and function handles given to host code are sorun
 * PackedFuncNode pointers, which only these functions read. Threads: every function is thread-safe;
 * errors are per thread (the same last-error slot as the legacy ABI, runtime/last_error.h).
 */
#ifndef SORUN_RUNTIME_FFI_C_API_H_
#define SORUN_RUNTIME_FFI_C_API_H_

#include <dlpack/dlpack.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Type indices of on-stack values (tvm-ffi's TVMFFITypeIndex, the POD range) and the object indices
 * the VM constant pool uses. */
typedef enum {
  kTVMFFINone = 0,
  kTVMFFIInt = 1,
  kTVMFFIBool = 2,
  kTVMFFIFloat = 3,
  kTVMFFIOpaquePtr = 4,
  kTVMFFIDataType = 5,
  kTVMFFIDevice = 6,
  kTVMFFIDLTensorPtr = 7,
  kTVMFFIRawStr = 8,
  kTVMFFIByteArrayPtr = 9,
  kTVMFFIObjectRValueRef = 10,
  kTVMFFISmallStr = 11,
  kTVMFFISmallBytes = 12,
  kTVMFFIStaticObjectBegin = 64,
} TVMFFITypeIndex;

typedef void* TVMFFIObjectHandle;

/* One value: type index, 4 bytes of padding (small-string length), 8 bytes of payload. */
typedef struct {
  int32_t type_index;
  union {
    uint32_t zero_padding;
    uint32_t small_str_len;
  };
  union {
    int64_t v_int64;
    double v_float64;
    void* v_ptr;
    const char* v_c_str;
    DLDataType v_dtype;
    DLDevice v_device;
    char v_bytes[8];
    uint64_t v_uint64;
  };
} TVMFFIAny;

/* A compiled kernel (`__tvm_ffi_<name>`) and any tvm-ffi function: 0 on success, -1 after raising an
 * error with TVMFFIErrorSetRaisedFromCStr(Parts). `self` is NULL for kernels. */
typedef int (*TVMFFISafeCallType)(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result);

#if defined(_WIN32)
#define SORUN_FFI_DLL __declspec(dllexport)
#else
#define SORUN_FFI_DLL __attribute__((visibility("default")))
#endif

/* Raise an error: "<kind>: <message>" becomes the calling thread's last error. */
SORUN_FFI_DLL void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message);
/* The same with the message given as `num_parts` pieces (NULL pieces skipped). */
SORUN_FFI_DLL void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** message_parts, int32_t num_parts);
/* `func_name` from the imports of the library module `library_ctx` (the value the runtime wrote to
 * the library's `__tvm_ffi__library_ctx`), else the global registry. *out is a borrowed handle that
 * lives as long as the library module. NotFound sets an error and returns -1. */
SORUN_FFI_DLL int TVMFFIEnvModLookupFromImports(TVMFFIObjectHandle library_ctx, const char* func_name,
                                                TVMFFIObjectHandle* out);
/* A system-lib build's global constructors (TVM 0.21+) register each kernel, context slot and the module
 * blob under its name (prefix included): sorun keeps them in the table TVMBackendRegisterSystemLibSymbol
 * fills (runtime/library_module.h), read by sorun::Model::LoadSystemLib. 0 on success; -1 for a NULL name.
 * A later registration of a name replaces the earlier one. Thread-safe. */
SORUN_FFI_DLL int TVMFFIEnvModRegisterSystemLibSymbol(const char* name, void* symbol);
/* Calls a handle from TVMFFIEnvModLookupFromImports. Arguments: None, Int, Bool, Float, OpaquePtr,
 * DataType, Device, DLTensorPtr, RawStr; the result is None, Int, Bool or Float. */
SORUN_FFI_DLL int TVMFFIFunctionCall(TVMFFIObjectHandle func, TVMFFIAny* args, int32_t num_args, TVMFFIAny* result);
/* Runs init_func(handle_addr) once per handle slot (under a process-wide lock) unless *handle_addr is
 * already set. Returns init_func's result. */
SORUN_FFI_DLL int TVMFFIHandleInitOnce(void** handle_addr, int (*init_func)(void** result));

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // SORUN_RUNTIME_FFI_C_API_H_
