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
  if (dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL) == nullptr) {
    const char* err = dlerror();
    return Internal(std::string("MakeTvmAbiGlobal: cannot re-open ") + info.dli_fname +
                    " with RTLD_GLOBAL: " + (err != nullptr ? err : "dlopen failed"));
  }
  return Status::Ok();
}

}  // namespace sorun
