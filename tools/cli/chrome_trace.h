// Chrome traces of executor runs (`sorun bench --trace FILE`): kernel calls from Executor::Trace
// written in the Trace Event Format (the JSON object form: {"traceEvents": [...]}), which
// chrome://tracing and Perfetto (ui.perfetto.dev) open. One complete ("X") event per run and per
// kernel call, on one thread track; runs follow one another on the timeline. Pure functions.
#ifndef SORUN_TOOLS_CLI_CHROME_TRACE_H_
#define SORUN_TOOLS_CLI_CHROME_TRACE_H_

#include <string>
#include <vector>

#include "api/sorun.h"

namespace sorun {
namespace cli {

// What the trace's process track is called, and the runs it shows (each as Executor::Trace gave it).
struct TracedRuns {
  std::string process_name;  // e.g. "sorun mlp.so on cpu:0"
  std::vector<std::vector<KernelEvent>> runs;
};

// The trace as one JSON object. Times are microseconds ("ts", "dur"), as the format defines them; each
// kernel event's args carry its node_id and kernel (func_name).
std::string ChromeTraceJson(const TracedRuns& traced);

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_CHROME_TRACE_H_
