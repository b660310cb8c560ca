// Helpers shared by the benchmarks: locating runfiles when run with `bazel run` or directly.
#ifndef SORUN_BENCH_BENCH_UTIL_H_
#define SORUN_BENCH_BENCH_UTIL_H_

#include <sys/stat.h>

#include <cstdlib>
#include <string>

namespace sorun {
namespace bench {

// Path of a workspace-relative data file (bazel run sets RUNFILES_DIR; the binary may also be run
// from bazel-bin with its .runfiles tree beside it, or from the workspace root).
inline std::string Runfile(const std::string& rel) {
  struct stat st;
  for (const char* env : {"RUNFILES_DIR", "TEST_SRCDIR"}) {
    if (const char* dir = std::getenv(env)) {
      std::string p = std::string(dir) + "/sorun/" + rel;
      if (::stat(p.c_str(), &st) == 0) return p;
    }
  }
  if (::stat(rel.c_str(), &st) == 0) return rel;
  return "bazel-bin/" + rel;
}

}  // namespace bench
}  // namespace sorun

#endif  // SORUN_BENCH_BENCH_UTIL_H_
