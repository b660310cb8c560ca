// sorun's side of bench/relax_vs_tvm.py: ONE fresh process loads a model (a Relax VM export or any
// model sorun loads), runs `main` on fixed inputs and prints one JSON line. tvm_relax_bench.py is the
// same measurement with TVM 0.27's runtime.
//
//   relax_bench_main --model M.so --input X0.npy [--input X1.npy ...] [--threads N] [--warmup W]
//                    [--repeat R] [--output-dir DIR]
//
// Inputs are given in the order of main's parameters. Measured, in this order:
//   bare_rss      VmRSS at the start of main() (the process before sorun does anything)
//   init_ms       sorun::Initialize() (backend registration; TVM's counterpart is `import tvm`)
//   load_ms       Model::Load; create_ms: NewExecutor with num_threads = N  (load-to-ready = both)
//   first_run_ms  SetInput of every input + the first Run()
//   run_ms        R calls of Run() after W warm-up calls, inputs already set: median and p99 (nearest
//                 rank) of the per-call times
//   peak_rss      VmHWM at the end (the whole process: code, weights, activations, thread stacks)
// With --output-dir the outputs of the last run are written as DIR/output_<k>.npy.
// Exit 1 with a message on stderr on any error.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "api/sorun.h"
#include "bench/process_stats.h"
#include "tools/npy.h"

namespace sorun {
namespace {

struct Args {
  std::string model;
  std::vector<std::string> inputs;
  int threads = 1;
  int warmup = 5;
  int repeat = 100;
  std::string output_dir;
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "relax_bench_main: %s\n", what.c_str());
  std::exit(1);
}

void DieIf(const Status& s, const char* what) {
  if (!s.ok()) Die(std::string(what) + ": " + s.ToString());
}

int PositiveInt(const std::string& flag, const std::string& text, int min) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < min || v > 1000000) {
    Die(flag + " wants an integer >= " + std::to_string(min) + ", got '" + text + "'");
  }
  return static_cast<int>(v);
}

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Die(k + " needs a value");
      return argv[++i];
    };
    if (k == "--model") {
      a.model = next();
    } else if (k == "--input") {
      a.inputs.push_back(next());
    } else if (k == "--threads") {
      a.threads = PositiveInt(k, next(), 1);
    } else if (k == "--warmup") {
      a.warmup = PositiveInt(k, next(), 0);
    } else if (k == "--repeat") {
      a.repeat = PositiveInt(k, next(), 1);
    } else if (k == "--output-dir") {
      a.output_dir = next();
    } else {
      Die("unknown flag '" + k + "' (see the top of bench/relax_bench_main.cc)");
    }
  }
  if (a.model.empty()) Die("--model is required");
  return a;
}

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int Main(int argc, char** argv) {
  const uint64_t bare_rss = bench::ReadProcessMemory().rss;
  const Args a = Parse(argc, argv);

  std::vector<Tensor> inputs;
  for (const std::string& path : a.inputs) {
    StatusOr<Tensor> t = ReadNpyFile(path);
    DieIf(t.status(), path.c_str());
    inputs.push_back(*std::move(t));
  }

  auto t0 = std::chrono::steady_clock::now();
  DieIf(Initialize(), "Initialize");
  const double init_ms = MsSince(t0);
  const uint64_t init_rss = bench::ReadProcessMemory().rss;

  t0 = std::chrono::steady_clock::now();
  StatusOr<Model> model = Model::Load(a.model);
  const double load_ms = MsSince(t0);
  DieIf(model.status(), a.model.c_str());
  ExecutorOptions options;
  options.num_threads = a.threads;
  t0 = std::chrono::steady_clock::now();
  StatusOr<Executor> exec = model->NewExecutor(options);
  const double create_ms = MsSince(t0);
  DieIf(exec.status(), "NewExecutor");
  if (exec->inputs().size() != inputs.size()) {
    Die(a.model + ": main takes " + std::to_string(exec->inputs().size()) + " inputs, " +
        std::to_string(inputs.size()) + " given");
  }

  t0 = std::chrono::steady_clock::now();
  for (size_t k = 0; k < inputs.size(); ++k) DieIf(exec->SetInput(static_cast<int>(k), *inputs[k].dl()), "SetInput");
  DieIf(exec->Run(), "first Run");
  const double first_run_ms = MsSince(t0);

  for (int i = 0; i < a.warmup; ++i) DieIf(exec->Run(), "warm-up Run");
  std::vector<double> runs(static_cast<size_t>(a.repeat));
  for (double& ms : runs) {
    t0 = std::chrono::steady_clock::now();
    DieIf(exec->Run(), "Run");
    ms = MsSince(t0);
  }
  const uint64_t peak_rss = bench::ReadProcessMemory().hwm;

  if (!a.output_dir.empty()) {
    for (size_t k = 0; k < exec->outputs().size(); ++k) {
      StatusOr<NDArray> out = exec->GetOutput(static_cast<int>(k));
      DieIf(out.status(), "GetOutput");
      const std::string path = a.output_dir + "/output_" + std::to_string(k) + ".npy";
      DieIf(WriteNpyFile(path, out->dl()), path.c_str());
    }
  }

  std::sort(runs.begin(), runs.end());
  const size_t n = runs.size();
  const double median = n % 2 ? runs[n / 2] : 0.5 * (runs[n / 2 - 1] + runs[n / 2]);
  const size_t p99_rank = static_cast<size_t>(std::ceil(0.99 * static_cast<double>(n)));  // 1-based
  const double p99 = runs[std::max<size_t>(p99_rank, 1) - 1];
  std::printf(
      "{\"runtime\":\"sorun\",\"version\":\"%s\",\"threads\":%d,\"pool_threads\":%d,"
      "\"bare_rss_bytes\":%llu,\"init_ms\":%.6f,\"init_rss_bytes\":%llu,\"load_ms\":%.6f,\"create_ms\":%.6f,"
      "\"ready_ms\":%.6f,\"first_run_ms\":%.6f,\"run_ms\":{\"median\":%.6f,\"p99\":%.6f,\"min\":%.6f,\"n\":%zu},"
      "\"peak_rss_bytes\":%llu}\n",
      Version(), a.threads, exec->num_threads(), static_cast<unsigned long long>(bare_rss), init_ms,
      static_cast<unsigned long long>(init_rss), load_ms, create_ms, load_ms + create_ms, first_run_ms, median, p99,
      runs.front(), n, static_cast<unsigned long long>(peak_rss));
  return 0;
}

}  // namespace
}  // namespace sorun

int main(int argc, char** argv) { return sorun::Main(argc, argv); }
