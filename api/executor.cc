// sorun::Executor (api/sorun.h): the typed surface over one ModelExecutor (executor/model_executor.h),
// whatever kind runs the model. Every method forwards; none names a kind.
#include <utility>

#include "api/sorun.h"
#include "api/sorun_impl.h"
#include "runtime/device_api.h"

namespace sorun {
namespace {

const std::vector<TensorInfo>& NoTensors() {
  static const std::vector<TensorInfo>* none = new std::vector<TensorInfo>();
  return *none;
}

const std::vector<DLDevice>& NoDevices() {
  static const std::vector<DLDevice>* none = new std::vector<DLDevice>();
  return *none;
}

Status MovedFrom() { return FailedPrecondition("sorun::Executor was moved from (it has no executor)"); }

}  // namespace

// Every method checks impl_: a moved-from Executor answers errors or empty values, never crashes.
#define SORUN_EXECUTOR_OR_MOVED_FROM()      \
  if (impl_ == nullptr) return MovedFrom(); \
  ModelExecutor& ex = *impl_->executor

Executor::Executor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executor::Executor(Executor&&) noexcept = default;
Executor& Executor::operator=(Executor&&) noexcept = default;
Executor::~Executor() = default;

const std::vector<TensorInfo>& Executor::inputs() const { return impl_ ? impl_->executor->inputs() : NoTensors(); }
const std::vector<TensorInfo>& Executor::outputs() const { return impl_ ? impl_->executor->outputs() : NoTensors(); }
int Executor::num_outputs() const { return impl_ ? impl_->executor->num_outputs() : 0; }
const std::vector<DLDevice>& Executor::devices() const { return impl_ ? impl_->executor->devices() : NoDevices(); }
int Executor::num_threads() const { return impl_ ? impl_->executor->num_threads() : 0; }
ExecutorCapabilities Executor::capabilities() const {
  return impl_ ? impl_->executor->capabilities() : ExecutorCapabilities{};
}

StatusOr<int> Executor::InputIndex(std::string_view name) const {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  return ex.GetInputIndex(name);
}

StatusOr<int> Executor::OutputIndex(std::string_view name) const {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  return ex.GetOutputIndex(name);
}

Status Executor::SetInput(int index, const DLTensor& value) {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  return ex.SetInput(index, value);
}

Status Executor::SetInput(std::string_view name, const DLTensor& value) {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  return ex.SetInput(name, value);
}

Status Executor::SetInputZeroCopy(int index, const DLTensor& value) {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  return ex.SetInputZeroCopy(index, value);
}

Status Executor::SetInputZeroCopy(std::string_view name, const DLTensor& value) {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  return ex.SetInputZeroCopy(name, value);
}

Status Executor::SetOutputZeroCopy(int index, const DLTensor& value) {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  return ex.SetOutputZeroCopy(index, value);
}

Status Executor::Run() {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  return ex.Run();
}

StatusOr<std::vector<NDArray>> Executor::Run(const std::vector<std::pair<std::string, const DLTensor*>>& inputs) {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  for (const auto& [name, value] : inputs) {
    if (value == nullptr) return InvalidArgument("Run: input '" + name + "' is a null DLTensor pointer");
    SORUN_RETURN_IF_ERROR(ex.SetInput(name, *value));
  }
  SORUN_RETURN_IF_ERROR(ex.Run());
  std::vector<NDArray> outputs;
  const int count = ex.num_outputs();
  outputs.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    SORUN_ASSIGN_OR_RETURN(Tensor output, ex.GetOutput(i));
    // Always a new array: the next run overwrites the executor's own.
    auto host = output.CopyToDevice(DLDevice{kDLCPU, 0});
    if (!host.ok()) return std::move(host).status().Annotate("output " + std::to_string(i));
    outputs.push_back(NDArray(std::make_shared<const NDArray::Impl>(std::move(*host))));
  }
  return outputs;
}

StatusOr<NDArray> Executor::GetOutput(int index) const {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  SORUN_ASSIGN_OR_RETURN(Tensor output, ex.GetOutput(index));
  return NDArray(std::make_shared<const NDArray::Impl>(std::move(output)));
}

StatusOr<NDArray> Executor::GetInput(int index) const {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  SORUN_ASSIGN_OR_RETURN(Tensor input, ex.GetInput(index));
  return NDArray(std::make_shared<const NDArray::Impl>(std::move(input)));
}

Status Executor::CopyOutputTo(int index, const DLTensor& out) const {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  return ex.CopyOutputTo(index, out);
}

Status Executor::Synchronize() {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  return ex.Synchronize();
}

StatusOr<void*> Executor::GetStream(DLDevice device) const {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  return ex.GetStream(device);
}

Status Executor::SetStream(DLDevice device, void* stream) {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  return ex.SetStream(device, stream);
}

Status Executor::Warmup() {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  return ex.Warmup();
}

StatusOr<std::vector<NodeProfile>> Executor::Profile(int repeat) {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  return ex.Profile(repeat);
}

StatusOr<std::vector<KernelEvent>> Executor::Trace() {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  return ex.Trace();
}

std::vector<DeviceMemory> Executor::Memory() const {
  return impl_ ? impl_->executor->Memory() : std::vector<DeviceMemory>{};
}

StatusOr<DeviceGraphReport> Executor::GraphReport() const {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  return ex.GraphReport();
}

Status Executor::LoadParams(std::string_view params_bytes) {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  return ex.LoadParams(params_bytes);
}

Status Executor::ShareParams(const Executor& other, std::string_view params_bytes) {
  SORUN_EXECUTOR_OR_MOVED_FROM();
  if (other.impl_ == nullptr) return MovedFrom().Annotate("ShareParams: the other executor");
  return ex.ShareParams(*other.impl_->executor, params_bytes);
}

#undef SORUN_EXECUTOR_OR_MOVED_FROM

}  // namespace sorun
