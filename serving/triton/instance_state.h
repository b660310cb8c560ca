// One Triton model instance: one sorun::Executor over its model's shared weights (model_state.h),
// on the device its instance group names, plus the host arrays that gather request rows when a
// batch chunk spans requests (request_execution.h).
//
// Created by TRITONBACKEND_ModelInstanceInitialize, destroyed by TRITONBACKEND_ModelInstanceFinalize;
// Triton owns it through TRITONBACKEND_ModelInstanceSetState. The ModelState must outlive it (Triton
// finalizes every instance before its model). Used by the instance's one execute thread only.
#ifndef SORUN_SERVING_TRITON_INSTANCE_STATE_H_
#define SORUN_SERVING_TRITON_INSTANCE_STATE_H_

#include <dlpack/dlpack.h>

#include <memory>
#include <string>
#include <vector>

#include "api/sorun.h"
#include "serving/triton/model_state.h"
#include "serving/triton/triton_backend_api.h"

namespace sorun::triton {

class InstanceState {
 public:
  // Creates the executor: device from the `device` parameter, else cuda:<device id> for KIND_GPU and
  // cpu:0 otherwise; threads from `num_threads`, else the hardware threads shared among the model's
  // CPU instances. Errors name the instance.
  static StatusOr<std::unique_ptr<InstanceState>> Create(const ModelState* model_state,
                                                         TRITONBACKEND_ModelInstance* triton_instance);

  const ModelState& model_state() const { return *model_state_; }
  TRITONBACKEND_ModelInstance* triton_instance() const { return triton_instance_; }
  const std::string& name() const { return name_; }
  sorun::Executor& executor() { return executor_; }
  // Executor indices of model_state().inputs()[i] / outputs()[i].
  int input_index(size_t binding) const { return input_indices_[binding]; }
  int output_index(size_t binding) const { return output_indices_[binding]; }
  // A host array of the model's shape for model_state().inputs()[i] (gathering rows); with a dynamic
  // batch, of model_batch() rows.
  const sorun::NDArray& input_staging(size_t binding) const { return input_staging_[binding]; }
  // After a run, with the cuda_graph parameter: logs once, as a warning, why the instance's runs are
  // not replayed as a CUDA graph (when they are not).
  void LogGraphRefusalOnce();

 private:
  InstanceState(const ModelState* model_state, TRITONBACKEND_ModelInstance* triton_instance, std::string name,
                sorun::Executor executor)
      : model_state_(model_state),
        triton_instance_(triton_instance),
        name_(std::move(name)),
        executor_(std::move(executor)) {}

  const ModelState* model_state_;
  TRITONBACKEND_ModelInstance* triton_instance_;
  std::string name_;
  sorun::Executor executor_;
  std::vector<int> input_indices_;
  std::vector<int> output_indices_;
  std::vector<sorun::NDArray> input_staging_;
  bool graph_refusal_logged_ = false;
};

}  // namespace sorun::triton

#endif  // SORUN_SERVING_TRITON_INSTANCE_STATE_H_
