// sorun::Initialize and sorun::Version (api/sorun.h).
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "api/sorun.h"
#include "runtime/c_runtime_api.h"
#include "runtime/environment.h"

namespace sorun {

// Defined by backends_all.cc or backends_cpu.cc, whichever the target links.
Status RegisterLinkedBackends();
// Defined by executors_all.cc, executors_graph.cc or executors_vm.cc, whichever the target links.
Status RegisterLinkedExecutors();

Status Initialize() {
  static std::mutex mutex;
  static bool done = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (done) return Status::Ok();
  // A malformed SORUN_* variable is an error here, not a silent default inside the thread pool.
  SORUN_RETURN_IF_ERROR(CheckSorunEnvironment());
  SORUN_RETURN_IF_ERROR(RegisterLinkedExecutors());
  SORUN_RETURN_IF_ERROR(RegisterLinkedBackends());
  done = true;
  return Status::Ok();
}

// The one version string of the runtime, the CLI, the C and C++ APIs and the wheel: SORUN_VERSION of
// //:version.bzl, defined by api/BUILD.bazel.
#ifndef SORUN_VERSION_STRING
#error "SORUN_VERSION_STRING is defined by api/BUILD.bazel from //:version.bzl"
#endif
const char* Version() { return SORUN_VERSION_STRING; }

Status MakeTvmAbiGlobal() {
  // A function of the TVM C ABI names the object sorun is linked into (the executable, or the
  // extension / backend / libsorun.so).
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&TVMBackendRegisterSystemLibSymbol), &info) == 0 || info.dli_fname == nullptr) {
    return Internal("MakeTvmAbiGlobal: dladdr cannot name the object that contains the sorun runtime");
  }
  void* self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  if (self == nullptr) {
    const char* err = dlerror();
    return Internal(std::string("MakeTvmAbiGlobal: cannot re-open ") + info.dli_fname +
                    " with RTLD_GLOBAL: " + (err != nullptr ? err : "dlopen failed"));
  }
  // Kernels bind these by name to the first definition in the global scope: another TVM runtime made
  // global before us (TVM's own libtvm_ffi / libtvm_runtime, imported by `import tvm`) would get every
  // call of sorun's kernels, with handles it does not know. Refuse rather than crash at the first run.
  for (const char* name : {"TVMBackendAllocWorkspace", "TVMFFIFunctionCall"}) {
    void* own = dlsym(self, name);
    void* global = dlsym(RTLD_DEFAULT, name);
    Dl_info other{};
    if (own != nullptr && global != nullptr && global != own && dladdr(global, &other) != 0) {
      dlclose(self);
      return FailedPrecondition(std::string("another TVM runtime is loaded in this process (") +
                                (other.dli_fname != nullptr ? other.dli_fname : "unnamed object") + "): its global " +
                                name +
                                " would receive the calls of sorun's kernels; load sorun models in a process that "
                                "has not loaded TVM (run TVM in a subprocess)");
    }
  }
  return Status::Ok();
}

}  // namespace sorun
