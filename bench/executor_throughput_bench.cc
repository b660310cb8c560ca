// Executor scaling: throughput (runs per second) of ONE executor on one thread against TWO executors
// from the same load on two threads, for the compute-bound zoo model conv_heavy (testdata/models,
// ~21 M multiply-adds per run, 37 KiB of weights). Both are measured in the same benchmark, in
// alternating rounds, and the ratio of the median rounds is reported. Target on a 2-core machine:
// >= 1.7x with kernels single-threaded (SORUN_NUM_THREADS=1: each executor gets a core). With the
// default pool (one thread per core) one executor already uses both cores through
// TVMBackendParallelLaunch, so a second executor adds little (bench/README.md).
//
// bazel run -c opt //bench:executor_throughput_bench     (bench/run_executors.sh runs both settings)
// SORUN_BENCH_MODEL=path.so picks another model.
#include <benchmark/benchmark.h>

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "api/sorun.h"
#include "bench/bench_util.h"

namespace sorun {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const Status& s) {
  std::fprintf(stderr, "executor_throughput_bench: %s\n", s.ToString().c_str());
  std::exit(1);
}

struct Fixture {
  std::optional<Model> model;
  std::vector<Executor> execs;

  static Fixture& Get() {
    static Fixture* f = [] {
      auto* fx = new Fixture();
      const char* env = std::getenv("SORUN_BENCH_MODEL");
      std::string path = env && *env ? env : bench::Runfile("testdata/models/conv_heavy.so");
      auto model = Model::Load(path);
      if (!model.ok()) Die(model.status());
      fx->model = std::move(*model);
      for (int i = 0; i < 2; ++i) {
        auto e = fx->model->NewExecutor();  // default options: the process-wide pool
        if (!e.ok()) Die(e.status());
        for (const TensorInfo& in : e->inputs()) {
          if (in.is_param) continue;
          auto t = NDArray::Empty(in.shape, in.dtype);
          if (!t.ok()) Die(t.status());
          for (int64_t k = 0; k < t->num_elements(); ++k) t->data_as<float>()[k] = 0.001f * static_cast<float>(k % 97);
          Status s = e->SetInput(in.name, t->dl());
          if (!s.ok()) Die(s);
        }
        Status s = e->Run();
        if (!s.ok()) Die(s);
        fx->execs.push_back(std::move(*e));
      }
      return fx;
    }();
    return *f;
  }
};

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// Busy CPU seconds of the whole machine (/proc/stat) and of this process (getrusage): their difference
// over a measurement is what other processes took, i.e. how many cores were really ours.
double MachineBusySeconds() {
  std::FILE* f = std::fopen("/proc/stat", "r");
  if (f == nullptr) return 0;
  unsigned long long v[8] = {0};
  int n = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                      &v[7]);
  std::fclose(f);
  if (n < 8) return 0;
  // user nice system [idle iowait] irq softirq steal
  return static_cast<double>(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double ProcessCpuSeconds() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

struct Round {
  double runs_per_s = 0;
  double cpu_ms_per_run = 0;  // CPU time of the running threads per inference
  double others_cores = 0;    // cores used by other processes meanwhile (machine busy - this process)
};

// Runs `runs` inferences on each of the first `n` executors, one thread each.
Round Throughput(Fixture& f, int n, int runs) {
  std::atomic<double> cpu{0};
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      double c0 = ThreadCpuSeconds();
      for (int i = 0; i < runs; ++i) {
        if (!f.execs[static_cast<size_t>(t)].Run().ok()) failures.fetch_add(1);
      }
      double used = ThreadCpuSeconds() - c0, expected = cpu.load();
      while (!cpu.compare_exchange_weak(expected, expected + used)) {
      }
    });
  }
  while (ready.load() != n) {
  }
  const double busy0 = MachineBusySeconds(), self0 = ProcessCpuSeconds();
  auto t0 = Clock::now();
  go.store(true, std::memory_order_release);
  for (auto& t : threads) t.join();
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  const double others = (MachineBusySeconds() - busy0) - (ProcessCpuSeconds() - self0);
  if (failures.load() != 0) {
    std::fprintf(stderr, "executor_throughput_bench: run failed\n");
    std::exit(1);
  }
  return Round{n * runs / s, cpu.load() * 1e3 / (n * runs), others > 0 ? others / s : 0};
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Each iteration is one round: one executor on one thread, then two executors on two threads.
void BM_TwoExecutorsVsOne(benchmark::State& state) {
  Fixture& f = Fixture::Get();
  const int runs = static_cast<int>(state.range(0));
  std::vector<double> one, two, ratio, cpu_one, cpu_two, others;
  for (auto _ : state) {
    Round a = Throughput(f, 1, runs);
    Round b = Throughput(f, 2, runs);
    one.push_back(a.runs_per_s);
    two.push_back(b.runs_per_s);
    ratio.push_back(b.runs_per_s / a.runs_per_s);
    cpu_one.push_back(a.cpu_ms_per_run);
    cpu_two.push_back(b.cpu_ms_per_run);
    others.push_back(b.others_cores);
  }
  state.counters["pool_threads"] = f.execs[0].num_threads();
  state.counters["hw_threads"] = static_cast<double>(std::thread::hardware_concurrency());
  state.counters["one_exec_runs_per_s"] = Median(one);
  state.counters["two_exec_runs_per_s"] = Median(two);
  state.counters["speedup"] = Median(ratio);
  // CPU time per inference (calling threads only; pool workers excluded): equal for one and two
  // executors when nothing is shared between them, whatever else the machine runs.
  state.counters["one_exec_cpu_ms_per_run"] = Median(cpu_one);
  state.counters["two_exec_cpu_ms_per_run"] = Median(cpu_two);
  // Cores other processes used while the two executors ran (0 on an idle machine): with more than ~0.3
  // the two threads cannot both have a core and the speed-up measures the machine, not sorun.
  state.counters["other_procs_cores"] = Median(others);
}
BENCHMARK(BM_TwoExecutorsVsOne)->Arg(10)->ArgName("runs")->Iterations(15)->Unit(benchmark::kMillisecond)->UseRealTime();

// Latency of one run on one executor (for reference).
void BM_SingleRun(benchmark::State& state) {
  Fixture& f = Fixture::Get();
  for (auto _ : state) {
    if (!f.execs[0].Run().ok()) state.SkipWithError("run failed");
  }
  state.counters["pool_threads"] = f.execs[0].num_threads();
}
BENCHMARK(BM_SingleRun)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sorun

int main(int argc, char** argv) {
  if (!sorun::Initialize().ok()) return 1;
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
