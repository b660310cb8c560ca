// sorun::Executor (api/sorun.h): the typed surface over one GraphExecutor or one Relax VmExecutor
// (both have the same method set; Dispatch calls whichever the executor holds).
#include <utility>

#include "api/sorun.h"
#include "api/sorun_impl.h"
#include "runtime/device_api.h"

namespace sorun {
namespace {

const std::vector<TensorInfo>& NoTensors() {
  static const std::vector<TensorInfo>* empty = new std::vector<TensorInfo>();
  return *empty;
}

Status MovedFrom() { return FailedPrecondition("sorun::Executor was moved from (it has no graph executor)"); }

}  // namespace

// Every method checks impl_: a moved-from Executor answers errors or empty values, never crashes.
// `body` is a generic lambda taking the executor (GraphExecutor& or relax::VmExecutor&).
#define SORUN_EXECUTOR_DISPATCH(body)       \
  if (impl_ == nullptr) return MovedFrom(); \
  if (impl_->vm) return (body)(*impl_->vm); \
  return (body)(*impl_->executor)

Executor::Executor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executor::Executor(Executor&&) noexcept = default;
Executor& Executor::operator=(Executor&&) noexcept = default;
Executor::~Executor() = default;

const std::vector<TensorInfo>& Executor::inputs() const { return impl_ ? *impl_->inputs : NoTensors(); }
const std::vector<TensorInfo>& Executor::outputs() const {
  if (impl_ == nullptr) return NoTensors();
  return impl_->vm ? impl_->vm->output_info() : *impl_->outputs;  // a VM's: the last run's shapes
}

const std::vector<DLDevice>& Executor::devices() const {
  static const std::vector<DLDevice>* none = new std::vector<DLDevice>();
  if (impl_ == nullptr) return *none;
  return impl_->vm ? impl_->vm->devices() : impl_->executor->devices();
}

int Executor::num_threads() const {
  if (impl_ == nullptr) return 0;
  return impl_->vm ? impl_->vm->num_threads() : impl_->executor->num_threads();
}

StatusOr<int> Executor::InputIndex(std::string_view name) const {
  SORUN_EXECUTOR_DISPATCH([&](auto& ex) { return ex.GetInputIndex(name); });
}

StatusOr<int> Executor::OutputIndex(std::string_view name) const {
  SORUN_EXECUTOR_DISPATCH([&](auto& ex) { return ex.GetOutputIndex(name); });
}

Status Executor::SetInput(int index, const DLTensor& value) {
  SORUN_EXECUTOR_DISPATCH([&](auto& ex) { return ex.SetInput(index, value); });
}

Status Executor::SetInput(std::string_view name, const DLTensor& value) {
  SORUN_EXECUTOR_DISPATCH([&](auto& ex) { return ex.SetInput(name, value); });
}

Status Executor::SetInputZeroCopy(int index, const DLTensor& value) {
  SORUN_EXECUTOR_DISPATCH([&](auto& ex) { return ex.SetInputZeroCopy(index, value); });
}

Status Executor::SetInputZeroCopy(std::string_view name, const DLTensor& value) {
  SORUN_EXECUTOR_DISPATCH([&](auto& ex) -> Status {
    SORUN_ASSIGN_OR_RETURN(int index, ex.GetInputIndex(name));
    return ex.SetInputZeroCopy(index, value);
  });
}

Status Executor::SetOutputZeroCopy(int index, const DLTensor& value) {
  SORUN_EXECUTOR_DISPATCH([&](auto& ex) { return ex.SetOutputZeroCopy(index, value); });
}

Status Executor::Run() {
  SORUN_EXECUTOR_DISPATCH([&](auto& ex) { return ex.Run(); });
}

StatusOr<std::vector<NDArray>> Executor::Run(const std::vector<std::pair<std::string, const DLTensor*>>& inputs) {
  SORUN_EXECUTOR_DISPATCH([&](auto& ex) -> StatusOr<std::vector<NDArray>> {
    for (const auto& [name, value] : inputs) {
      if (value == nullptr) return InvalidArgument("Run: input '" + name + "' is a null DLTensor pointer");
      SORUN_RETURN_IF_ERROR(ex.SetInput(name, *value));
    }
    SORUN_RETURN_IF_ERROR(ex.Run());
    std::vector<NDArray> outputs;
    outputs.reserve(static_cast<size_t>(ex.num_outputs()));
    for (int i = 0; i < ex.num_outputs(); ++i) {
      SORUN_ASSIGN_OR_RETURN(Tensor output, ex.GetOutput(i));
      // Always a new array: the next run overwrites the executor's own.
      auto host = output.CopyToDevice(DLDevice{kDLCPU, 0});
      if (!host.ok()) return std::move(host).status().Annotate("output " + std::to_string(i));
      outputs.push_back(NDArray(std::make_shared<const NDArray::Impl>(std::move(*host))));
    }
    return outputs;
  });
}

StatusOr<NDArray> Executor::GetOutput(int index) const {
  SORUN_EXECUTOR_DISPATCH([&](auto& ex) -> StatusOr<NDArray> {
    SORUN_ASSIGN_OR_RETURN(Tensor output, ex.GetOutput(index));
    return NDArray(std::make_shared<const NDArray::Impl>(std::move(output)));
  });
}

StatusOr<NDArray> Executor::GetInput(int index) const {
  SORUN_EXECUTOR_DISPATCH([&](auto& ex) -> StatusOr<NDArray> {
    SORUN_ASSIGN_OR_RETURN(Tensor input, ex.GetInput(index));
    return NDArray(std::make_shared<const NDArray::Impl>(std::move(input)));
  });
}

Status Executor::CopyOutputTo(int index, const DLTensor& out) const {
  SORUN_EXECUTOR_DISPATCH([&](auto& ex) { return ex.CopyOutputTo(index, out); });
}

Status Executor::Synchronize() {
  if (impl_ == nullptr) return MovedFrom();
  for (const DLDevice& device : devices()) {
    if (device.device_type == kDLCPU) continue;
    SORUN_ASSIGN_OR_RETURN(DeviceApi * api, GetDeviceApi(device.device_type));
    SORUN_RETURN_IF_ERROR(api->Sync(device, nullptr));
  }
  return Status::Ok();
}

Status Executor::Warmup() {
  SORUN_EXECUTOR_DISPATCH([&](auto& ex) { return ex.Warmup(); });
}

StatusOr<std::vector<NodeProfile>> Executor::Profile(int repeat) {
  SORUN_EXECUTOR_DISPATCH([&](auto& ex) { return ex.Profile(repeat); });
}

std::vector<DeviceMemory> Executor::Memory() const {
  if (impl_ == nullptr) return {};
  if (impl_->vm) return impl_->vm->Memory();
  return impl_->executor->memory_plan().devices;
}

Status Executor::LoadParams(std::string_view params_bytes) {
  SORUN_EXECUTOR_DISPATCH([&](auto& ex) { return ex.LoadParams(params_bytes); });
}

Status Executor::ShareParams(const Executor& other, std::string_view params_bytes) {
  if (impl_ == nullptr) return MovedFrom();
  if (other.impl_ == nullptr) return MovedFrom().Annotate("ShareParams: the other executor");
  if (impl_->vm || other.impl_->vm) {
    return Unimplemented(
        "ShareParams: a Relax VM model's weights are constants of its executable, shared by "
        "every executor of the model already");
  }
  return impl_->executor->ShareParams(*other.impl_->executor, params_bytes);
}

#undef SORUN_EXECUTOR_DISPATCH

}  // namespace sorun
