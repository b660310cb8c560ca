// The parts of a Triton model configuration (config.pbtxt, handed to the backend as JSON by
// TRITONBACKEND_ModelConfig) that the sorun backend reads: inputs, outputs, max_batch_size, the
// scheduler, instance groups, default_model_filename and the string parameters. A plain value parsed
// once per model load; thread-compatible.
//
// Triton prints the configuration with protobuf's JSON mapping: 64-bit integers (dims) may arrive as
// strings ("64") and absent fields as their defaults; both are accepted.
#ifndef SORUN_SERVING_TRITON_MODEL_CONFIG_H_
#define SORUN_SERVING_TRITON_MODEL_CONFIG_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "serving/triton/triton_backend_api.h"

namespace sorun::triton {

// One `input` or `output` entry.
struct ConfigTensor {
  std::string name;
  TRITONSERVER_DataType data_type = TRITONSERVER_TYPE_INVALID;
  std::vector<int64_t> dims;  // without the batch dimension when max_batch_size > 0
  // A `reshape` field: the shape the model sees (without the batch dimension) while clients send and
  // receive `dims` (Triton takes an empty one, a 0-d tensor per row, only under batching).
  bool has_reshape = false;
  std::vector<int64_t> reshape;
};

// One `instance_group` entry.
struct ConfigInstanceGroup {
  std::string kind;  // "KIND_CPU", "KIND_GPU", "KIND_AUTO", "KIND_MODEL"
  int64_t count = 1;
  int64_t gpu_count = 0;  // entries in `gpus`
};

struct ModelConfig {
  std::string name;
  int64_t max_batch_size = 0;
  std::vector<ConfigTensor> inputs;
  std::vector<ConfigTensor> outputs;
  std::string default_model_filename;
  std::map<std::string, std::string> parameters;  // key -> string_value
  bool dynamic_batching = false;                  // a `dynamic_batching` block is present
  bool sequence_batching = false;                 // a `sequence_batching` block is present
  std::vector<ConfigInstanceGroup> instance_groups;

  // Model instances that run on the CPU (groups of kind CPU, AUTO or MODEL; at least 1).
  int64_t CpuInstanceCount() const;
};

// Parses the JSON text of a model configuration. DataLoss naming the field for malformed JSON or a
// field of the wrong type; InvalidArgument for an unknown data_type.
StatusOr<ModelConfig> ParseModelConfig(std::string_view json);

}  // namespace sorun::triton

#endif  // SORUN_SERVING_TRITON_MODEL_CONFIG_H_
