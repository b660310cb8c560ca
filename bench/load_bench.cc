// Load in place: load-to-ready time (sorun::Model::Load + NewExecutor, before the first run) of models with
// 1, 16, 256 and 1024 MiB of parameters, against ONE memcpy of the same number of bytes measured in the
// same benchmark, alternating: into a pre-faulted destination (the limit) and into a fresh mapping
// (page faults included). Target: load-to-ready <= 10% of the pre-faulted memcpy for >= 256 MiB, and
// roughly flat in the parameter size. With checksum verification on (the default) load reads the whole
// blob once (XXH64), so both settings are measured. Also the first run, which faults the weights in
// (from the page cache), and a cold start (model dropped from the page cache first: read from disk).
//
// Models are generated once through the exporter API (bench/synthetic_model.h) into
// $SORUN_BENCH_MODEL_DIR (default /tmp/sorun_bench_models; 1 GiB needs ~2 GiB of temporary disk).
// SORUN_BENCH_SIZES_MIB=1,16,256,1024 picks the sizes.
//
// bazel run -c opt //bench:load_bench   (or bench/run_load.sh)
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "api/sorun.h"
#include "base/file_util.h"
#include "bench/bench_util.h"
#include "bench/synthetic_model.h"

namespace sorun {
namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

[[noreturn]] void Die(const Status& s) {
  std::fprintf(stderr, "load_bench: %s\n", s.ToString().c_str());
  std::exit(1);
}

const bench::SyntheticModelInfo& Model(uint64_t mib) {
  static std::map<uint64_t, bench::SyntheticModelInfo> cache;
  auto it = cache.find(mib);
  if (it != cache.end()) return it->second;
  std::string kernels = bench::Runfile("testdata/kernels/nn_kernels.c");
  std::string header = bench::Runfile("runtime/c_runtime_api.h");
  std::string root = header.substr(0, header.size() - std::string("runtime/c_runtime_api.h").size());
  if (root.empty()) root = ".";
  bench::SyntheticModelSpec spec;
  spec.param_mib = mib;
  auto info = bench::GetSyntheticModel(spec, bench::SyntheticModelDir(), kernels, root);
  if (!info.ok()) Die(info.status());
  return cache.emplace(mib, *info).first->second;
}

// One load-to-ready: Model::Load + NewExecutor. The model and executor are returned so that their
// destruction (dlclose, munmap) is not timed.
struct Ready {
  std::optional<sorun::Model> model;  // sorun:: (Model() below picks a synthetic model)
  std::optional<Executor> exec;
};

Ready LoadToReady(const std::string& path, bool verify) {
  RuntimeOptions options;
  options.verify_checksum = verify;
  auto model = sorun::Model::Load(path, options);
  if (!model.ok()) Die(model.status());
  auto exec = model->NewExecutor();
  if (!exec.ok()) Die(exec.status());
  return Ready{std::move(*model), std::move(*exec)};
}

// Buffers for the memcpy limit.
struct CopyBuffers {
  size_t bytes = 0;
  uint8_t* src = nullptr;
  uint8_t* dst = nullptr;  // pre-faulted
};

uint8_t* MapAnon(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  return static_cast<uint8_t*>(p);
}

CopyBuffers& Buffers(size_t bytes) {
  static CopyBuffers b;
  if (b.bytes != bytes) {
    if (b.src) munmap(b.src, b.bytes);
    if (b.dst) munmap(b.dst, b.bytes);
    b.bytes = bytes;
    b.src = MapAnon(bytes);
    b.dst = MapAnon(bytes);
    for (size_t i = 0; i < bytes; ++i) b.src[i] = static_cast<uint8_t>(i * 131);
    std::memset(b.dst, 1, bytes);
  }
  return b;
}

double MemcpyPrefaulted(CopyBuffers& b) {
  auto t0 = Clock::now();
  std::memcpy(b.dst, b.src, b.bytes);
  benchmark::ClobberMemory();
  return Ms(t0, Clock::now());
}

double MemcpyFresh(CopyBuffers& b) {
  auto t0 = Clock::now();
  uint8_t* dst = MapAnon(b.bytes);
  std::memcpy(dst, b.src, b.bytes);
  benchmark::ClobberMemory();
  double ms = Ms(t0, Clock::now());
  munmap(dst, b.bytes);
  return ms;
}

// Load-to-ready alternating with both memcpys; the iteration time is the load-to-ready time.
void BM_LoadToReady(benchmark::State& state) {
  const uint64_t mib = static_cast<uint64_t>(state.range(0));
  const bool verify = state.range(1) != 0;
  const bench::SyntheticModelInfo& m = Model(mib);
  CopyBuffers& b = Buffers(static_cast<size_t>(m.param_bytes));
  { Ready warm = LoadToReady(m.path, verify); }  // page cache warm, code paths warm
  std::vector<double> load, pre, fresh;
  for (auto _ : state) {
    auto t0 = Clock::now();
    Ready r = LoadToReady(m.path, verify);
    double ms = Ms(t0, Clock::now());
    state.SetIterationTime(ms / 1e3);
    load.push_back(ms);
    state.PauseTiming();
    r = Ready();
    pre.push_back(MemcpyPrefaulted(b));
    fresh.push_back(MemcpyFresh(b));
    state.ResumeTiming();
  }
  double l = Median(load), p = Median(pre), f = Median(fresh);
  state.counters["param_MiB"] = static_cast<double>(m.param_bytes) / (1 << 20);
  state.counters["load_ready_ms"] = l;
  state.counters["memcpy_prefaulted_ms"] = p;
  state.counters["memcpy_fresh_ms"] = f;
  state.counters["ratio_vs_prefaulted"] = l / p;
  state.counters["ratio_vs_fresh"] = l / f;
}

// First run after load-to-ready (faults the weights in from the page cache) and a steady-state run.
void BM_FirstRun(benchmark::State& state) {
  const uint64_t mib = static_cast<uint64_t>(state.range(0));
  const bench::SyntheticModelInfo& m = Model(mib);
  CopyBuffers& b = Buffers(static_cast<size_t>(m.param_bytes));
  { Ready warm = LoadToReady(m.path, false); }
  std::vector<double> first, steady, pre;
  for (auto _ : state) {
    state.PauseTiming();
    Ready r = LoadToReady(m.path, false);
    state.ResumeTiming();
    auto t0 = Clock::now();
    Status s = r.exec->Run();
    double ms = Ms(t0, Clock::now());
    state.SetIterationTime(ms / 1e3);
    if (!s.ok()) Die(s);
    first.push_back(ms);
    state.PauseTiming();
    t0 = Clock::now();
    s = r.exec->Run();
    steady.push_back(Ms(t0, Clock::now()));
    r = Ready();
    pre.push_back(MemcpyPrefaulted(b));
    state.ResumeTiming();
  }
  state.counters["param_MiB"] = static_cast<double>(m.param_bytes) / (1 << 20);
  state.counters["first_run_ms"] = Median(first);
  state.counters["second_run_ms"] = Median(steady);
  state.counters["memcpy_prefaulted_ms"] = Median(pre);
}

// Drops the model file from the page cache (clean pages no process maps), so the next load and first
// run read it from disk: a cold start.
void DropFromPageCache(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
}

// Cold start: the model's pages are not in the page cache. Load-to-ready (checksum off) and the first
// run, which now reads the weights from disk.
void BM_ColdStart(benchmark::State& state) {
  const uint64_t mib = static_cast<uint64_t>(state.range(0));
  const bench::SyntheticModelInfo& m = Model(mib);
  std::vector<double> load, first;
  for (auto _ : state) {
    state.PauseTiming();
    DropFromPageCache(m.path);
    state.ResumeTiming();
    auto t0 = Clock::now();
    Ready r = LoadToReady(m.path, false);
    auto t1 = Clock::now();
    Status s = r.exec->Run();
    auto t2 = Clock::now();
    if (!s.ok()) Die(s);
    state.SetIterationTime(Ms(t0, t2) / 1e3);
    load.push_back(Ms(t0, t1));
    first.push_back(Ms(t1, t2));
    state.PauseTiming();
    r = Ready();
    state.ResumeTiming();
  }
  state.counters["param_MiB"] = static_cast<double>(m.param_bytes) / (1 << 20);
  state.counters["cold_load_ready_ms"] = Median(load);
  state.counters["cold_first_run_ms"] = Median(first);
}

// Load-to-ready from memory (Model::LoadFromMemory of the file's bytes, already in the process: a
// download, a decrypted buffer) against from the file, alternating in one loop. Memory pays one copy of
// the whole file into the sealed memfd; the file is mapped in place.
void BM_MemoryVsFile(benchmark::State& state) {
  const uint64_t mib = static_cast<uint64_t>(state.range(0));
  const bench::SyntheticModelInfo& m = Model(mib);
  auto bytes = ReadFileToString(m.path);
  if (!bytes.ok()) Die(bytes.status());
  auto memory_ready = [&] {
    RuntimeOptions options;
    options.verify_checksum = false;
    auto model = sorun::Model::LoadFromMemory(*bytes, options, "bench.so");
    if (!model.ok()) Die(model.status());
    auto exec = model->NewExecutor();
    if (!exec.ok()) Die(exec.status());
    return Ready{std::move(*model), std::move(*exec)};
  };
  { Ready warm = memory_ready(); }
  std::vector<double> memory, file;
  for (auto _ : state) {
    auto t0 = Clock::now();
    Ready r = memory_ready();
    double ms = Ms(t0, Clock::now());
    state.SetIterationTime(ms / 1e3);
    memory.push_back(ms);
    state.PauseTiming();
    r = Ready();
    auto t1 = Clock::now();
    Ready f = LoadToReady(m.path, false);
    file.push_back(Ms(t1, Clock::now()));
    f = Ready();
    state.ResumeTiming();
  }
  state.counters["param_MiB"] = static_cast<double>(m.param_bytes) / (1 << 20);
  state.counters["memory_load_ready_ms"] = Median(memory);
  state.counters["file_load_ready_ms"] = Median(file);
  state.counters["ratio_memory_vs_file"] = Median(memory) / Median(file);
}

std::vector<int64_t> Sizes() {
  std::vector<int64_t> sizes;
  const char* env = std::getenv("SORUN_BENCH_SIZES_MIB");
  std::stringstream ss(env && *env ? env : "1,16,256,1024");
  std::string item;
  while (std::getline(ss, item, ',')) sizes.push_back(std::atoll(item.c_str()));
  return sizes;
}

int Iterations(int64_t mib) { return mib <= 1 ? 200 : mib <= 16 ? 60 : mib <= 256 ? 15 : 7; }

}  // namespace
}  // namespace sorun

int main(int argc, char** argv) {
  using namespace sorun;
  if (!Initialize().ok()) return 1;
  benchmark::Initialize(&argc, argv);
  for (int64_t mib : Sizes()) {
    for (int verify : {0, 1}) {
      benchmark::RegisterBenchmark("BM_LoadToReady", BM_LoadToReady)
          ->Args({mib, verify})
          ->ArgNames({"MiB", "verify"})
          ->Iterations(Iterations(mib))
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  for (int64_t mib : Sizes()) {
    benchmark::RegisterBenchmark("BM_FirstRun", BM_FirstRun)
        ->Arg(mib)
        ->ArgName("MiB")
        ->Iterations(std::max(3, Iterations(mib) / 3))
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  for (int64_t mib : Sizes()) {
    benchmark::RegisterBenchmark("BM_MemoryVsFile", BM_MemoryVsFile)
        ->Arg(mib)
        ->ArgName("MiB")
        ->Iterations(Iterations(mib))
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  for (int64_t mib : Sizes()) {
    benchmark::RegisterBenchmark("BM_ColdStart", BM_ColdStart)
        ->Arg(mib)
        ->ArgName("MiB")
        ->Iterations(3)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
