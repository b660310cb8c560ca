// Learning a model's outputs by running it, for Relax VM exports whose bytecode does not tell them
// before a run (sorun::Model::outputs() is then empty; docs/relax.md). The backend needs every output's
// name, dtype and shape when it loads the model (auto-complete, binding config.pbtxt), so it runs the
// model on zero inputs: once with every dynamic (-1) input dimension set to 1, once with 2. A dimension
// that differs between the two runs is reported as -1; names are output_<k>, which every executor of
// the model resolves (executor/model_signature.h). Called by ModelState::Create (load time, one thread).
#ifndef SORUN_SERVING_TRITON_OUTPUT_PROBE_H_
#define SORUN_SERVING_TRITON_OUTPUT_PROBE_H_

#include <cstdint>
#include <vector>

#include "api/sorun.h"

namespace sorun::triton {

// Sets every input of `executor` (parameters excepted) to zeros of its model shape, with each -1
// dimension replaced by `dynamic_dim`, and runs it once.
Status RunOnZeros(sorun::Executor& executor, int64_t dynamic_dim);

// The outputs of `model` (names, dtypes, shapes; -1 for a dimension that follows a dynamic input
// dimension), from two runs of a one-thread executor. Errors name the run that failed.
StatusOr<std::vector<TensorInfo>> ProbeOutputs(const sorun::Model& model);

}  // namespace sorun::triton

#endif  // SORUN_SERVING_TRITON_OUTPUT_PROBE_H_
