// N executors of one model on one CUDA device, each driven by a thread of its own (what Triton's
// instance groups and a multi-threaded server do): throughput, per-run latency and device memory, for
// bench/gpu/run.sh. Prints one JSON object.
//
// usage: gpu_executors_bench MODEL.so [--executors N] [--seconds S] [--cuda-graph] [--input FILE.npy]
//   Every executor gets the same input (FILE.npy for the model's first non-parameter input, else
//   deterministic values) by SetInput, then runs for S seconds after 3 warm-up runs (Run, then
//   Synchronize: a run's device work has finished when it is counted). Device memory is the driver's
//   (cuMemGetInfo_v2: total - free) before the model is loaded, after it is loaded, and after every
//   executor has run once: "per_executor_bytes" = (after runs - after load) / N.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "api/sorun.h"
#include "tools/npy.h"

namespace sorun {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "gpu_executors_bench: %s\n", what.c_str());
  std::exit(1);
}

void Check(const Status& s, const std::string& what) {
  if (!s.ok()) Die(what + ": " + s.ToString());
}

// Device memory in use on the calling thread's current CUDA context (the driver's view), or -1.
int64_t DeviceBytesInUse() {
  using MemGetInfo = int (*)(size_t*, size_t*);
  // Looked up each time: before the model is loaded the runtime has not opened the driver yet.
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  MemGetInfo fn = driver ? reinterpret_cast<MemGetInfo>(dlsym(driver, "cuMemGetInfo_v2")) : nullptr;
  if (driver != nullptr) dlclose(driver);  // drops the reference NOLOAD added; the runtime keeps its own
  size_t free_bytes = 0, total = 0;
  if (fn == nullptr || fn(&free_bytes, &total) != 0) return -1;
  return static_cast<int64_t>(total - free_bytes);
}

struct Options {
  std::string model;
  std::string input;
  int executors = 1;
  double seconds = 5;
  bool cuda_graph = false;
};

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--executors") {
      o.executors = std::atoi(value().c_str());
    } else if (a == "--seconds") {
      o.seconds = std::atof(value().c_str());
    } else if (a == "--cuda-graph") {
      o.cuda_graph = true;
    } else if (a == "--input") {
      o.input = value();
    } else if (!a.empty() && a[0] != '-' && o.model.empty()) {
      o.model = a;
    } else {
      Die("unknown argument " + a);
    }
  }
  if (o.model.empty() || o.executors < 1 || o.executors > 64 || !(o.seconds > 0)) {
    Die("usage: gpu_executors_bench MODEL.so [--executors 1..64] [--seconds S] [--cuda-graph] [--input FILE.npy]");
  }
  return o;
}

// The model's first non-parameter input as an array: from `path`, else values in [-1, 1).
NDArray InputValue(const TensorInfo& info, const std::string& path) {
  if (!path.empty()) {
    auto t = ReadNpyFile(path);
    if (!t.ok()) Die(path + ": " + t.status().ToString());
    auto a = NDArray::Empty(t->shape(), t->dtype());
    if (!a.ok()) Die(a.status().ToString());
    std::memcpy(a->data(), t->data(), t->nbytes());
    return *a;
  }
  std::vector<int64_t> shape = info.shape;
  for (int64_t& d : shape) d = d < 0 ? 1 : d;
  auto a = NDArray::Empty(shape, info.dtype);
  if (!a.ok()) Die(a.status().ToString());
  if (info.dtype.code == kDLFloat && info.dtype.bits == 32) {
    float* p = a->data_as<float>();
    for (int64_t i = 0; i < a->num_elements(); ++i) p[i] = static_cast<float>((i * 7919 % 2000) - 1000) / 1000.0f;
  } else {
    std::memset(a->data(), 0, a->nbytes());
  }
  return *a;
}

int Main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  Check(Initialize(), "Initialize");
  const DLDevice cuda{kDLCUDA, 0};
  const int64_t before_load = DeviceBytesInUse();
  auto model = Model::Load(o.model);
  if (!model.ok()) Die(model.status().ToString());
  const int64_t after_load = DeviceBytesInUse();

  const TensorInfo* input = nullptr;
  for (const TensorInfo& t : model->inputs()) {
    if (!t.is_param && input == nullptr) input = &t;
  }
  if (input == nullptr) Die(o.model + " has no input to set");
  const NDArray value = InputValue(*input, o.input);

  ExecutorOptions options;
  options.devices = {cuda};
  options.cuda_graph = o.cuda_graph;
  std::vector<Executor> executors;
  for (int i = 0; i < o.executors; ++i) {
    auto ex = model->NewExecutor(options);
    if (!ex.ok()) Die(ex.status().ToString());
    Check(ex->SetInput(input->name, value.dl()), "SetInput");
    executors.push_back(std::move(*ex));
  }
  for (Executor& ex : executors) {
    Check(ex.Run(), "Run");
    Check(ex.Synchronize(), "Synchronize");
  }
  const int64_t after_runs = DeviceBytesInUse();

  std::atomic<bool> go{false};
  std::vector<std::vector<double>> latencies(executors.size());
  std::vector<std::thread> threads;
  const auto budget = std::chrono::duration<double>(o.seconds);
  for (size_t i = 0; i < executors.size(); ++i) {
    threads.emplace_back([&, i] {
      Executor& ex = executors[i];
      for (int w = 0; w < 3; ++w) {
        Check(ex.Run(), "warm-up run");
        Check(ex.Synchronize(), "warm-up run");
      }
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      const auto start = Clock::now();
      while (Clock::now() - start < budget) {
        const auto t0 = Clock::now();
        Check(ex.Run(), "Run");
        Check(ex.Synchronize(), "Synchronize");
        latencies[i].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      }
    });
  }
  const auto start = Clock::now();
  go.store(true, std::memory_order_release);
  for (std::thread& t : threads) t.join();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();

  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  const auto pct = [&](double q) { return all.empty() ? 0.0 : all[static_cast<size_t>(q * (all.size() - 1))]; };
  auto report = executors[0].GraphReport();
  std::string refusal = report.ok() ? report->refusal.substr(0, 200) : "";
  for (char& c : refusal) c = (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) ? '\'' : c;
  std::printf(
      "{\"model\": \"%s\", \"executors\": %d, \"cuda_graph\": %s, \"seconds\": %.3f, \"runs\": %zu, "
      "\"runs_per_second\": %.2f, \"latency_ms\": {\"p50\": %.4f, \"p90\": %.4f, \"min\": %.4f}, "
      "\"device_bytes\": {\"before_load\": %lld, \"after_load\": %lld, \"after_runs\": %lld, "
      "\"per_executor\": %lld}, \"graph_replays\": %lld, \"graph_refusal\": \"%s\"}\n",
      o.model.c_str(), o.executors, o.cuda_graph ? "true" : "false", wall, all.size(),
      static_cast<double>(all.size()) / wall, pct(0.5), pct(0.9), pct(0.0), static_cast<long long>(before_load),
      static_cast<long long>(after_load), static_cast<long long>(after_runs),
      static_cast<long long>(after_runs < 0 || after_load < 0 ? -1 : (after_runs - after_load) / o.executors),
      static_cast<long long>(report.ok() ? report->replays : 0), refusal.c_str());
  return 0;
}

}  // namespace
}  // namespace sorun

int main(int argc, char** argv) { return sorun::Main(argc, argv); }
