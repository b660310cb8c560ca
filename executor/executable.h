// Executable: a loaded model's runnable root, whatever its kind — what it takes and gives (its
// ModelSignature), what its executors can do (ExecutorCapabilities), and how to make executors. The
// graph executor's model (graph_executor/graph_executable.h: the validated graph, the kernel library,
// ONE copy of the weights) and the Relax VM's program (relax/vm_program.h: the validated bytecode,
// resolved kernels, constants) implement it. One per loaded model, shared (reference counted) by the
// model's front-door objects and every executor made from it; immutable after creation, so every
// method may be called from any thread, NewExecutor from many at once.
#ifndef SORUN_EXECUTOR_EXECUTABLE_H_
#define SORUN_EXECUTOR_EXECUTABLE_H_

#include <memory>
#include <utility>
#include <vector>

#include "base/executor_types.h"
#include "base/object.h"
#include "base/status.h"
#include "executor/executor_kind.h"
#include "executor/model_executor.h"
#include "executor/model_signature.h"
#include "runtime/thread_pool.h"

namespace sorun {

class Executable : public Object {
 public:
  ExecutorKind kind() const { return kind_; }
  const std::shared_ptr<const ModelSignature>& signature() const { return signature_; }
  const ExecutorCapabilities& capabilities() const { return capabilities_; }

  // A new executor on `devices` (non-empty; the first is the default device) whose parallel kernels
  // run on `thread_pool` (null: ThreadPool::Global()). The weights are shared, not copied.
  virtual StatusOr<std::unique_ptr<ModelExecutor>> NewExecutor(std::vector<DLDevice> devices,
                                                               std::shared_ptr<ThreadPool> thread_pool) const = 0;

 protected:
  explicit Executable(ExecutorKind kind) : kind_(kind) {}
  // Called once by the kind while it creates the executable, before anyone else sees it.
  void Describe(std::shared_ptr<const ModelSignature> signature, ExecutorCapabilities capabilities) {
    signature_ = std::move(signature);
    capabilities_ = capabilities;
  }

 private:
  const ExecutorKind kind_;
  std::shared_ptr<const ModelSignature> signature_;
  ExecutorCapabilities capabilities_;
};

}  // namespace sorun

#endif  // SORUN_EXECUTOR_EXECUTABLE_H_
