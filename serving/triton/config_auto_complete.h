// Auto-complete of a model configuration from the model itself (Triton's
// --strict-model-config=false, the default): a model directory whose config.pbtxt says only
// `backend: "sorun"` serves with inputs, outputs and batching read from the model's graph.
//
// What is filled, and only when absent from the configuration:
//   - `input`: every graph input that is not a parameter (weights bound from the model), with its
//     dtype and shape; `output`: every graph output.
//   - `max_batch_size` (when `input` and `output` are both absent and max_batch_size is 0): the
//     server's default-max-batch-size when every input and output has 1 as its first dimension (the
//     batch of a batch-1 model: Triton's batches then run one row at a time, see docs/serving.md) or
//     a dynamic one (-1, a Relax export: Triton's batch runs in one go),
//     with a `dynamic_batching {}` block when no scheduler is configured. Otherwise 0.
// With max_batch_size > 0 the filled dims leave out the first (batch) dimension. Pure; thread-safe.
#ifndef SORUN_SERVING_TRITON_CONFIG_AUTO_COMPLETE_H_
#define SORUN_SERVING_TRITON_CONFIG_AUTO_COMPLETE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/executor_types.h"
#include "base/status.h"

namespace sorun::triton {

// The completed configuration JSON, or nullopt when the configuration already had everything.
// `default_max_batch_size` is Triton's --backend-config default-max-batch-size (4 unless set).
// DataLoss for malformed JSON; Unimplemented for a model tensor with no Triton type.
StatusOr<std::optional<std::string>> AutoCompleteConfig(std::string_view config_json,
                                                        const std::vector<TensorInfo>& model_inputs,
                                                        const std::vector<TensorInfo>& model_outputs,
                                                        int64_t default_max_batch_size);

// True when every non-parameter input and every output has 1 as its first dimension, or a dynamic
// one (-1: a Relax export's batch dimension); auto-complete then serves it as Triton's batch dimension.
bool HasBatchDimension(const std::vector<TensorInfo>& model_inputs, const std::vector<TensorInfo>& model_outputs);

}  // namespace sorun::triton

#endif  // SORUN_SERVING_TRITON_CONFIG_AUTO_COMPLETE_H_
