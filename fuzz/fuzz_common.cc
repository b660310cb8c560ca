#include "fuzz/fuzz_common.h"

#include <cstring>
#include <mutex>

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
