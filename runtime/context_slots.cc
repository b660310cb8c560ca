#include "runtime/context_slots.h"

#include "runtime/c_runtime_api.h"
#include "runtime/ffi_c_api.h"

namespace sorun {

const std::array<ContextSlot, kContextSlotCount>& ContextSlots() {
  static const std::array<ContextSlot, kContextSlotCount> kSlots = {{
      {"__TVMFuncCall", reinterpret_cast<void*>(&TVMFuncCall)},
      {"__TVMAPISetLastError", reinterpret_cast<void*>(&TVMAPISetLastError)},
      {"__TVMBackendGetFuncFromEnv", reinterpret_cast<void*>(&TVMBackendGetFuncFromEnv)},
      {"__TVMBackendAllocWorkspace", reinterpret_cast<void*>(&TVMBackendAllocWorkspace)},
      {"__TVMBackendFreeWorkspace", reinterpret_cast<void*>(&TVMBackendFreeWorkspace)},
      {"__TVMBackendParallelLaunch", reinterpret_cast<void*>(&TVMBackendParallelLaunch)},
      {"__TVMBackendParallelBarrier", reinterpret_cast<void*>(&TVMBackendParallelBarrier)},
      // tvm-ffi builds (TVM 0.21+): host code calling device kernels, and raising errors.
      {"__TVMFFIFunctionCall", reinterpret_cast<void*>(&TVMFFIFunctionCall)},
      {"__TVMFFIErrorSetRaisedFromCStr", reinterpret_cast<void*>(&TVMFFIErrorSetRaisedFromCStr)},
      {"__TVMFFIEnvModLookupFromImports", reinterpret_cast<void*>(&TVMFFIEnvModLookupFromImports)},
      {"__TVMFFIHandleInitOnce", reinterpret_cast<void*>(&TVMFFIHandleInitOnce)},
  }};
  return kSlots;
}

}  // namespace sorun
