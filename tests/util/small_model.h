// The smallest complete model the serialization tests export and load: data[1,8] ->
// sorun_dense_bias_relu(4) -> sorun_softmax, with fixed weights and its expected output computed in
// double precision for the input data[k] = k / 8. Kernels: testdata/kernels/nn_kernels.c.
#ifndef SORUN_TESTS_UTIL_SMALL_MODEL_H_
#define SORUN_TESTS_UTIL_SMALL_MODEL_H_

#include <string>
#include <vector>

#include "runtime/tensor_io.h"

namespace sorun {
namespace testing {

// Graph JSON and params ("w" [4,8], "bias" [4]) as the three-file route would ship them.
struct SmallModel {
  std::string json;
  NamedTensors params;
};

SmallModel MakeModel();

// softmax(relu(x w^T + b)) for x[k] = k / 8.
std::vector<float> Reference(const SmallModel& m);

}  // namespace testing
}  // namespace sorun

#endif  // SORUN_TESTS_UTIL_SMALL_MODEL_H_
