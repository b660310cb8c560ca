// One Triton model served by sorun: its configuration (auto-completed from the model when Triton
// allows it), its sorun parameters and ONE loaded sorun::Model whose weights every instance of the
// model shares (each instance has its own executor, instance_state.h).
//
// Created by TRITONBACKEND_ModelInitialize and destroyed by TRITONBACKEND_ModelFinalize, after every
// instance is gone; Triton owns it through TRITONBACKEND_ModelSetState. Immutable after Create, so
// the instances' execute threads read it concurrently without locks.
#ifndef SORUN_SERVING_TRITON_MODEL_STATE_H_
#define SORUN_SERVING_TRITON_MODEL_STATE_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "api/sorun.h"
#include "serving/triton/config_parameters.h"
#include "serving/triton/model_config.h"
#include "serving/triton/triton_backend_api.h"

namespace sorun::triton {

// A configured input or output and the model tensor it is bound to.
struct TensorBinding {
  std::string name;
  DLDataType dtype{kDLFloat, 32, 1};
  TRITONSERVER_DataType triton_dtype = TRITONSERVER_TYPE_INVALID;
  std::vector<int64_t> model_shape;  // the model's shape (with its batch dimension, if any; -1: dynamic)
  std::vector<int64_t> client_dims;  // what clients send / receive, without the batch dimension: the config's
                                     // dims (not the model's shape with a `reshape`, or [1] for a 0-d tensor)
  uint64_t model_bytes = 0;          // bytes of the whole model tensor (0 when its batch is dynamic)
  uint64_t row_bytes = 0;            // bytes of one batch row (model_bytes / model_batch) when batching
};

class ModelState {
 public:
  // Reads the configuration, loads <repository>/<version>/<model_file>, auto-completes the
  // configuration when Triton allows it and checks the configuration against the model. Errors name
  // the model and carry sorun's message (a corrupt model.so fails here, and only this model).
  static StatusOr<std::unique_ptr<ModelState>> Create(TRITONBACKEND_Model* triton_model);

  const std::string& name() const { return name_; }
  uint64_t version() const { return version_; }
  const std::string& model_path() const { return model_path_; }
  const sorun::Model& model() const { return model_; }
  const ModelConfig& config() const { return config_; }
  const SorunParameters& parameters() const { return parameters_; }

  // max_batch_size > 0: requests carry a batch dimension first; the executor runs model_batch()
  // rows at a time, or, when the model's batch dimension is dynamic (-1, a Relax export), every row
  // of Triton's batch in one run (batch_is_dynamic(); model_batch() is then max_batch_size).
  bool batching() const { return config_.max_batch_size > 0; }
  bool batch_is_dynamic() const { return batch_is_dynamic_; }
  int64_t model_batch() const { return model_batch_; }
  // The model's outputs: sorun::Model::outputs(), or, where that is empty (a Relax export whose
  // bytecode does not tell), what output_probe.h learnt by running it (outputs_probed()).
  const std::vector<TensorInfo>& model_outputs() const { return model_outputs_; }
  bool outputs_probed() const { return outputs_probed_; }
  const std::vector<TensorBinding>& inputs() const { return inputs_; }
  const std::vector<TensorBinding>& outputs() const { return outputs_; }
  // The binding named `name`, or nullptr.
  const TensorBinding* FindInput(const std::string& name) const;
  const TensorBinding* FindOutput(const std::string& name) const;
  // "data (FP32 [-1, 64]), mask (INT64 [-1, 8])": what a request must carry, as the client sees it.
  std::string DescribeInputs() const;

 private:
  ModelState(std::string name, uint64_t version, sorun::Model model)
      : name_(std::move(name)), version_(version), model_(std::move(model)) {}
  Status BindTensors();

  std::string name_;
  uint64_t version_ = 0;
  std::string model_path_;
  sorun::Model model_;
  ModelConfig config_;
  SorunParameters parameters_;
  int64_t model_batch_ = 1;
  bool batch_is_dynamic_ = false;
  std::vector<TensorInfo> model_outputs_;
  bool outputs_probed_ = false;
  std::vector<TensorBinding> inputs_;
  std::vector<TensorBinding> outputs_;
};

}  // namespace sorun::triton

#endif  // SORUN_SERVING_TRITON_MODEL_STATE_H_
