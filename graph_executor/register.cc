#include "graph_executor/register.h"

#include <mutex>

#include "executor/executor_registry.h"
#include "graph_executor/factory_module.h"
#include "graph_executor/graph_executable.h"
#include "graph_executor/graph_executor_module.h"
#include "runtime/blob_loader.h"
#include "runtime/contrib/sort.h"
#include "runtime/data_type.h"
#include "runtime/function_registry.h"
#include "runtime/registry_keys.h"

namespace sorun {
namespace {

Status RegisterOnce() {
  ExecutorKindHooks kind;
  kind.kind = ExecutorKind::kGraph;
  kind.root_description = "a GraphExecutorFactory";
  kind.from_root = GraphExecutableOfRoot;
  kind.from_files = GraphExecutableOfFiles;
  SORUN_RETURN_IF_ERROR(RegisterExecutorKind(kind));
  SORUN_RETURN_IF_ERROR(RegisterBlobLoader(keys::kTypeKeyGraphExecutorFactory, LoadGraphExecutorFactory));
  SORUN_RETURN_IF_ERROR(RegisterBlobLoader(keys::kTypeKeyLegacyGraphRuntimeFactory, LoadGraphExecutorFactory));
  FunctionRegistry& registry = FunctionRegistry::Global();
  // tvm.graph_executor.create(graph_json, lib, [lookup_linked_param,] dev_type0, dev_id0, ...)
  SORUN_RETURN_IF_ERROR(registry.Register(
      keys::kGraphExecutorCreate,
      PackedFunc::FromBody(keys::kGraphExecutorCreate,
                           [](PackedArgs args, Value* ret) -> Status {
                             SORUN_RETURN_IF_ERROR(args.ExpectCountAtLeast(4, keys::kGraphExecutorCreate));
                             SORUN_ASSIGN_OR_RETURN(std::string_view json, args.GetStr(0));
                             SORUN_ASSIGN_OR_RETURN(Module lib, args.GetModule(1));
                             const int first = args.code(2) == kTVMPackedFuncHandle ? 3 : 2;
                             SORUN_ASSIGN_OR_RETURN(std::vector<DLDevice> devices,
                                                    DevicesFromPackedArgs(args, first, keys::kGraphExecutorCreate));
                             SORUN_ASSIGN_OR_RETURN(GraphSpec spec, GraphSpec::Parse(json));
                             SORUN_ASSIGN_OR_RETURN(
                                 std::unique_ptr<GraphExecutor> e,
                                 GraphExecutor::Create(std::make_shared<const GraphSpec>(std::move(spec)), lib, devices,
                                                       nullptr));
                             *ret = Value::FromModule(MakeGraphExecutorModule(std::move(e)));
                             return Status::Ok();
                           }),
      /*allow_override=*/true));
  // tvm.graph_executor_factory.create(graph_json, lib, module_name, name0, ndarray0, ...)
  SORUN_RETURN_IF_ERROR(registry.Register(
      keys::kGraphExecutorFactoryCreate,
      PackedFunc::FromBody(keys::kGraphExecutorFactoryCreate,
                           [](PackedArgs args, Value* ret) -> Status {
                             SORUN_RETURN_IF_ERROR(args.ExpectCountAtLeast(3, keys::kGraphExecutorFactoryCreate));
                             if ((args.size() - 3) % 2 != 0) {
                               return InvalidArgument(std::string(keys::kGraphExecutorFactoryCreate) +
                                                      ": params must be (name, tensor) pairs");
                             }
                             SORUN_ASSIGN_OR_RETURN(std::string_view json, args.GetStr(0));
                             SORUN_ASSIGN_OR_RETURN(Module lib, args.GetModule(1));
                             SORUN_ASSIGN_OR_RETURN(std::string_view module_name, args.GetStr(2));
                             NamedTensors params;
                             for (int i = 3; i < args.size(); i += 2) {
                               SORUN_ASSIGN_OR_RETURN(std::string_view name, args.GetStr(i));
                               SORUN_ASSIGN_OR_RETURN(Tensor t, args.GetTensor(i + 1));
                               SORUN_ASSIGN_OR_RETURN(Tensor copy, t.CopyToDevice(CpuDevice()));
                               params.emplace_back(std::string(name), std::move(copy));
                             }
                             SORUN_ASSIGN_OR_RETURN(Module m,
                                                    MakeGraphExecutorFactory(std::string(json), std::move(params), lib,
                                                                             std::string(module_name)));
                             *ret = Value::FromModule(std::move(m));
                             return Status::Ok();
                           }),
      /*allow_override=*/true));
  return Status::Ok();
}

}  // namespace

Status RegisterGraphExecutor() {
  SORUN_RETURN_IF_ERROR(RegisterGlobalSortFunctions());
  static std::mutex mutex;
  static bool done = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (done) return Status::Ok();
  SORUN_RETURN_IF_ERROR(RegisterOnce());
  done = true;
  return Status::Ok();
}

}  // namespace sorun
