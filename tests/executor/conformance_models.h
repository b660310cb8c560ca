// The models of the executor conformance suite (tests/executor/executor_conformance_test.cc), of both
// executor kinds, each with its recorded inputs and outputs, and the helpers the suite compares with:
// .npy files as sorun::NDArray, output comparison (bit for bit, or the zoo's relative tolerance), rows of
// a recorded batch repeated to another batch size, and a caller-owned aligned copy of an array.
// Public API only (api/sorun.h), apart from the .npy reader. Test-only; thread-compatible (the model
// list is immutable: read it from any thread).
#ifndef SORUN_TESTS_EXECUTOR_CONFORMANCE_MODELS_H_
#define SORUN_TESTS_EXECUTOR_CONFORMANCE_MODELS_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "api/sorun.h"

namespace sorun {
namespace testing {

// One model of the suite. Paths are workspace-relative (the test's `data`).
struct ConformanceModel {
  std::string name;  // the test-name suffix: "graph_mlp", "relax_dyn_batch"
  std::string file;  // the .so
  std::string kind;  // Model::executor_kind(): "graph executor" or "Relax VM"
  // One .npy per input a caller sets (inputs() without is_param), in inputs() order.
  std::vector<std::string> inputs;
  // One .npy per output, in output order (the recorded run).
  std::vector<std::string> outputs;
  // The graph executor's params file (TVM's save_param_dict bytes), "" for a Relax VM model.
  std::string params;
  // 0: the outputs equal the recorded ones bit for bit (TVM's own run of a Relax export). Otherwise
  // max |actual - expected| / max(1, |expected|) over float32 (the zoo's double-precision reference).
  double tolerance = 0;
  // The position in `inputs` whose dimension 0 is dynamic (-1 in inputs()), or -1. Every row of such a
  // model's outputs depends only on the same row of that input, so a batch of any size n made of the
  // recorded rows (RepeatRows) has the recorded output rows, repeated the same way, as outputs.
  int dynamic_input = -1;
  // Kernel call sites one run executes (Profile's entries): the graph's tvm_op nodes but "__nop"
  // (bazel-bin/testdata/models/<m>.json); the Relax kernel calls `sorun inspect --disassemble` lists,
  // on the recorded inputs' branch.
  int kernel_calls = 0;
  // Whether the model carries weights (Memory().weight_bytes > 0).
  bool has_weights = false;
};

// gtest prints a parameter by its name.
void PrintTo(const ConformanceModel& model, std::ostream* os);

// Every model of the suite: three graph-executor zoo models and six Relax VM exports.
const std::vector<ConformanceModel>& ConformanceModels();

// The .npy file at workspace-relative `path` as a CPU NDArray (64-byte aligned). A test failure and an
// undefined array when it cannot be read.
NDArray ReadNpy(const std::string& path);
// Every recorded input / output of `model`, in order.
std::vector<NDArray> RecordedInputs(const ConformanceModel& model);
std::vector<NDArray> RecordedOutputs(const ConformanceModel& model);

// Whether `actual` has `expected`'s dtype and shape and its values: byte for byte when `tolerance` is
// 0 and for other dtypes than float32, else within the relative tolerance. The failure message names the
// first difference.
::testing::AssertionResult SameValues(const NDArray& actual, const NDArray& expected, double tolerance);

// A new CPU array of `rows` rows (dimension 0) whose row i is row i % rows() of `array`.
NDArray RepeatRows(const NDArray& array, int64_t rows);
// A new CPU array (64-byte aligned, owned by the caller) with `array`'s shape, dtype and values.
NDArray CopyOf(const NDArray& array);
// A new CPU float32 array: every element x of `array` (float32) becomes x * -1.5 + 0.25.
NDArray Transformed(const NDArray& array);
// A new CPU array of `shape` and `dtype`, every byte 0.
NDArray Zeros(const std::vector<int64_t>& shape, DLDataType dtype);

}  // namespace testing
}  // namespace sorun

#endif  // SORUN_TESTS_EXECUTOR_CONFORMANCE_MODELS_H_
