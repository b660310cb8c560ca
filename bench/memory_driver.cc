// Peak memory of ONE fresh process that loads a model, creates executors and runs them: run it once
// per scenario (bench/run_memory.sh). Prints one JSON line.
//
//   memory_driver --model M.so [--executors N] [--verify 0|1] [--hold FILE] [--label NAME]
//
// Stages (RSS, peak RSS = VmHWM, RssAnon, RssFile, PSS; bench/process_stats.h): after Initialize
// (baseline), after Model::Load, after NewExecutor, after the first run (inputs zero-filled). A
// parameter counts as in place when its data lies in the model file's own mapping (/proc/self/maps),
// as copied otherwise; both are read after every measurement. Targets:
//   peak RSS after load + first run <= params + activations + 32 MiB           ("peak_ok")
//   with --executors N (1, 2, 4, 8 ... up to N from one load, each created and run once):
//   RSS growth per extra executor <= its activations + 1 MiB                   ("per_extra_ok")
// --hold FILE: after the run, create FILE.ready.<pid> and wait until FILE exists before the final
// reading, so several processes can be measured while all of them map the model (PSS divides the
// shared weight pages among them).
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "api/sorun.h"
#include "bench/process_stats.h"

namespace sorun {
namespace {

struct Args {
  std::string model;
  int executors = 1;
  bool verify = true;
  std::string hold;
  std::string label;
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "memory_driver: %s\n", what.c_str());
  std::exit(1);
}

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Die(k + " needs a value");
      return argv[++i];
    };
    if (k == "--model") {
      a.model = next();
    } else if (k == "--executors") {
      a.executors = std::atoi(next().c_str());
    } else if (k == "--verify") {
      a.verify = next() != "0";
    } else if (k == "--hold") {
      a.hold = next();
    } else if (k == "--label") {
      a.label = next();
    } else {
      Die("unknown argument " + k);
    }
  }
  if (a.model.empty() || a.executors < 1)
    Die("usage: memory_driver --model M.so [--executors N] [--verify 0|1] [--hold FILE]");
  return a;
}

// Zero-fills every user input (not the bound parameters) and runs once. The zero tensors are made once
// and reused for every executor, so that the driver's own buffers do not count as executor growth.
void RunOnce(Executor& e) {
  static std::map<std::string, NDArray>* zeros = new std::map<std::string, NDArray>();
  for (const TensorInfo& in : e.inputs()) {
    if (in.is_param) continue;
    auto it = zeros->find(in.name);
    if (it == zeros->end()) {
      auto t = NDArray::Empty(in.shape, in.dtype);
      if (!t.ok()) Die(t.status().ToString());
      std::memset(t->data(), 0, static_cast<size_t>(t->nbytes()));
      it = zeros->emplace(in.name, *t).first;
    }
    Status s = e.SetInput(in.name, it->second.dl());
    if (!s.ok()) Die(s.ToString());
  }
  Status s = e.Run();
  if (!s.ok()) Die(s.ToString());
}

}  // namespace
}  // namespace sorun

