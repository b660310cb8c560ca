// The graph-executor kind's model: what executors of one graph-executor model are made from (the
// validated graph, the kernel library and ONE read-only copy of the weights, shared by every executor),
// as an Executable (executor/executable.h) the front door drives without naming the kind, and the
// functions that find those parts in a loaded module tree or a three-file deployment.
//
// Ownership: ModelParts holds references to everything (the loaded library stays mapped while any
// part, executor or tensor of it lives). Every function is thread-safe; a GraphExecutable is immutable
// and makes executors from many threads at once.
#ifndef SORUN_GRAPH_EXECUTOR_GRAPH_EXECUTABLE_H_
#define SORUN_GRAPH_EXECUTOR_GRAPH_EXECUTABLE_H_

#include <memory>
#include <string>
#include <vector>

#include "base/object.h"
#include "base/status.h"
#include "executor/executable.h"
#include "graph_executor/factory_module.h"
#include "graph_executor/graph_executor.h"
#include "graph_executor/graph_json.h"
#include "graph_executor/shared_weights.h"
#include "runtime/module.h"
#include "runtime/thread_pool.h"

namespace sorun {

// What executors of one model are made from.
struct ModelParts {
  Module root;  // keeps the loaded library (and its module tree) alive
  std::shared_ptr<const GraphSpec> graph;
  Module kernels;                    // the kernel library the graph's nodes call
  ObjectPtr<SharedWeights> weights;  // null: no parameters
  std::string graph_path;            // three-file: the graph JSON (errors name it); else empty
};

// The GraphExecutorFactory at the root of a loaded model, or FailedPrecondition naming what the
// root is instead.
StatusOr<GraphExecutorFactoryNode*> GetFactory(const Module& model);

// The parts of a packed model (a GraphExecutorFactory root importing its kernel library).
StatusOr<ModelParts> PartsOfPackedModel(const Module& model);
// The parts of a three-file deployment with the kernel library `library` already loaded (a packed
// model given there stands for the kernel library it imports). Every rule of the three-file form is
// checked here: the graph parses and validates, the params file parses to its end, every param names
// a graph input of the same shape and dtype. `params_path` may be empty (no parameters).
StatusOr<ModelParts> PartsOfThreeFiles(const std::string& graph_json_path, const Module& library,
                                       const std::string& params_path);

// A new executor from `parts` on `devices`, its parallel kernels on `thread_pool` (null: the
// process-wide pool).
StatusOr<std::unique_ptr<GraphExecutor>> CreateExecutor(const ModelParts& parts, const std::vector<DLDevice>& devices,
                                                        std::shared_ptr<ThreadPool> thread_pool = nullptr);
// An executor for a loaded packed model on `devices` (the first is the default device).
StatusOr<std::unique_ptr<GraphExecutor>> CreateExecutor(const Module& model, const std::vector<DLDevice>& devices);
// The three-file deployment with the kernel library already loaded.
StatusOr<std::unique_ptr<GraphExecutor>> CreateExecutorFromFiles(const std::string& graph_json_path,
                                                                 const Module& library, const std::string& params_path,
                                                                 const std::vector<DLDevice>& devices);

// The Executable of a graph-executor model: its parts and the signature its executors share.
class GraphExecutable final : public Executable {
 public:
  static ObjectPtr<GraphExecutable> Make(ModelParts parts);
  const ModelParts& parts() const { return parts_; }
  StatusOr<std::unique_ptr<ModelExecutor>> NewExecutor(std::vector<DLDevice> devices,
                                                       std::shared_ptr<ThreadPool> thread_pool) const override;

 private:
  GraphExecutable() : Executable(ExecutorKind::kGraph) {}
  ModelParts parts_;
};

// The kind's registry hooks (executor/executor_registry.h): a GraphExecutorFactory root (null for any
// other), and the three-file deployment.
StatusOr<ObjectPtr<Executable>> GraphExecutableOfRoot(const Module& root, const std::string& path);
StatusOr<ObjectPtr<Executable>> GraphExecutableOfFiles(const std::string& graph_json_path, const Module& library,
                                                       const std::string& params_path);

}  // namespace sorun

#endif  // SORUN_GRAPH_EXECUTOR_GRAPH_EXECUTABLE_H_
