// Helpers shared by the fuzz bodies of fuzz/fuzz_targets.cc and fuzz/fuzz_targets_load.cc (not a
// public API: only fuzz bodies include it).
//
//   FUZZ_CHECK(cond, what)  aborts with a message: a broken round trip or invariant of a successful
//                           parse is a bug, not bad input
//   Init()                  one-time process setup (loaders registered, no OpenCL platform, no CUDA
//                           device, program cache off); every body calls it first
//   Note(target, status)    prints a non-OK status when SORUN_FUZZ_VERBOSE=1
//   SmallEnoughToRun(...)   whether an executor for this plan stays within the harness's memory bound
//   FindRunfile(...)        a data file of the fuzz binaries / regression test (real libraries, fixtures)
//
// Thread-compatible: a fuzzer calls one body at a time.
#ifndef SORUN_FUZZ_FUZZ_COMMON_H_
#define SORUN_FUZZ_FUZZ_COMMON_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/status.h"
#include "graph_executor/graph_json.h"
#include "graph_executor/memory_plan.h"

// Aborts with a message: a broken round trip or invariant is a bug, not bad input.
#define FUZZ_CHECK(cond, what)                                                                \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s: %s\n", __FILE__, __LINE__, #cond, \
                   std::string(what).c_str());                                                \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)

namespace sorun {
namespace fuzz {

// Executors are only created for graphs this small (activations + weights), so a fuzzed shape can
// never make the harness allocate gigabytes (libFuzzer would report that as an out-of-memory crash).
inline constexpr uint64_t kMaxExecutorBytes = 1 << 20;
inline constexpr uint32_t kMaxExecutorEntries = 4096;

// SORUN_FUZZ_VERBOSE=1 (anything but "0"): Note() prints every error a body sees.
bool Verbose();
// Prints "[target] <status>" to stderr when verbose and `s` is an error.
void Note(const char* target, const Status& s);
// One-time process setup: every loader registered the way applications do it, OpenCL discovery
// pointed at no platform, the program cache off, no CUDA device visible. Idempotent, thread-safe.
void Init();
// The path of `relative` (a workspace path, e.g. "testdata/relax/mlp.so") among the runfiles: $override_env
// (when given and set: the file itself), bazel test's TEST_SRCDIR, RUNFILES_DIR, <this binary>.runfiles, then
// the bazel-bin tree the binary sits in (bazel-bin/fuzz/<target>). Aborts naming every place tried.
std::string FindRunfile(const std::string& relative, const char* override_env = nullptr);
// True when `plan` (for `graph`) is within kMaxExecutorBytes / kMaxExecutorEntries.
bool SmallEnoughToRun(const GraphSpec& graph, const MemoryPlan& plan);

}  // namespace fuzz
}  // namespace sorun

#endif  // SORUN_FUZZ_FUZZ_COMMON_H_
