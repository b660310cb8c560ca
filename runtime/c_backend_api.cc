// The C functions compiled kernels and C clients call (runtime/c_runtime_api.h). Each converts
// between the C ABI (return code + last error) and sorun's Status-returning C++ API; none throws or
// aborts: every body runs inside GuardCBoundary (runtime/packed_func.h), which turns a C++ exception
// (std::bad_alloc, one thrown by a C++ packed function) into -1 / NULL and TVMGetLastError().
#include <iterator>
#include <mutex>
#include <string>
#include <unordered_map>

#include "runtime/c_runtime_api.h"
#include "runtime/data_type.h"
#include "runtime/device_api.h"
#include "runtime/function_registry.h"
#include "runtime/last_error.h"
#include "runtime/library_module.h"
#include "runtime/module.h"
#include "runtime/packed_func.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"
#include "runtime/workspace_pool.h"

using sorun::ModuleNode;
using sorun::PackedArgs;
using sorun::PackedFuncNode;
using sorun::Status;
using sorun::StatusToReturnCode;
using sorun::Value;

extern "C" {

int TVMFuncCall(TVMFunctionHandle func, TVMValue* arg_values, int* type_codes, int num_args, TVMValue* ret_val,
                int* ret_type_code) {
  return sorun::GuardCBoundary("TVMFuncCall", -1, [&]() -> int {
    if (func == nullptr) return StatusToReturnCode(sorun::InvalidArgument("TVMFuncCall: null function handle"));
    if (num_args < 0 || (num_args > 0 && (arg_values == nullptr || type_codes == nullptr))) {
      return StatusToReturnCode(sorun::InvalidArgument("TVMFuncCall: bad argument arrays"));
    }
    // Strings returned across the C boundary stay valid until the next call on this thread.
    thread_local Value ret;
    ret = Value();
    Status status = static_cast<PackedFuncNode*>(func)->Call(PackedArgs(arg_values, type_codes, num_args), &ret);
    if (!status.ok()) return StatusToReturnCode(status);
    if (ret_val && ret_type_code) {
      ret.ExportRaw(ret_val, ret_type_code);
    }
    return 0;
  });
}

int TVMFuncFree(TVMFunctionHandle func) {
  return sorun::GuardCBoundary("TVMFuncFree", -1, [&]() -> int {
    if (func) static_cast<PackedFuncNode*>(func)->DecRef();
    return 0;
  });
}

int TVMFuncGetGlobal(const char* name, TVMFunctionHandle* out) {
  return sorun::GuardCBoundary("TVMFuncGetGlobal", -1, [&]() -> int {
    if (name == nullptr || out == nullptr) {
      return StatusToReturnCode(sorun::InvalidArgument("TVMFuncGetGlobal: null argument"));
    }
    sorun::PackedFunc f = sorun::FunctionRegistry::Global().Get(name);
    if (f.defined()) {
      f.get()->IncRef();  // the caller owns one reference (TVMFuncFree)
      *out = f.get();
    } else {
      *out = nullptr;
    }
    return 0;
  });
}

int TVMModFree(TVMModuleHandle mod) {
  return sorun::GuardCBoundary("TVMModFree", -1, [&]() -> int {
    if (mod) static_cast<ModuleNode*>(mod)->DecRef();
    return 0;
  });
}

int TVMArrayFree(TVMArrayHandle handle) {
  return sorun::GuardCBoundary("TVMArrayFree", -1, [&]() -> int {
    if (handle) sorun::TensorNode::FromDLTensor(handle)->DecRef();
    return 0;
  });
}

void TVMAPISetLastError(const char* msg) {
  sorun::GuardCBoundary("TVMAPISetLastError", 0, [&]() -> int {
    sorun::SetLastError(msg ? msg : "");
    return 0;
  });
}

const char* TVMGetLastError(void) { return sorun::GetLastErrorMessage().c_str(); }

int TVMBackendGetFuncFromEnv(void* mod_node, const char* func_name, TVMFunctionHandle* out) {
  return sorun::GuardCBoundary("TVMBackendGetFuncFromEnv", -1, [&]() -> int {
    if (func_name == nullptr || out == nullptr) {
      return StatusToReturnCode(sorun::InvalidArgument("TVMBackendGetFuncFromEnv: null argument"));
    }
    // `*out` is written once, with the final handle, and only on success: TVM's generated host code
    // caches handles in an unsynchronized global that other threads may be reading, so an interim
    // null here could make a thread that already saw the handle call through null.
    if (mod_node == nullptr) {
      // A library loaded without a module context: only the global registry can answer. The registry
      // keeps the function alive.
      sorun::PackedFunc f = sorun::FunctionRegistry::Global().Get(func_name);
      if (!f.defined()) {
        *out = nullptr;
        return StatusToReturnCode(sorun::NotFound(std::string("cannot find function '") + func_name +
                                                  "' in the global registry (no module context)"));
      }
      *out = f.get();
      return 0;
    }
    auto f = static_cast<ModuleNode*>(mod_node)->GetFuncFromEnv(func_name);
    if (!f.ok()) {
      *out = nullptr;
      return StatusToReturnCode(f.status());
    }
    *out = f->get();  // borrowed: cached by the module for its lifetime
    return 0;
  });
}

void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes, int dtype_code_hint,
                               int dtype_bits_hint) {
  return sorun::GuardCBoundary("TVMBackendAllocWorkspace", static_cast<void*>(nullptr), [&]() -> void* {
    if (device_type == kDLCPU) {
      void* ptr = sorun::WorkspacePool::ThreadLocal().Alloc(static_cast<size_t>(nbytes));
      if (!ptr) sorun::SetLastError("TVMBackendAllocWorkspace: out of memory for " + std::to_string(nbytes) + " bytes");
      return ptr;
    }
    auto api = sorun::GetDeviceApi(device_type);
    if (!api.ok()) {
      sorun::SetLastError(api.status().message());
      return nullptr;
    }
    auto device = sorun::MakeDevice(device_type, device_id);
    if (!device.ok()) {
      sorun::SetLastError(device.status().message());
      return nullptr;
    }
    auto ptr = (*api)->AllocWorkspace(*device, static_cast<size_t>(nbytes));
    if (!ptr.ok()) {
      sorun::SetLastError(ptr.status().message());
      return nullptr;
    }
    return *ptr;
  });
}

