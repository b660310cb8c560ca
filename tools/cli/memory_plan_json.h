// The memory plan as JSON for `sorun inspect --json` and `sorun bench --json`: a name in the CLI's
// JSON vocabulary for graph_executor's WriteMemoryPlanJson, so the CLI and get_memory_plan report the
// plan with the same keys. Header-only; stateless.
#ifndef SORUN_TOOLS_CLI_MEMORY_PLAN_JSON_H_
#define SORUN_TOOLS_CLI_MEMORY_PLAN_JSON_H_

#include <vector>

#include "graph_executor/graph_executor_module.h"
#include "graph_executor/memory_plan.h"
#include "tools/cli/json_util.h"

namespace sorun {
namespace cli {

// The "memory_plan" array of inspect and bench: graph_executor's one JSON form of the plan
// (WriteMemoryPlanJson, also behind the executor's get_memory_plan), with the measured workspace
// bytes when `with_workspace` (bench, after running).
inline void WriteJsonMemoryPlan(JsonWriter& w, const std::vector<DeviceMemory>& plan, bool with_workspace) {
  WriteMemoryPlanJson(w, plan, with_workspace);
}

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_MEMORY_PLAN_JSON_H_
