// sorun::Model (api/sorun.h): a loaded model and the executors made from it.
#include <utility>

#include "api/model_loading.h"
#include "api/sorun.h"
#include "api/sorun_impl.h"
#include "executor/executor_registry.h"
#include "runtime/registry_keys.h"
#include "runtime/system_lib_module.h"

namespace sorun {
namespace {

LoadOptions ToLoadOptions(const RuntimeOptions& options) {
  LoadOptions load;
  load.verify_checksum = options.verify_checksum;
  switch (options.prefetch) {
    case RuntimeOptions::Prefetch::kNone: load.prefetch = LoadOptions::Prefetch::kNone; break;
    case RuntimeOptions::Prefetch::kWillNeed: load.prefetch = LoadOptions::Prefetch::kWillNeed; break;
    case RuntimeOptions::Prefetch::kPopulate: load.prefetch = LoadOptions::Prefetch::kPopulate; break;
  }
  load.decrypt = options.decrypt;
  load.verify_library = options.verify_library;
  return load;
}

// The thread pool `options` ask for: null (the process-wide pool) unless a thread count, CPU affinity
// or spin time is given.
StatusOr<std::shared_ptr<ThreadPool>> PoolFor(const ExecutorOptions& options) {
  if (options.num_threads == 0 && options.cpu_affinity.empty() && !options.spin_us.has_value()) {
    return std::shared_ptr<ThreadPool>();
  }
  ThreadPoolOptions pool;
  pool.num_threads = options.num_threads;
  pool.cpu_affinity = options.cpu_affinity;
  pool.spin_us = options.spin_us;
  auto made = ThreadPool::Create(pool);
  if (!made.ok()) return std::move(made).status().Annotate("ExecutorOptions");
  return made;
}

const std::vector<TensorInfo>& NoTensors() {
  static const std::vector<TensorInfo>* none = new std::vector<TensorInfo>();
  return *none;
}

const std::string& NoPath() {
  static const std::string* none = new std::string();
  return *none;
}

}  // namespace

int ProcessPoolThreads() { return ThreadPool::Global().num_threads(); }

namespace {

// The executable of a loaded module tree; `path` names it (the name given for bytes from memory).
StatusOr<ObjectPtr<Executable>> ExecutableOfRoot(const Module& root, const std::string& path) {
  auto executable = ExecutableOfModel(root, path);
  if (!executable.ok()) {
    Status s = std::move(executable).status();
    if (s.message().rfind(path, 0) != 0) s.Annotate(path);
    return s;
  }
  return executable;
}

}  // namespace

StatusOr<Model> Model::Load(const std::string& path, const RuntimeOptions& options) {
  SORUN_ASSIGN_OR_RETURN(Module root, sorun::Load(path, ToLoadOptions(options)));
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<Executable> executable, ExecutableOfRoot(root, path));
  return Model(std::make_shared<const Impl>(Impl{std::move(executable), path}));
}

StatusOr<Model> Model::LoadFromMemory(std::string_view bytes, const RuntimeOptions& options, const std::string& name) {
  SORUN_ASSIGN_OR_RETURN(Module root, sorun::LoadFromMemory(bytes, name, ToLoadOptions(options)));
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<Executable> executable, ExecutableOfRoot(root, name));
  return Model(std::make_shared<const Impl>(Impl{std::move(executable), name}));
}

StatusOr<Model> Model::LoadFromFiles(const std::string& graph_json_path, const std::string& library_path,
                                     const std::string& params_path, const RuntimeOptions& options) {
  SORUN_ASSIGN_OR_RETURN(Module library, sorun::Load(library_path, ToLoadOptions(options)));
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<Executable> executable, ExecutableFromFiles(graph_json_path, library, params_path));
  return Model(std::make_shared<const Impl>(Impl{std::move(executable), library_path}));
}

StatusOr<Model> Model::LoadSystemLib(const std::string& prefix) {
  const std::string name = SystemLibName(prefix);
  SORUN_ASSIGN_OR_RETURN(Module root, LoadSystemLibModel(prefix));
  if (ModuleNodeAs<SystemLibModuleNode>(root) != nullptr) {  // the system library itself: no blob
    return FailedPrecondition(name + ": no " + prefix + keys::kSymbolDevMblob + " is registered (nor " + prefix +
                              keys::kSymbolFfiLibraryBinV22 +
                              " of a Relax build), only kernels: the model's graph or executable and its weights "
                              "are missing (link the module blob of TVM's system-lib build with its kernels: "
                              "devc.o)");
  }
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<Executable> executable, ExecutableOfRoot(root, name));
  return Model(std::make_shared<const Impl>(Impl{std::move(executable), name}));
}

// A moved-from Model has no state: its accessors return empty values, NewExecutor an error.
const std::vector<TensorInfo>& Model::inputs() const {
  return impl_ ? impl_->executable->signature()->inputs() : NoTensors();
}
const std::vector<TensorInfo>& Model::outputs() const {
  return impl_ ? impl_->executable->signature()->outputs() : NoTensors();
}
const std::string& Model::path() const { return impl_ ? impl_->path : NoPath(); }
ExecutorCapabilities Model::capabilities() const {
  return impl_ ? impl_->executable->capabilities() : ExecutorCapabilities{};
}
const char* Model::executor_kind() const { return impl_ ? ExecutorKindName(impl_->executable->kind()) : ""; }
std::vector<DLDeviceType> Model::device_types_needed() const {
  return impl_ ? impl_->executable->device_types_needed() : std::vector<DLDeviceType>{};
}

StatusOr<Executor> Model::NewExecutor(const ExecutorOptions& options) const {
  if (!impl_) return FailedPrecondition("NewExecutor on a moved-from sorun::Model");
  std::vector<DLDevice> devices = options.devices;
  if (devices.empty()) devices.push_back(DLDevice{kDLCPU, 0});
  // The devices against the model's kernels first: a refused executor makes no pool, buffer or upload.
  Status fits = impl_->executable->CheckDevices(devices);
  if (!fits.ok()) return std::move(fits).Annotate(impl_->path);
  SORUN_ASSIGN_OR_RETURN(std::shared_ptr<ThreadPool> pool, PoolFor(options));
  SORUN_ASSIGN_OR_RETURN(std::unique_ptr<ModelExecutor> executor,
                         impl_->executable->NewExecutor(std::move(devices), std::move(pool)));
  if (options.cuda_graph) SORUN_RETURN_IF_ERROR(executor->EnableDeviceGraphs());
  if (options.warmup) SORUN_RETURN_IF_ERROR(executor->Warmup());
  auto impl = std::make_unique<Executor::Impl>();
  impl->executor = std::move(executor);
  return Executor(std::move(impl));
}

Model::Model(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
Model::Model(const Model&) = default;
Model& Model::operator=(const Model&) = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

}  // namespace sorun
