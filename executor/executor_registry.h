// The executor kinds linked into this program, registered explicitly like device backends: each kind's
// Register function (RegisterGraphExecutor, relax::RegisterRelaxVm) calls RegisterExecutorKind once, and
// the front door calls the kinds it links from one link-chosen file (api/executors_*.cc). The front door
// then turns a loaded model's root module into its Executable here, never naming a kind itself.
//
// A kind is described by hooks: `from_root` claims a root module of its own type (returning null for
// any other root), `from_files` (optional) builds a model from a three-file deployment. Thread-safe:
// registration and lookups may race (a mutex; lookups copy the short list).
#ifndef SORUN_EXECUTOR_EXECUTOR_REGISTRY_H_
#define SORUN_EXECUTOR_EXECUTOR_REGISTRY_H_

#include <string>
#include <vector>

#include "base/object.h"
#include "base/status.h"
#include "executor/executable.h"
#include "executor/executor_kind.h"
#include "runtime/module.h"

namespace sorun {

struct ExecutorKindHooks {
  ExecutorKind kind = ExecutorKind::kGraph;
  // What this kind's root module is called in errors ("a GraphExecutorFactory").
  const char* root_description = "";
  // The executable of the model whose root is `root` (`path` names it in errors), or a null ObjectPtr
  // when `root` is not this kind's.
  StatusOr<ObjectPtr<Executable>> (*from_root)(const Module& root, const std::string& path) = nullptr;
  // The three-file deployment: graph JSON + the loaded kernel library + params file (may be empty).
  // Null when the kind has no such form.
  StatusOr<ObjectPtr<Executable>> (*from_files)(const std::string& graph_json_path, const Module& library,
                                                const std::string& params_path) = nullptr;
};

// Adds a kind; registering the same kind again is a no-op.
Status RegisterExecutorKind(const ExecutorKindHooks& hooks);

// The executable of a loaded model: the registered kind that claims its root, with the device types its
// kernels need recorded from the tree under `root` (Executable::device_types_needed). FailedPrecondition
// naming the root's type and the root types the linked kinds run otherwise.
StatusOr<ObjectPtr<Executable>> ExecutableOfModel(const Module& root, const std::string& path);

// The executable of a three-file deployment (device types needed: those of the tree under `library`);
// FailedPrecondition when no linked kind has that form.
StatusOr<ObjectPtr<Executable>> ExecutableFromFiles(const std::string& graph_json_path, const Module& library,
                                                    const std::string& params_path);

// The registered kinds, in registration order.
std::vector<ExecutorKind> LinkedExecutorKinds();

}  // namespace sorun

#endif  // SORUN_EXECUTOR_EXECUTOR_REGISTRY_H_
