#include "executor/executor_registry.h"

#include <mutex>
#include <utility>

namespace sorun {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<ExecutorKindHooks> kinds;
};

Registry& TheRegistry() {
  static Registry* registry = new Registry();
  return *registry;
}

std::vector<ExecutorKindHooks> Kinds() {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.kinds;
}

std::string KindNames(const std::vector<ExecutorKindHooks>& kinds) {
  std::string names;
  for (const ExecutorKindHooks& k : kinds) names += (names.empty() ? "" : ", ") + std::string(ExecutorKindName(k.kind));
  return names.empty() ? "none" : names;
}

}  // namespace

Status RegisterExecutorKind(const ExecutorKindHooks& hooks) {
  if (hooks.from_root == nullptr) return InvalidArgument("RegisterExecutorKind: no from_root hook");
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const ExecutorKindHooks& k : r.kinds) {
    if (k.kind == hooks.kind) return Status::Ok();
  }
  r.kinds.push_back(hooks);
  return Status::Ok();
}

StatusOr<ObjectPtr<Executable>> ExecutableOfModel(const Module& root, const std::string& path) {
  const std::vector<ExecutorKindHooks> kinds = Kinds();
  for (const ExecutorKindHooks& k : kinds) {
    SORUN_ASSIGN_OR_RETURN(ObjectPtr<Executable> executable, k.from_root(root, path));
    if (!executable) continue;
    executable->RecordDeviceTypesNeeded(root);
    return executable;
  }
  std::string runnable;
  bool three_files = false;
  for (size_t i = 0; i < kinds.size(); ++i) {
    runnable += (i == 0 ? "" : i + 1 == kinds.size() ? " or " : ", ") + std::string(kinds[i].root_description);
    three_files = three_files || kinds[i].from_files != nullptr;
  }
  std::string message = std::string("the model's root module is '") + (root.defined() ? root.type_key() : "null") +
                        "', not " + (runnable.empty() ? "a model this runtime runs (it links no executor)" : runnable);
  if (three_files) message += ": give the graph JSON and params separately (three-file deployment)";
  return FailedPrecondition(message);
}

StatusOr<ObjectPtr<Executable>> ExecutableFromFiles(const std::string& graph_json_path, const Module& library,
                                                    const std::string& params_path) {
  const std::vector<ExecutorKindHooks> kinds = Kinds();
  for (const ExecutorKindHooks& k : kinds) {
    if (k.from_files == nullptr) continue;
    SORUN_ASSIGN_OR_RETURN(ObjectPtr<Executable> executable, k.from_files(graph_json_path, library, params_path));
    if (executable) executable->RecordDeviceTypesNeeded(library);  // a packed model as the library: its modules too
    return executable;
  }
  return FailedPrecondition(graph_json_path +
                            ": a three-file deployment (graph JSON + kernel library + params) needs the graph "
                            "executor, which this runtime does not link (it links: " +
                            KindNames(kinds) + ")");
}

std::vector<ExecutorKind> LinkedExecutorKinds() {
  std::vector<ExecutorKind> out;
  for (const ExecutorKindHooks& k : Kinds()) out.push_back(k.kind);
  return out;
}

}  // namespace sorun
