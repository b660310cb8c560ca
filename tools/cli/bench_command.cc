#include "tools/cli/bench_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "base/file_checks.h"
#include "base/file_util.h"
#include "graph_executor/memory_plan.h"  // FormatBytes
#include "runtime/data_type.h"
#include "tools/cli/chrome_trace.h"
#include "tools/cli/flags.h"
#include "tools/cli/json_util.h"
#include "tools/cli/latency_stats.h"
#include "tools/cli/memory_plan_json.h"
#include "tools/cli/model_protection.h"
#include "tools/cli/model_session.h"
#include "tools/cli/process_memory.h"
#include "tools/cli/text_table.h"

namespace sorun {
namespace cli {
namespace {

// Runs --trace records (each traced run waits for the device after every kernel, so it is not timed).
constexpr int kTracedRuns = 3;

const std::vector<FlagSpec>& BenchFlags() {
  static const std::vector<FlagSpec> specs = [] {
    std::vector<FlagSpec> v = {
        {"--device", "", true, false, "DEVICE", "cpu (default), opencl[:N] or cuda[:N]"},
        {"--graph", "", true, false, "G.json", "three-file deployment: graph JSON; MODEL is then the kernel library"},
        {"--params", "", true, false, "P.params", "three-file deployment: params file (needs --graph)"},
        {"--input", "", true, true, "NAME=FILE.npy", "value of graph input NAME (others: pseudo-random)"},
        {"--warmup", "", true, false, "N",
         "untimed runs before measuring (default " + std::to_string(kDefaultWarmup) + ")"},
        {"--repeat", "", true, false, "N", "timed runs, at least 1 (default " + std::to_string(kDefaultRepeat) + ")"},
        {"--json", "", false, false, "", "print one JSON object instead of text"},
        {"--no-verify", "", false, false, "", "skip the blob integrity check at load"},
        {"--prefetch", "", true, false, "MODE",
         "weights at load: none, willneed (default) or populate (RuntimeOptions::prefetch)"},
        {"--warm-executor", "", false, false, "", "call Executor::Warmup() before the first run (timed, part of TTFR)"},
        {"--cuda-graph", "", false, false, "",
         "record a run as a CUDA graph and replay it (ExecutorOptions::cuda_graph; the report says if refused)"},
        {"--trace", "", true, false, "FILE.json",
         "after the timed runs, trace " + std::to_string(kTracedRuns) +
             " runs kernel by kernel into FILE.json (Chrome trace: chrome://tracing, Perfetto)"},
    };
    for (FlagSpec& f : ProtectionFlagSpecs()) v.push_back(std::move(f));
    return v;
  }();
  return specs;
}

// Milliseconds with at least 3 decimals and 3 significant digits ("2.345", "0.0112", "0.000155").
std::string Ms(double v) {
  int decimals = 3;
  if (v > 0 && v < 1) decimals = std::min(9, std::max(3, 2 - static_cast<int>(std::floor(std::log10(v)))));
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

const char* PrefetchName(RuntimeOptions::Prefetch mode) {
  switch (mode) {
    case RuntimeOptions::Prefetch::kNone: return "none";
    case RuntimeOptions::Prefetch::kWillNeed: return "willneed";
    case RuntimeOptions::Prefetch::kPopulate: return "populate";
  }
  return "?";
}

struct BenchResult {
  std::string model;
  DLDevice device{kDLCPU, 0};
  double load_ms = 0, create_ms = 0, warmup_ms = 0, first_run_ms = 0;
  std::string prefetch;
  bool warm_executor = false;
  // Time to first result: load + create + Warmup (when asked) + first run; inputs are bound untimed.
  double ttfr_ms() const { return load_ms + create_ms + warmup_ms + first_run_ms; }
  LatencyStats run;
  int repeat = 0, warmup = 0;
  uint64_t peak_rss = 0, current_rss = 0;
  std::vector<std::string> generated;
  std::vector<DeviceMemory> memory;
  std::string trace_path;  // --trace: where the Chrome trace went
  size_t traced_kernel_calls = 0;
  StartupTimings cold_start;  // device start-up work of load + create
  DeviceGraphReport graph;    // --cuda-graph
};

// Device start-up work is reported for CUDA devices (what runtime/startup_timings.h instruments).
bool HasColdStart(const BenchResult& r) { return r.device.device_type == kDLCUDA; }

std::string ToJson(const BenchResult& r) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  w.Key("model");
  WriteJsonString(w, r.model);
  w.Key("device");
  WriteJsonString(w, DeviceToString(r.device));
  w.Key("load_ms");
  w.Double(r.load_ms);
  w.Key("create_ms");
  w.Double(r.create_ms);
  w.Key("warmup_ms");
  w.Double(r.warmup_ms);
  w.Key("first_run_ms");
  w.Double(r.first_run_ms);
  w.Key("ttfr_ms");
  w.Double(r.ttfr_ms());
  w.Key("prefetch");
  WriteJsonString(w, r.prefetch);
  w.Key("warm_executor");
  w.Bool(r.warm_executor);
  w.Key("run_ms");
  w.StartObject();
  w.Key("min");
  w.Double(r.run.min);
  w.Key("median");
  w.Double(r.run.median);
  w.Key("p90");
  w.Double(r.run.p90);
  w.Key("max");
  w.Double(r.run.max);
  w.Key("mean");
  w.Double(r.run.mean);
  w.EndObject();
  w.Key("repeat");
  w.Int(r.repeat);
  w.Key("warmup");
  w.Int(r.warmup);
  w.Key("peak_rss_bytes");
  w.Uint64(r.peak_rss);
  w.Key("current_rss_bytes");
  w.Uint64(r.current_rss);
  w.Key("generated_inputs");
  WriteJsonStrings(w, r.generated);
  w.Key("memory_plan");
  WriteJsonMemoryPlan(w, r.memory, /*with_workspace=*/true);
  if (HasColdStart(r)) {
    const StartupTimings& c = r.cold_start;
    w.Key("cold_start");
    w.StartObject();
    w.Key("driver_open_ms");
    w.Double(c.driver_open_ms);
    w.Key("device_context_ms");
    w.Double(c.device_context_ms);
    w.Key("module_load_ms");
    w.Double(c.module_load_ms);
    w.Key("modules_loaded");
    w.Uint64(c.modules_loaded);
    w.Key("modules_ptx_only");
    w.Uint64(c.modules_ptx_only);
    w.Key("jit_ms");
    w.Double(c.jit_ms);
    w.Key("weight_upload_ms");
    w.Double(c.weight_upload_ms);
    w.Key("weight_bytes_uploaded");
    w.Uint64(c.weight_bytes_uploaded);
    w.Key("first_run_ms");
    w.Double(r.first_run_ms);
    w.EndObject();
  }
  if (r.graph.requested) {
    w.Key("cuda_graph");
    w.StartObject();
    w.Key("active");
    w.Bool(r.graph.active);
    w.Key("captures");
    w.Int64(r.graph.captures);
    w.Key("replays");
    w.Int64(r.graph.replays);
    w.Key("uncaptured_runs");
    w.Int64(r.graph.uncaptured_runs);
    w.Key("operations");
    w.Uint64(r.graph.operations);
    w.Key("refusal");
    WriteJsonString(w, r.graph.refusal);
    w.EndObject();
  }
  if (!r.trace_path.empty()) {
    w.Key("trace");
    w.StartObject();
    w.Key("path");
    WriteJsonString(w, r.trace_path);
    w.Key("runs");
    w.Int(kTracedRuns);
    w.Key("kernel_calls");
    w.Uint64(r.traced_kernel_calls);
    w.EndObject();
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string ToText(const BenchResult& r) {
  TextTable t("");
  t.AddRow({"model", r.model});
  t.AddRow({"device", DeviceToString(r.device)});
  if (!r.generated.empty()) {
    std::string names;
    for (const std::string& n : r.generated) names += (names.empty() ? "" : ", ") + n;
    t.AddRow({"inputs", "pseudo-random: " + names});
  }
  t.AddRow({"load", Ms(r.load_ms) + " ms"});
  t.AddRow({"create", Ms(r.create_ms) + " ms"});
  if (r.warm_executor) t.AddRow({"warmup", Ms(r.warmup_ms) + " ms (Executor::Warmup)"});
  t.AddRow({"first run", Ms(r.first_run_ms) + " ms"});
  t.AddRow({"TTFR", Ms(r.ttfr_ms()) + " ms (time to first result: load + create" +
                        std::string(r.warm_executor ? " + warmup" : "") + " + first run; prefetch " + r.prefetch +
                        ")"});
  t.AddRow({"run", "min " + Ms(r.run.min) + "  median " + Ms(r.run.median) + "  p90 " + Ms(r.run.p90) + "  max " +
                       Ms(r.run.max) + "  mean " + Ms(r.run.mean) + " ms  (" + std::to_string(r.repeat) +
                       " runs after " + std::to_string(r.warmup) + " warmup)"});
  if (HasColdStart(r)) {
    const StartupTimings& c = r.cold_start;
    std::string code = std::to_string(c.modules_loaded) + " module(s) in " + Ms(c.module_load_ms) + " ms";
    if (c.modules_loaded > 0) {
      code += c.jit_ms > 0             ? " (the driver compiled PTX for " + Ms(c.jit_ms) + " ms)"
              : c.modules_ptx_only > 0 ? " (PTX only, no compile time: the driver's JIT cache served it)"
                                       : " (machine code: no JIT)";
    }
    t.AddRow({"cold start", "driver " + Ms(c.driver_open_ms) + " ms, context " + Ms(c.device_context_ms) + " ms, " +
                                code + ", weights " + FormatBytes(c.weight_bytes_uploaded) + " in " +
                                Ms(c.weight_upload_ms) + " ms (in load + create)"});
  }
  if (r.graph.requested) {
    std::string text = std::to_string(r.graph.captures) + " capture(s), " + std::to_string(r.graph.replays) +
                       " replay(s), " + std::to_string(r.graph.uncaptured_runs) + " run(s) kernel by kernel";
    if (r.graph.active) text += "; " + std::to_string(r.graph.operations) + " operations per replay";
    if (!r.graph.refusal.empty()) text += "; not recorded: " + r.graph.refusal;
    t.AddRow({"CUDA graph", text});
  }
  t.AddRow({"peak RSS", FormatBytes(r.peak_rss) + " (current " + FormatBytes(r.current_rss) + ")"});
  for (size_t i = 0; i < r.memory.size(); ++i) {
    const DeviceMemory& d = r.memory[i];
    t.AddRow({i == 0 ? "memory plan" : "", DeviceToString(d.device) + ": params " + FormatBytes(d.weight_bytes) +
                                               ", activations " + FormatBytes(d.activation_bytes) + ", workspace " +
                                               FormatBytes(d.workspace_bytes)});
  }
  if (!r.trace_path.empty()) {
    t.AddRow({"trace", r.trace_path + " (" + std::to_string(kTracedRuns) + " runs, " +
                           std::to_string(r.traced_kernel_calls) + " kernel calls; chrome://tracing or Perfetto)"});
  }
  return t.Render();
}

// Traces kTracedRuns runs of `s` into `path` (Chrome trace JSON).
Status WriteTrace(ModelSession& s, const std::string& model, DLDevice device, const std::string& path,
                  size_t* kernel_calls) {
  TracedRuns traced;
  traced.process_name = "sorun " + model + " on " + DeviceToString(device);
  for (int i = 0; i < kTracedRuns; ++i) {
    SORUN_ASSIGN_OR_RETURN(std::vector<KernelEvent> events, s.executor().Trace());
    *kernel_calls += events.size();
    traced.runs.push_back(std::move(events));
  }
  return NamePath(WriteFileBytes(path, ChromeTraceJson(traced)), path);
}

}  // namespace

std::string BenchUsage() {
  return "Usage: sorun bench MODEL [--device cpu|opencl[:N]|cuda[:N]] [--input NAME=FILE.npy]...\n"
         "                   [--graph G.json [--params P.params]] [--warmup N] [--repeat N] [--json]\n"
         "                   [--prefetch none|willneed|populate] [--warm-executor] [--trace FILE.json]\n"
         "                   [--cuda-graph] [--key KEYFILE] [--public-key PUB.pem]\n"
         "\n"
         "Measures load time, executor creation, the first run, the time to first result (load + create +\n"
         "first run) and steady-state run latency (min, median, p90, max, mean over --repeat runs after\n"
         "--warmup untimed runs), peak RSS and the memory plan; on a device, the cold start split into driver,\n"
         "context, device code (and PTX JIT) and weight upload.\n"
         "Inputs not given are filled with deterministic pseudo-random values. Device work is synchronised\n"
         "before each time is taken. --key and --public-key: as for `sorun run` (decryption and the signature\n"
         "check are part of the load time).\n"
         "\n" +
         FormatFlagHelp(BenchFlags());
}

int RunBenchCommand(const std::vector<std::string>& args, CommandIo& io) {
  auto flags = ParseFlags(args, BenchFlags());
  if (!flags.ok()) return UsageError(io, "bench: " + flags.status().message());
  const auto& pos = flags->positionals();
  if (pos.empty()) return UsageError(io, "bench: missing MODEL (usage: sorun bench MODEL [flags])");
  if (pos.size() > 1) return UsageError(io, "bench: unexpected argument '" + pos[1] + "' (one MODEL only)");
  BenchResult result;
  result.model = pos[0];
  if (flags->Has("--device")) {
    auto d = ParseDevice(flags->Value("--device"));
    if (!d.ok()) return UsageError(io, "bench: --device: " + d.status().message());
    result.device = *d;
  }
  result.warmup = kDefaultWarmup;
  result.repeat = kDefaultRepeat;
  if (flags->Has("--warmup")) {
    auto v = ParseIntFlag("--warmup", flags->Value("--warmup"), 0, 1000000);
    if (!v.ok()) return UsageError(io, "bench: " + v.status().message());
    result.warmup = static_cast<int>(*v);
  }
  if (flags->Has("--repeat")) {
    auto v = ParseIntFlag("--repeat", flags->Value("--repeat"), 1, 10000000);
    if (!v.ok()) return UsageError(io, "bench: " + v.status().message());
    result.repeat = static_cast<int>(*v);
  }
  auto inputs = ParseInputFlags(flags->Values("--input"));
  if (!inputs.ok()) return UsageError(io, "bench: " + inputs.status().message());
  ModelSource source;
  source.model_path = pos[0];
  source.graph_path = flags->Value("--graph");
  source.params_path = flags->Value("--params");
  source.verify_checksum = !flags->Has("--no-verify");
  auto protection = ReadProtectionFlags(*flags);
  if (!protection.ok()) return UsageError(io, "bench: " + protection.status().message());
  source.protection = *protection;
  if (flags->Has("--prefetch")) {
    const std::string mode = flags->Value("--prefetch");
    if (mode == "none") {
      source.prefetch = RuntimeOptions::Prefetch::kNone;
    } else if (mode == "willneed") {
      source.prefetch = RuntimeOptions::Prefetch::kWillNeed;
    } else if (mode == "populate") {
      source.prefetch = RuntimeOptions::Prefetch::kPopulate;
    } else {
      return UsageError(io, "bench: --prefetch '" + mode + "' is not one of none, willneed, populate");
    }
  }
  source.warm_executor = flags->Has("--warm-executor");
  source.cuda_graph = flags->Has("--cuda-graph");
  result.trace_path = flags->Value("--trace");
  if (!result.trace_path.empty()) {
    // Refused before any work: a path sorun may not replace, or a directory that is not there.
    Status writable = CheckOutputFile(result.trace_path, "--trace file");
    if (!writable.ok()) return UsageError(io, "bench: " + writable.message());
    const std::filesystem::path parent = std::filesystem::path(result.trace_path).parent_path();
    std::error_code ec;
    if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
      return UsageError(
          io, "bench: --trace file " + result.trace_path + ": directory " + parent.string() + " does not exist");
    }
  }
  result.warm_executor = source.warm_executor;
  result.prefetch = PrefetchName(source.prefetch);
  if (!source.params_path.empty() && source.graph_path.empty()) {
    return UsageError(io, "bench: --params needs --graph (a packed model carries its own parameters)");
  }

  auto session = ModelSession::Open(source, result.device);
  if (!session.ok()) return ModelError(io, session.status());
  ModelSession& s = **session;
  result.load_ms = s.load_ms();
  result.create_ms = s.create_ms();
  result.warmup_ms = s.warmup_ms();
  result.cold_start = s.cold_start();
  Status bound = s.BindInputs(*inputs, /*fill_missing=*/true, &result.generated);
  if (!bound.ok()) return ModelError(io, bound);
  Status synced = s.Sync();  // input uploads are not part of the first run
  if (!synced.ok()) return ModelError(io, synced);

  double t0 = NowMs();
  Status ran = s.Run();
  result.first_run_ms = NowMs() - t0;
  if (!ran.ok()) return ModelError(io, ran);
  for (int i = 0; i < result.warmup; ++i) {
    ran = s.Run();
    if (!ran.ok()) return ModelError(io, ran);
  }
  std::vector<double> samples;
  samples.reserve(static_cast<size_t>(result.repeat));
  for (int i = 0; i < result.repeat; ++i) {
    double start = NowMs();
    ran = s.Run();  // includes the device synchronisation
    samples.push_back(NowMs() - start);
    if (!ran.ok()) return ModelError(io, ran);
  }
  result.run = SummarizeLatencies(samples);
  result.current_rss = CurrentRssBytes();
  // ru_maxrss is updated lazily by the kernel and can trail the current RSS.
  result.peak_rss = std::max(PeakRssBytes(), result.current_rss);
  result.memory = s.executor().Memory();
  auto graph = s.executor().GraphReport();
  if (!graph.ok()) return ModelError(io, graph.status());
  result.graph = *graph;
  if (!result.trace_path.empty()) {
    Status traced = WriteTrace(s, result.model, result.device, result.trace_path, &result.traced_kernel_calls);
    if (!traced.ok()) return ModelError(io, traced);
  }

  if (flags->Has("--json")) {
    io.out << ToJson(result) << "\n";
  } else {
    io.out << ToText(result);
  }
  io.out.flush();
  return kExitSuccess;
}

}  // namespace cli
}  // namespace sorun
