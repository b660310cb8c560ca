#include "runtime/environment.h"

#include "base/env_vars.h"
#include "runtime/thread_pool.h"

namespace sorun {

Status CheckSorunEnvironment() {
  SORUN_RETURN_IF_ERROR(ThreadPool::ConfiguredNumThreads().status());
  SORUN_RETURN_IF_ERROR(ThreadPool::ConfiguredSpinUs().status());
  SORUN_RETURN_IF_ERROR(GetEnvBool(kEnvVerifyChecksum, "verify the blob checksum at load").status());
  return Status::Ok();
}

}  // namespace sorun
