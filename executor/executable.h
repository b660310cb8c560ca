// Executable: a loaded model's runnable root, whatever its kind — what it takes and gives (its
// ModelSignature), what its executors can do (ExecutorCapabilities), and how to make executors. The
// graph executor's model (graph_executor/graph_executable.h: the validated graph, the kernel library,
// ONE copy of the weights) and the Relax VM's program (relax/vm_program.h: the validated bytecode,
// resolved kernels, constants) implement it. One per loaded model, shared (reference counted) by the
// model's front-door objects and every executor made from it. It also knows the device types the
// model's kernels need (executor/device_check.h), recorded once for every kind by the executor registry
// as the model is made, and checks an executor's devices against them (CheckDevices). Immutable after
// creation, so every method may be called from any thread, NewExecutor from many at once.
#ifndef SORUN_EXECUTOR_EXECUTABLE_H_
#define SORUN_EXECUTOR_EXECUTABLE_H_

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/executor_types.h"
#include "base/object.h"
#include "base/status.h"
#include "executor/device_check.h"
#include "executor/executor_kind.h"
#include "executor/model_executor.h"
#include "executor/model_signature.h"
#include "runtime/module.h"
#include "runtime/thread_pool.h"

namespace sorun {

class Executable : public Object {
 public:
  ExecutorKind kind() const { return kind_; }
  const std::shared_ptr<const ModelSignature>& signature() const { return signature_; }
  const ExecutorCapabilities& capabilities() const { return capabilities_; }
  // The device types the model's kernels need (DeviceTypesNeeded of its module tree): kDLCUDA for a CUDA
  // module, kDLOpenCL for an OpenCL one, or {kDLCPU} when it has no device module. {kDLCPU} for an
  // executable the registry did not make (tests).
  const std::vector<DLDeviceType>& device_types_needed() const { return device_types_needed_; }
  // The one device check of executor creation, for every kind (CheckExecutorDevices): OK when `devices`
  // can run the model's kernels, else InvalidArgument saying what the model needs and what it was
  // given. Model::NewExecutor calls it before it makes a thread pool or calls NewExecutor.
  Status CheckDevices(const std::vector<DLDevice>& devices) const {
    return CheckExecutorDevices(device_types_needed_, devices);
  }

  // A new executor on `devices` (non-empty; the first is the default device; CheckDevices passed) whose
  // parallel kernels run on `thread_pool` (null: ThreadPool::Global()). The weights are shared, not copied.
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
  // The executor registry (executor_registry.cc) records device_types_needed() from the model's module
  // tree as it makes the model, for every kind. A kind may hand the same executable to several loads of
  // one file (the Relax VM caches its program in the root module): only the first call records.
  friend StatusOr<ObjectPtr<Executable>> ExecutableOfModel(const Module& root, const std::string& path);
  friend StatusOr<ObjectPtr<Executable>> ExecutableFromFiles(const std::string& graph_json_path, const Module& library,
                                                             const std::string& params_path);
  void RecordDeviceTypesNeeded(const Module& tree) {
    std::call_once(device_types_recorded_, [&] { device_types_needed_ = DeviceTypesNeeded(tree); });
  }

  const ExecutorKind kind_;
  std::shared_ptr<const ModelSignature> signature_;
  ExecutorCapabilities capabilities_;
  std::once_flag device_types_recorded_;
  std::vector<DLDeviceType> device_types_needed_{kDLCPU};
};

}  // namespace sorun

#endif  // SORUN_EXECUTOR_EXECUTABLE_H_