int main(int argc, char** argv) {
  using namespace sorun;
  using bench::ProcessMemory;
  Args args = Parse(argc, argv);
  if (!Initialize().ok()) Die("Initialize failed");
  ProcessMemory baseline = bench::ReadProcessMemory();

  auto t0 = std::chrono::steady_clock::now();
  RuntimeOptions options;
  options.verify_checksum = args.verify;
  auto model = Model::Load(args.model, options);
  if (!model.ok()) Die(model.status().ToString());
  ProcessMemory after_load = bench::ReadProcessMemory();

  std::vector<Executor> execs;
  auto first = model->NewExecutor();
  if (!first.ok()) Die(first.status().ToString());
  execs.push_back(std::move(*first));
  double ready_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ProcessMemory after_create = bench::ReadProcessMemory();
  RunOnce(execs[0]);
  ProcessMemory after_run = bench::ReadProcessMemory();
  uint64_t activation_bytes = 0, workspace_bytes = 0;
  for (const DeviceMemory& d : execs[0].Memory()) {
    activation_bytes += d.activation_bytes;
    workspace_bytes += d.workspace_bytes;
  }

  // More executors from the same load.
  std::string scaling;
  uint64_t worst_extra = 0;
  for (int n = 2; n <= args.executors; ++n) {
    auto e = model->NewExecutor();
    if (!e.ok()) Die(e.status().ToString());
    RunOnce(*e);
    execs.push_back(std::move(*e));
    if ((n & (n - 1)) == 0 || n == args.executors) {
      ProcessMemory m = bench::ReadProcessMemory();
      uint64_t extra = m.rss > after_run.rss ? (m.rss - after_run.rss) / static_cast<uint64_t>(n - 1) : 0;
      if (extra > worst_extra) worst_extra = extra;
      char buf[160];
      std::snprintf(buf, sizeof(buf), "%s{\"executors\":%d,\"rss_mib\":%.3f,\"per_extra_kib\":%.1f}",
                    scaling.empty() ? "" : ",", n, bench::MiB(m.rss), extra / 1024.0);
      scaling += buf;
    }
  }

  ProcessMemory held;
  if (!args.hold.empty()) {
    std::string ready = args.hold + ".ready." + std::to_string(getpid());
    if (std::FILE* f = std::fopen(ready.c_str(), "w")) std::fclose(f);
    while (access(args.hold.c_str(), F_OK) != 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    held = bench::ReadProcessMemory();
  }

  // Where each parameter's data lives, read after every measurement (reading /proc allocates).
  uint64_t param_bytes = 0, copied_bytes = 0, copied = 0, in_place = 0;
  char* model_file = realpath(args.model.c_str(), nullptr);
  const std::string model_path = model_file != nullptr ? model_file : args.model;
  std::free(model_file);
  for (size_t i = 0; i < execs[0].inputs().size(); ++i) {
    if (!execs[0].inputs()[i].is_param) continue;
    auto weight = execs[0].GetInput(static_cast<int>(i));  // the shared weight itself
    if (!weight.ok()) Die(weight.status().ToString());
    param_bytes += weight->nbytes();
    if (bench::MappedFileAt(weight->data()) == model_path) {
      ++in_place;
    } else {
      ++copied;
      copied_bytes += weight->nbytes();
    }
  }
  const uint64_t limit = param_bytes + activation_bytes + (32ull << 20);

  const uint64_t peak = after_run.hwm;
  std::printf(
      "{\"label\":\"%s\",\"model\":\"%s\",\"verify\":%d,\"params_mib\":%.3f,\"params_in_place\":%llu,"
      "\"params_copied\":%llu,\"copied_mib\":%.3f,\"activations_mib\":%.3f,\"workspace_mib\":%.3f,"
      "\"load_to_ready_ms\":%.3f,\"baseline\":%s,\"after_load\":%s,\"after_create\":%s,\"after_first_run\":%s,"
      "\"peak_mib\":%.3f,\"limit_mib\":%.3f,\"peak_over_params_act_mib\":%.3f,\"peak_ok\":%s",
      args.label.c_str(), args.model.c_str(), args.verify ? 1 : 0, bench::MiB(param_bytes),
      static_cast<unsigned long long>(in_place), static_cast<unsigned long long>(copied), bench::MiB(copied_bytes),
      bench::MiB(activation_bytes), bench::MiB(workspace_bytes), ready_ms, bench::ProcessMemoryJson(baseline).c_str(),
      bench::ProcessMemoryJson(after_load).c_str(), bench::ProcessMemoryJson(after_create).c_str(),
      bench::ProcessMemoryJson(after_run).c_str(), bench::MiB(peak), bench::MiB(limit),
      bench::MiB(peak) - bench::MiB(param_bytes + activation_bytes), peak <= limit ? "true" : "false");
  if (args.executors > 1) {
    const uint64_t extra_limit = activation_bytes + (1ull << 20);
    std::printf(",\"scaling\":[%s],\"worst_per_extra_kib\":%.1f,\"per_extra_limit_kib\":%.1f,\"per_extra_ok\":%s",
                scaling.c_str(), worst_extra / 1024.0, extra_limit / 1024.0,
                worst_extra <= extra_limit ? "true" : "false");
  }
  if (!args.hold.empty()) std::printf(",\"held\":%s", bench::ProcessMemoryJson(held).c_str());
  std::printf("}\n");
  return 0;
}
