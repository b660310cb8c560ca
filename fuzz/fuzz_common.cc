#include "fuzz/fuzz_common.h"

#include <unistd.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "api/model_loading.h"

namespace sorun {
namespace fuzz {

bool Verbose() {
  static const bool verbose = [] {
    const char* v = std::getenv("SORUN_FUZZ_VERBOSE");
    return v != nullptr && std::strcmp(v, "0") != 0;
  }();
  return verbose;
}

void Note(const char* target, const Status& s) {
  if (Verbose() && !s.ok()) std::fprintf(stderr, "[%s] %s\n", target, s.ToString().c_str());
}

void Init() {
  static std::once_flag once;
  std::call_once(once, [] {
    // OpenCL discovery finds no platform: fast, deterministic, nothing to leak.
    setenv("OCL_ICD_VENDORS", "/nonexistent/sorun-fuzz-no-opencl-vendors", /*overwrite=*/0);
    setenv("SORUN_OPENCL_CACHE", "0", /*overwrite=*/0);
    // No GPU either: with a real driver the cuda loader would hand fuzzed images to cuModuleLoadData.
    setenv("CUDA_VISIBLE_DEVICES", "", /*overwrite=*/1);
    Status s = Initialize();
    FUZZ_CHECK(s.ok(), s.ToString());
  });
}

std::string FindRunfile(const std::string& relative, const char* override_env) {
  std::vector<std::string> candidates;
  if (override_env != nullptr) {
    if (const char* v = std::getenv(override_env)) candidates.emplace_back(v);
  }
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const std::string ws = workspace && *workspace ? workspace : "sorun";
  for (const char* var : {"TEST_SRCDIR", "RUNFILES_DIR"}) {
    if (const char* v = std::getenv(var)) candidates.push_back(std::string(v) + "/" + ws + "/" + relative);
  }
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    const std::string self(exe, static_cast<size_t>(n));
    candidates.push_back(self + ".runfiles/" + ws + "/" + relative);
    const size_t fuzz_dir = self.rfind("/fuzz/");
    if (fuzz_dir != std::string::npos) candidates.push_back(self.substr(0, fuzz_dir) + "/" + relative);
  }
  // A source file (not built: e.g. testdata/relax/*.so) from the repository root, where
  // fuzz/run_fuzzers.sh runs the binaries.
  candidates.push_back(relative);
  std::string tried;
  for (const std::string& c : candidates) {
    if (access(c.c_str(), R_OK) == 0) return c;
    tried += " " + c;
  }
  FUZZ_CHECK(false, "cannot find " + relative + " (tried:" + tried + ")" +
                        (override_env != nullptr ? std::string("; set ") + override_env : std::string()));
  return "";
}

bool SmallEnoughToRun(const GraphSpec& graph, const MemoryPlan& plan) {
  if (graph.num_entries() > kMaxExecutorEntries) return false;
  uint64_t total = 0;
  for (const StoragePool& pool : plan.pools) {
    if (pool.bytes > kMaxExecutorBytes) return false;
    total += pool.bytes;
    if (total > kMaxExecutorBytes) return false;
  }
  return true;
}

}  // namespace fuzz
}  // namespace sorun
