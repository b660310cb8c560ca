// Thread pool overhead: one TVMBackendParallelLaunch of an empty task (num_task = 0: every pool
// thread), against calling the task inline. Also a launch whose tasks meet at one barrier.
//
// bazel run -c opt //bench:thread_pool_bench
#include <benchmark/benchmark.h>

#include "runtime/c_runtime_api.h"
#include "runtime/thread_pool.h"

namespace sorun {
namespace {

int EmptyTask(int, TVMParallelGroupEnv*, void*) { return 0; }

int BarrierTask(int task_id, TVMParallelGroupEnv* penv, void*) { return TVMBackendParallelBarrier(task_id, penv); }

void BM_InlineCall(benchmark::State& state) {
  TVMParallelGroupEnv env{nullptr, 1};
  for (auto _ : state) benchmark::DoNotOptimize(EmptyTask(0, &env, nullptr));
}
BENCHMARK(BM_InlineCall);

void BM_ParallelLaunchEmpty(benchmark::State& state) {
  state.counters["threads"] = ThreadPool::Global().num_threads();
  for (auto _ : state) {
    if (TVMBackendParallelLaunch(EmptyTask, nullptr, 0) != 0) state.SkipWithError("launch failed");
  }
}
BENCHMARK(BM_ParallelLaunchEmpty);

void BM_ParallelLaunchWithBarrier(benchmark::State& state) {
  for (auto _ : state) {
    if (TVMBackendParallelLaunch(BarrierTask, nullptr, 0) != 0) state.SkipWithError("launch failed");
  }
}
BENCHMARK(BM_ParallelLaunchWithBarrier);

}  // namespace
}  // namespace sorun

BENCHMARK_MAIN();
