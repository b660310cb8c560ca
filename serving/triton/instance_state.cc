#include "serving/triton/instance_state.h"

#include <algorithm>
#include <thread>

#include "serving/triton/triton_errors.h"

namespace sorun::triton {
namespace {

const char* KindName(TRITONSERVER_InstanceGroupKind kind) {
  switch (kind) {
    case TRITONSERVER_INSTANCEGROUPKIND_CPU: return "KIND_CPU";
    case TRITONSERVER_INSTANCEGROUPKIND_GPU: return "KIND_GPU";
    case TRITONSERVER_INSTANCEGROUPKIND_MODEL: return "KIND_MODEL";
    default: return "KIND_AUTO";
  }
}

// The executor's devices: the default device first, then the CPU for the host nodes of a
// heterogeneous graph.
StatusOr<std::vector<DLDevice>> InstanceDevices(const SorunParameters& parameters, TRITONSERVER_InstanceGroupKind kind,
                                                int32_t device_id) {
  DLDevice device{kDLCPU, 0};
  if (!parameters.device.empty()) {
    SORUN_ASSIGN_OR_RETURN(device, ParseDevice(parameters.device));
  } else if (kind == TRITONSERVER_INSTANCEGROUPKIND_GPU) {
    device = DLDevice{kDLCUDA, device_id};
  }
  std::vector<DLDevice> devices{device};
  if (device.device_type != kDLCPU) devices.push_back(DLDevice{kDLCPU, 0});
  return devices;
}

}  // namespace

StatusOr<std::unique_ptr<InstanceState>> InstanceState::Create(const ModelState* model_state,
                                                               TRITONBACKEND_ModelInstance* triton_instance) {
  const char* name = nullptr;
  TRITONSERVER_InstanceGroupKind kind = TRITONSERVER_INSTANCEGROUPKIND_CPU;
  int32_t device_id = 0;
  SORUN_RETURN_IF_ERROR(
      FromTritonError(TRITONBACKEND_ModelInstanceName(triton_instance, &name), "TRITONBACKEND_ModelInstanceName"));
  SORUN_RETURN_IF_ERROR(
      FromTritonError(TRITONBACKEND_ModelInstanceKind(triton_instance, &kind), "TRITONBACKEND_ModelInstanceKind"));
  SORUN_RETURN_IF_ERROR(FromTritonError(TRITONBACKEND_ModelInstanceDeviceId(triton_instance, &device_id),
                                        "TRITONBACKEND_ModelInstanceDeviceId"));
  const std::string context = "model '" + model_state->name() + "' instance '" + name + "' (" + KindName(kind) + ")";

  const SorunParameters& parameters = model_state->parameters();
  ExecutorOptions options;
  StatusOr<std::vector<DLDevice>> devices = InstanceDevices(parameters, kind, device_id);
  if (!devices.ok()) return Status(devices.status()).Annotate(context);
  options.devices = std::move(*devices);
  options.num_threads = parameters.num_threads;
  if (options.num_threads == 0) {
    const int64_t hardware = std::max<int64_t>(1, std::thread::hardware_concurrency());
    options.num_threads = static_cast<int>(std::max<int64_t>(1, hardware / model_state->config().CpuInstanceCount()));
  }
  options.warmup = parameters.warmup;
  options.cuda_graph = parameters.cuda_graph;
  StatusOr<Executor> executor = model_state->model().NewExecutor(options);
  if (!executor.ok()) return Status(executor.status()).Annotate(context + ": creating the executor");

  std::unique_ptr<InstanceState> state(new InstanceState(model_state, triton_instance, name, std::move(*executor)));
  for (const TensorBinding& binding : model_state->inputs()) {
    StatusOr<int> index = state->executor_.InputIndex(binding.name);
    if (!index.ok()) return Status(index.status()).Annotate(context);
    state->input_indices_.push_back(*index);
    std::vector<int64_t> staging_shape = binding.model_shape;
    if (model_state->batch_is_dynamic()) staging_shape[0] = model_state->model_batch();  // the most rows of a run
    StatusOr<NDArray> staging = NDArray::Empty(staging_shape, binding.dtype);
    if (!staging.ok()) return Status(staging.status()).Annotate(context + ": input '" + binding.name + "'");
    state->input_staging_.push_back(std::move(*staging));
  }
  // Outputs the model learnt by probing are named output_<k>, which every executor resolves unrun.
  for (const TensorBinding& binding : model_state->outputs()) {
    StatusOr<int> index = state->executor_.OutputIndex(binding.name);
    if (!index.ok()) return Status(index.status()).Annotate(context);
    state->output_indices_.push_back(*index);
  }
  // Memory per device: the weights are the model's (shared by its instances on that device), the
  // activations this instance's own.
  std::string memory;
  for (const DeviceMemory& m : state->executor_.Memory()) {
    memory += "; " + DeviceName(m.device) + ": weights " + std::to_string(m.weight_bytes) +
              " B (shared), activations " + std::to_string(m.activation_bytes) + " B";
  }
  LogInfo(context + ": executor on " + DeviceName(state->executor_.devices().front()) + ", " +
          std::to_string(state->executor_.num_threads()) + " thread(s)" +
          (parameters.cuda_graph ? ", CUDA graphs" : "") + memory);
  return state;
}

void InstanceState::LogGraphRefusalOnce() {
  if (graph_refusal_logged_ || !model_state_->parameters().cuda_graph) return;
  StatusOr<DeviceGraphReport> report = executor_.GraphReport();
  if (!report.ok() || report->refusal.empty()) return;
  graph_refusal_logged_ = true;
  LogWarning("model '" + model_state_->name() + "' instance '" + name_ +
             "': runs are not replayed as a CUDA graph: " + report->refusal);
}

}  // namespace sorun::triton
