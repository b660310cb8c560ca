#include "tools/cli/chrome_trace.h"

#include <algorithm>

#include "tools/cli/json_util.h"

namespace sorun {
namespace cli {
namespace {

constexpr int kPid = 1;
constexpr int kTid = 1;
constexpr double kGapBetweenRunsUs = 1;  // keeps consecutive runs apart on the timeline

void CompleteEvent(JsonWriter& w, const std::string& name, const char* category, double ts, double dur) {
  w.Key("name");
  WriteJsonString(w, name);
  w.Key("cat");
  w.String(category);
  w.Key("ph");
  w.String("X");
  w.Key("ts");
  w.Double(ts);
  w.Key("dur");
  w.Double(dur);
  w.Key("pid");
  w.Int(kPid);
  w.Key("tid");
  w.Int(kTid);
}

}  // namespace

std::string ChromeTraceJson(const TracedRuns& traced) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  w.Key("displayTimeUnit");
  w.String("ms");
  w.Key("traceEvents");
  w.StartArray();
  // Metadata: the names of the process and thread tracks.
  w.StartObject();
  w.Key("name");
  w.String("process_name");
  w.Key("ph");
  w.String("M");
  w.Key("pid");
  w.Int(kPid);
  w.Key("args");
  w.StartObject();
  w.Key("name");
  WriteJsonString(w, traced.process_name);
  w.EndObject();
  w.EndObject();
  w.StartObject();
  w.Key("name");
  w.String("thread_name");
  w.Key("ph");
  w.String("M");
  w.Key("pid");
  w.Int(kPid);
  w.Key("tid");
  w.Int(kTid);
  w.Key("args");
  w.StartObject();
  w.Key("name");
  w.String("Run");
  w.EndObject();
  w.EndObject();

  double offset = 0;
  for (size_t r = 0; r < traced.runs.size(); ++r) {
    const std::vector<KernelEvent>& run = traced.runs[r];
    double first = run.empty() ? 0 : run.front().start_us;
    double last = first;
    for (const KernelEvent& e : run) {
      first = std::min(first, e.start_us);
      last = std::max(last, e.start_us + e.duration_us);
    }
    w.StartObject();
    CompleteEvent(w, "run " + std::to_string(r), "run", offset, last - first);
    w.Key("args");
    w.StartObject();
    w.Key("kernel_calls");
    w.Uint64(run.size());
    w.EndObject();
    w.EndObject();
    for (const KernelEvent& e : run) {
      w.StartObject();
      CompleteEvent(w, e.name, "kernel", offset + (e.start_us - first), e.duration_us);
      w.Key("args");
      w.StartObject();
      w.Key("node_id");
      w.Uint(e.node_id);
      w.Key("kernel");
      WriteJsonString(w, e.func_name);
      w.EndObject();
      w.EndObject();
    }
    offset += (last - first) + kGapBetweenRunsUs;
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace cli
}  // namespace sorun
