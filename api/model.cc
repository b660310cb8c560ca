// sorun::Model (api/sorun.h): a loaded model and the executors made from it.
#include <utility>

#include "api/model_loading.h"
#include "api/sorun.h"
#include "api/sorun_impl.h"
#include "relax/relax_module.h"

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

}  // namespace

int ProcessPoolThreads() { return ThreadPool::Global().num_threads(); }

Model::Impl Model::Impl::Make(ModelParts parts, std::string path) {
  Impl impl;
  impl.inputs = DescribeGraphInputs(*parts.graph, parts.weights.get());
  impl.outputs = DescribeGraphOutputs(*parts.graph);
  impl.parts = std::move(parts);
  impl.path = std::move(path);
  return impl;
}

Model::Impl Model::Impl::MakeVm(Module root, ObjectPtr<relax::VmProgram> program, std::string path) {
  Impl impl;
  impl.inputs = program->inputs();
  impl.outputs = program->outputs();
  impl.parts.root = std::move(root);
  impl.program = std::move(program);
  impl.path = std::move(path);
  return impl;
}

const Model::Impl& Model::Impl::Empty() {
  static const Impl* empty = new Impl();
  return *empty;
}

StatusOr<Model> Model::Load(const std::string& path, const RuntimeOptions& options) {
  SORUN_ASSIGN_OR_RETURN(Module root, sorun::Load(path, ToLoadOptions(options)));
  if (relax::RelaxExecutableModule* vm = relax::AsRelaxExecutable(root)) {
    SORUN_ASSIGN_OR_RETURN(ObjectPtr<relax::VmProgram> program, vm->Program(path));
    return Model(std::make_shared<const Impl>(Impl::MakeVm(std::move(root), std::move(program), path)));
  }
  auto parts = PartsOfPackedModel(root);
  if (!parts.ok()) return std::move(parts).status().Annotate(path);
  return Model(std::make_shared<const Impl>(Impl::Make(std::move(*parts), path)));
}

StatusOr<Model> Model::LoadFromFiles(const std::string& graph_json_path, const std::string& library_path,
                                     const std::string& params_path, const RuntimeOptions& options) {
  SORUN_ASSIGN_OR_RETURN(Module library, sorun::Load(library_path, ToLoadOptions(options)));
  SORUN_ASSIGN_OR_RETURN(ModelParts parts, PartsOfThreeFiles(graph_json_path, library, params_path));
  return Model(std::make_shared<const Impl>(Impl::Make(std::move(parts), library_path)));
}

// A moved-from Model has no state: its accessors return empty values, NewExecutor an error.
const std::vector<TensorInfo>& Model::inputs() const { return impl_ ? impl_->inputs : Impl::Empty().inputs; }
const std::vector<TensorInfo>& Model::outputs() const { return impl_ ? impl_->outputs : Impl::Empty().outputs; }
const std::string& Model::path() const { return impl_ ? impl_->path : Impl::Empty().path; }

StatusOr<Executor> Model::NewExecutor(const ExecutorOptions& options) const {
  if (!impl_) return FailedPrecondition("NewExecutor on a moved-from sorun::Model");
  std::vector<DLDevice> devices = options.devices;
  if (devices.empty()) devices.push_back(DLDevice{kDLCPU, 0});
  SORUN_ASSIGN_OR_RETURN(std::shared_ptr<ThreadPool> pool, PoolFor(options));
  if (impl_->program) {
    auto vm = relax::VmExecutor::Create(impl_->program, devices, std::move(pool));
    if (!vm.ok()) return std::move(vm).status().Annotate(impl_->path);
    if (options.warmup) SORUN_RETURN_IF_ERROR((*vm)->Warmup());
    auto impl = std::make_unique<Executor::Impl>();
    impl->vm = std::move(*vm);
    impl->model = impl_;
    impl->inputs = &impl_->inputs;
    impl->outputs = &impl_->outputs;
    return Executor(std::move(impl));
  }
  SORUN_ASSIGN_OR_RETURN(std::unique_ptr<GraphExecutor> graph_executor,
                         CreateExecutor(impl_->parts, devices, std::move(pool)));
  if (options.warmup) SORUN_RETURN_IF_ERROR(graph_executor->Warmup());
  auto impl = std::make_unique<Executor::Impl>();
  impl->executor = std::move(graph_executor);
  impl->model = impl_;
  impl->inputs = &impl_->inputs;
  impl->outputs = &impl_->outputs;
  return Executor(std::move(impl));
}

Model::Model(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
Model::Model(const Model&) = default;
Model& Model::operator=(const Model&) = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

}  // namespace sorun