int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr) {
  return sorun::GuardCBoundary("TVMBackendFreeWorkspace", -1, [&]() -> int {
    if (device_type == kDLCPU) {
      if (sorun::WorkspacePool::ThreadLocal().Free(ptr)) return 0;
      return StatusToReturnCode(
          sorun::InvalidArgument("TVMBackendFreeWorkspace: pointer was not allocated by this thread's workspace pool"));
    }
    auto api = sorun::GetDeviceApi(device_type);
    if (!api.ok()) return StatusToReturnCode(api.status());
    auto device = sorun::MakeDevice(device_type, device_id);
    if (!device.ok()) return StatusToReturnCode(device.status());
    return StatusToReturnCode((*api)->FreeWorkspace(*device, ptr));
  });
}

int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata, int num_task) {
  return sorun::GuardCBoundary("TVMBackendParallelLaunch", -1, [&]() -> int {
    // The running executor's own pool (ThreadPool::Scope), else the process-wide one.
    return sorun::ThreadPool::Current().Launch(flambda, cdata, num_task);
  });
}

int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv) {
  return sorun::GuardCBoundary("TVMBackendParallelBarrier", -1,
                               [&]() -> int { return sorun::ThreadPool::Barrier(task_id, penv); });
}

int TVMBackendRunOnce(void** handle, int (*f)(void*), void* cdata, int nbytes) {
  return sorun::GuardCBoundary("TVMBackendRunOnce", -1, [&]() -> int {
    static std::recursive_mutex* mutex = new std::recursive_mutex();
    if (handle == nullptr || f == nullptr) {
      return StatusToReturnCode(sorun::InvalidArgument("TVMBackendRunOnce: null argument"));
    }
    std::lock_guard<std::recursive_mutex> lock(*mutex);
    if (*handle == nullptr) {
      *handle = reinterpret_cast<void*>(1);
      int rc = f(cdata);
      if (rc != 0) {
        *handle = nullptr;  // allow a retry after a failure
        return -1;
      }
    }
    return 0;
  });
}

int TVMBackendRegisterSystemLibSymbol(const char* name, void* ptr) {
  return sorun::GuardCBoundary("TVMBackendRegisterSystemLibSymbol", -1, [&]() -> int {
    if (name == nullptr) {
      return StatusToReturnCode(sorun::InvalidArgument("TVMBackendRegisterSystemLibSymbol: null name"));
    }
    sorun::RegisterSystemLibSymbol(name, ptr);
    return 0;
  });
}

}  // extern "C"

namespace sorun {
namespace {
struct SystemLibSymbols {
  std::mutex mutex;
  std::unordered_map<std::string, void*> table;
};
SystemLibSymbols& SystemLib() {
  static SystemLibSymbols* symbols = new SystemLibSymbols();  // never destroyed: libraries may register late
  return *symbols;
}
}  // namespace

void RegisterSystemLibSymbol(const std::string& name, void* ptr) {
  std::lock_guard<std::mutex> lock(SystemLib().mutex);
  SystemLib().table[name] = ptr;
}

void* FindSystemLibSymbol(const std::string& name) {
  std::lock_guard<std::mutex> lock(SystemLib().mutex);
  auto it = SystemLib().table.find(name);
  return it == SystemLib().table.end() ? nullptr : it->second;
}

void ForgetSystemLibSymbolsIn(uintptr_t begin, uintptr_t end) {
  std::lock_guard<std::mutex> lock(SystemLib().mutex);
  for (auto it = SystemLib().table.begin(); it != SystemLib().table.end();) {
    const auto address = reinterpret_cast<uintptr_t>(it->second);
    it = address >= begin && address < end ? SystemLib().table.erase(it) : std::next(it);
  }
}

size_t CountSystemLibSymbols(const std::string& prefix) {
  std::lock_guard<std::mutex> lock(SystemLib().mutex);
  size_t n = 0;
  for (const auto& entry : SystemLib().table) n += entry.first.compare(0, prefix.size(), prefix) == 0 ? 1 : 0;
  return n;
}

}  // namespace sorun
