// The memory plan as JSON, shared by `sorun inspect --json` and `sorun bench --json` so both report
// it with the same keys. Header-only; stateless.
#ifndef SORUN_TOOLS_CLI_MEMORY_PLAN_JSON_H_
#define SORUN_TOOLS_CLI_MEMORY_PLAN_JSON_H_

#include <vector>

#include "graph_executor/memory_plan.h"
#include "runtime/data_type.h"
#include "tools/cli/json_util.h"

namespace sorun {
namespace cli {

// The "memory_plan" array of inspect and bench: one object per device with its parameter and
// activation bytes, plus the measured workspace bytes when `with_workspace` (bench, after running).
inline void WriteJsonMemoryPlan(JsonWriter& w, const std::vector<DeviceMemory>& plan, bool with_workspace) {
  w.StartArray();
  for (const DeviceMemory& d : plan) {
    w.StartObject();
    w.Key("device");
    WriteJsonString(w, DeviceToString(d.device));
    w.Key("param_bytes");
    w.Uint64(d.weight_bytes);
    w.Key("activation_bytes");
    w.Uint64(d.activation_bytes);
    if (with_workspace) {
      w.Key("workspace_bytes");
      w.Uint64(d.workspace_bytes);
    }
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_MEMORY_PLAN_JSON_H_
