// The tvm-ffi C functions compiled kernels of TVM 0.21+ call (runtime/ffi_c_api.h). Like the legacy
// ones (c_backend_api.cc) each body runs inside GuardCBoundary: no C++ exception reaches generated
// code, errors go to the calling thread's last error.
#include "runtime/ffi_c_api.h"

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>

#include "runtime/ffi_function.h"
#include "runtime/last_error.h"
#include "runtime/library_module.h"
#include "runtime/module.h"
#include "runtime/packed_func.h"

// The layouts generated code was compiled against (tvm-ffi's c_api.h).
static_assert(sizeof(TVMFFIAny) == 16, "TVMFFIAny is 16 bytes");
static_assert(offsetof(TVMFFIAny, v_int64) == 8, "TVMFFIAny payload at byte 8");
static_assert(sizeof(DLDataType) == 4 && sizeof(DLDevice) == 8, "DLPack POD sizes");

using sorun::GuardCBoundary;
using sorun::StatusToReturnCode;

extern "C" {

void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message) {
  GuardCBoundary("TVMFFIErrorSetRaisedFromCStr", 0, [&]() -> int {
    const char* parts[] = {message};
    sorun::SetLastError(sorun::FfiErrorMessage(kind, parts, 1));
    return 0;
  });
}

void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** message_parts, int32_t num_parts) {
  GuardCBoundary("TVMFFIErrorSetRaisedFromCStrParts", 0, [&]() -> int {
    sorun::SetLastError(sorun::FfiErrorMessage(kind, message_parts, num_parts));
    return 0;
  });
}

int TVMFFIEnvModLookupFromImports(TVMFFIObjectHandle library_ctx, const char* func_name, TVMFFIObjectHandle* out) {
  return GuardCBoundary("TVMFFIEnvModLookupFromImports", -1, [&]() -> int {
    if (library_ctx == nullptr || func_name == nullptr || out == nullptr) {
      return StatusToReturnCode(
          sorun::InvalidArgument("TVMFFIEnvModLookupFromImports: null argument (is the library's "
                                 "__tvm_ffi__library_ctx set?)"));
    }
    // The module's cache owns the function for the module's lifetime: the handle is a weak reference,
    // as tvm-ffi documents.
    sorun::StatusOr<sorun::PackedFunc> f = static_cast<sorun::ModuleNode*>(library_ctx)->GetFuncFromEnv(func_name);
    if (!f.ok()) return StatusToReturnCode(f.status());
    *out = f->get();
    return 0;
  });
}

int TVMFFIEnvModRegisterSystemLibSymbol(const char* name, void* symbol) {
  return GuardCBoundary("TVMFFIEnvModRegisterSystemLibSymbol", -1, [&]() -> int {
    if (name == nullptr) {
      return StatusToReturnCode(sorun::InvalidArgument("TVMFFIEnvModRegisterSystemLibSymbol: null name"));
    }
    sorun::RegisterSystemLibSymbol(name, symbol);
    return 0;
  });
}

int TVMFFIFunctionCall(TVMFFIObjectHandle func, TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return GuardCBoundary("TVMFFIFunctionCall", -1, [&]() -> int {
    if (func == nullptr) return StatusToReturnCode(sorun::InvalidArgument("TVMFFIFunctionCall: null function handle"));
    return StatusToReturnCode(
        sorun::CallPackedWithFfiArgs(*static_cast<const sorun::PackedFuncNode*>(func), args, num_args, result));
  });
}

int TVMFFIHandleInitOnce(void** handle_addr, int (*init_func)(void** result)) {
  return GuardCBoundary("TVMFFIHandleInitOnce", -1, [&]() -> int {
    if (handle_addr == nullptr || init_func == nullptr) {
      return StatusToReturnCode(sorun::InvalidArgument("TVMFFIHandleInitOnce: null argument"));
    }
    // Generated code reads the slot without a lock after this returns; the lock orders the write.
    auto* slot = reinterpret_cast<std::atomic<void*>*>(handle_addr);
    if (slot->load(std::memory_order_acquire) != nullptr) return 0;
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    if (slot->load(std::memory_order_relaxed) != nullptr) return 0;
    void* result = nullptr;
    int rc = init_func(&result);
    if (rc != 0) return rc;
    slot->store(result, std::memory_order_release);
    return 0;
  });
}

}  // extern "C"
