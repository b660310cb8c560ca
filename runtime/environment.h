// CheckSorunEnvironment: validates every SORUN_* variable the core runtime reads, so that a bad value
// is reported by the first call that can return an error (sorun::Initialize(), the CLI) even where
// the reader itself cannot fail (the process-wide thread pool falls back to its default).
// Thread-safe (reads the environment only).
#ifndef SORUN_RUNTIME_ENVIRONMENT_H_
#define SORUN_RUNTIME_ENVIRONMENT_H_

#include "base/status.h"

namespace sorun {

// SORUN_NUM_THREADS, SORUN_SPIN_US, SORUN_VERIFY_CHECKSUM: the first bad one's InvalidArgument, else OK.
Status CheckSorunEnvironment();

}  // namespace sorun

#endif  // SORUN_RUNTIME_ENVIRONMENT_H_
