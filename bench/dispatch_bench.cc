// Executor dispatch overhead: GraphExecutor::Run() on a 10,000-node chain of an empty kernel versus
// a hand-written loop calling the same compiled function pointer with prebuilt argument arrays —
// the limit any executor can reach. Both are timed in the same benchmark, alternating, and the
// ratio is reported as a counter (target: <= 1.3).
//
// bazel run -c opt //bench:dispatch_bench
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <vector>

#include "api/model_loading.h"
#include "bench/bench_util.h"
#include "graph_executor/graph_builder.h"
#include "graph_executor/graph_executable.h"
#include "runtime/data_type.h"
#include "runtime/library_module.h"

namespace sorun {
namespace {

constexpr int kNodes = 10000;

struct Fixture {
  Module lib;
  std::unique_ptr<GraphExecutor> exec;
  TVMBackendPackedCFunc fn = nullptr;
  std::vector<DLTensor> tensors;
  std::vector<TVMValue> values;
  std::vector<int> codes;
  std::vector<float> buffers;
  int64_t shape[2] = {1, 16};

  static Fixture& Get() {
    static Fixture* f = [] {
      auto* fx = new Fixture();
      auto opened = LibraryModuleNode::Open(bench::Runfile("testdata/kernels/libnn_kernels.so"));
      if (!opened.ok()) {
        std::fprintf(stderr, "%s\n", opened.status().ToString().c_str());
        std::exit(1);
      }
      fx->lib = Module(ObjectPtr<ModuleNode>(opened->module));
      GraphBuilder b;
      int x = b.Input("data", {1, 16});
      for (int i = 0; i < kNodes; ++i) x = b.Op("sorun_empty", {x}, {1, 16});
      b.Output(x);
      auto spec = b.Build();
      fx->exec = std::move(
          *GraphExecutor::Create(std::make_shared<const GraphSpec>(std::move(*spec)), fx->lib, {CpuDevice()}, nullptr));
      // The hand loop: the same kernel, one prebuilt (input, output) argument pair per node, with the
      // same storage reuse (two buffers, ping-pong).
      fx->fn = fx->lib.GetFunction("sorun_empty").get()->c_function();
      fx->buffers.assign(2 * 16, 0.0f);
      fx->tensors.resize(2 * kNodes);
      fx->values.resize(2 * kNodes);
      fx->codes.assign(2 * kNodes, kTVMDLTensorHandle);
      for (int i = 0; i < kNodes; ++i) {
        for (int k = 0; k < 2; ++k) {
          DLTensor& t = fx->tensors[2 * i + k];
          t.data = &fx->buffers[16 * ((i + k) % 2)];
          t.device = CpuDevice();
          t.ndim = 2;
          t.dtype = Float32();
          t.shape = fx->shape;
          t.strides = nullptr;
          t.byte_offset = 0;
          fx->values[2 * i + k].v_handle = &t;
        }
      }
      return fx;
    }();
    return *f;
  }

  void HandLoop() {
    TVMValue rv;
    int rc;
    for (int i = 0; i < kNodes; ++i) {
      if (fn(&values[2 * i], &codes[2 * i], 2, &rv, &rc, nullptr) != 0) std::abort();
    }
  }
};

void BM_ExecutorRun(benchmark::State& state) {
  Fixture& f = Fixture::Get();
  for (auto _ : state) {
    if (!f.exec->Run().ok()) state.SkipWithError("run failed");
  }
  state.counters["ns_per_node"] = benchmark::Counter(
      static_cast<double>(kNodes), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ExecutorRun)->Unit(benchmark::kMicrosecond);

void BM_HandLoop(benchmark::State& state) {
  Fixture& f = Fixture::Get();
  for (auto _ : state) f.HandLoop();
  state.counters["ns_per_node"] = benchmark::Counter(
      static_cast<double>(kNodes), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_HandLoop)->Unit(benchmark::kMicrosecond);

// Both, alternating within one benchmark so machine noise hits them equally; reports the ratio of
// the medians.
void BM_DispatchRatio(benchmark::State& state) {
  Fixture& f = Fixture::Get();
  std::vector<double> exec_us, hand_us;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    if (!f.exec->Run().ok()) state.SkipWithError("run failed");
    auto t1 = std::chrono::steady_clock::now();
    f.HandLoop();
    auto t2 = std::chrono::steady_clock::now();
    exec_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    hand_us.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
  }
  std::sort(exec_us.begin(), exec_us.end());
  std::sort(hand_us.begin(), hand_us.end());
  double e = exec_us[exec_us.size() / 2], h = hand_us[hand_us.size() / 2];
  state.counters["executor_us"] = e;
  state.counters["hand_loop_us"] = h;
  state.counters["ratio"] = e / h;
}
BENCHMARK(BM_DispatchRatio)->Unit(benchmark::kMicrosecond)->Iterations(2000);

}  // namespace
}  // namespace sorun

BENCHMARK_MAIN();
