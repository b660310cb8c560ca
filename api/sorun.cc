// sorun::Initialize and sorun::Version (api/sorun.h).
#include <mutex>

#include "api/sorun.h"
#include "graph_executor/register.h"
#include "runtime/environment.h"

namespace sorun {

// Defined by backends_all.cc or backends_cpu.cc, whichever the target links.
Status RegisterLinkedBackends();

Status Initialize() {
  static std::mutex mutex;
  static bool done = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (done) return Status::Ok();
  // A malformed SORUN_* variable is an error here, not a silent default inside the thread pool.
  SORUN_RETURN_IF_ERROR(CheckSorunEnvironment());
  SORUN_RETURN_IF_ERROR(RegisterGraphExecutor());
  SORUN_RETURN_IF_ERROR(RegisterLinkedBackends());
  done = true;
  return Status::Ok();
}

// The one version string of the runtime, the CLI and the C++ API.
const char* Version() { return "0.1.0"; }

}  // namespace sorun
