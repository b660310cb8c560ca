// GraphExecutorModuleNode: a GraphExecutor as a module, with TVM's PackedFunc names (set_input,
// set_input_zero_copy, set_output_zero_copy, run, get_output, get_input, get_num_inputs,
// get_num_outputs, get_input_index, get_input_info, get_output_info, load_params, share_params,
// run_individual/profile, get_memory_plan). A thin layer over the typed GraphExecutor API; maps and
// arrays, which sorun's packed values cannot hold, are returned as JSON strings. Single-threaded
// like the executor it owns.
#ifndef SORUN_GRAPH_EXECUTOR_GRAPH_EXECUTOR_MODULE_H_
#define SORUN_GRAPH_EXECUTOR_GRAPH_EXECUTOR_MODULE_H_

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <memory>
#include <vector>

#include "graph_executor/graph_executor.h"
#include "runtime/module.h"

namespace sorun {

class GraphExecutorModuleNode final : public ModuleNode {
 public:
  explicit GraphExecutorModuleNode(std::unique_ptr<GraphExecutor> executor) : executor_(std::move(executor)) {}
  const char* type_key() const override;
  const void* class_id() const override { return &kClassId; }
  static constexpr char kClassId = 0;
  PackedFunc GetFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) override;
  std::vector<std::string> ListFunctionNames() const override;
  GraphExecutor& executor() { return *executor_; }

 private:
  std::unique_ptr<GraphExecutor> executor_;
};

Module MakeGraphExecutorModule(std::unique_ptr<GraphExecutor> executor);
// The executor inside a module made by MakeGraphExecutorModule, or nullptr.
GraphExecutor* AsGraphExecutor(const Module& module);

// {"shape": {"name": [dims]}, "dtype": {"name": "float32"}} (TVM's get_input_info layout).
std::string TensorInfoToJson(const std::vector<TensorInfo>& infos);
// The one JSON form of a memory plan's devices (get_memory_plan, `sorun inspect --json`, `sorun bench
// --json`): [{"device", "param_bytes", "activation_bytes"[, "workspace_bytes"]}], written to `w`.
// Workspace bytes are measured by running, so callers that have not run leave `with_workspace` false.
void WriteMemoryPlanJson(rapidjson::Writer<rapidjson::StringBuffer>& w, const std::vector<DeviceMemory>& devices,
                         bool with_workspace);
// The memory plan as JSON: {"devices": WriteMemoryPlanJson(plan.devices, with workspace bytes)}.
std::string MemoryPlanToJson(const MemoryPlan& plan);

}  // namespace sorun

#endif  // SORUN_GRAPH_EXECUTOR_GRAPH_EXECUTOR_MODULE_H_
