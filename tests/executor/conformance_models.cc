#include "tests/executor/conformance_models.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tests/util/host_build.h"
#include "tests/util/test_util.h"
#include "tools/npy.h"

namespace sorun {
namespace testing {
namespace {

constexpr char kGraph[] = "graph executor";
constexpr char kRelax[] = "Relax VM";
// The zoo's tolerance (tests/e2e/zoo_test.cc): float32 kernels against the double-precision reference.
constexpr double kZooTolerance = 1e-4;
// A Relax fixture built for another architecture than the recorded run's (tests/e2e/aarch64_exports_test.cc's
// bound for the small exports).
constexpr double kOtherArchitectureTolerance = 1e-5;

ConformanceModel Zoo(const std::string& name, int kernel_calls) {
  const std::string dir = "testdata/models/" + name;
  ConformanceModel m;
  m.name = "graph_" + name;
  m.file = dir + ".so";
  m.kind = kGraph;
  m.inputs = {dir + "_input.npy"};
  m.outputs = {dir + "_expected.npy"};
  m.params = dir + ".params";
  m.tolerance = kZooTolerance;
  m.kernel_calls = kernel_calls;
  m.has_weights = true;
  return m;
}

ConformanceModel Relax(const std::string& name, int num_inputs, int num_outputs, int kernel_calls, bool has_weights,
                       int dynamic_input = -1) {
  const std::string dir = "testdata/relax/" + name;
  ConformanceModel m;
  m.name = "relax_" + name;
  m.file = HostBuild(dir + ".so");  // on aarch64 the same model's aarch64 build (testdata/relax/aarch64)
  m.kind = kRelax;
  // TVM recorded the outputs by running the x86-64 file: another architecture's build of the model rounds
  // differently (NEON fused multiply-adds, other reduction orders).
  if (!RecordedBitForBit(dir + ".so")) m.tolerance = kOtherArchitectureTolerance;
  for (int k = 0; k < num_inputs; ++k) m.inputs.push_back(dir + ".input_" + std::to_string(k) + ".npy");
  for (int k = 0; k < num_outputs; ++k) m.outputs.push_back(dir + ".output_" + std::to_string(k) + ".npy");
  m.kernel_calls = kernel_calls;
  m.has_weights = has_weights;
  m.dynamic_input = dynamic_input;
  return m;
}

}  // namespace

const std::vector<ConformanceModel>& ConformanceModels() {
  static const std::vector<ConformanceModel>* models = new std::vector<ConformanceModel>{
      // fc1, fc2, fc3, softmax.
      Zoo("mlp", 4),
      // LeNet-sized: conv1, pool1, conv2, pool2, fc1, fc2, fc3, softmax (flatten is a __nop).
      Zoo("cnn", 8),
      // conv1, conv2, bias2, residual, relu, gap, fc, softmax (flatten is a __nop).
      Zoo("resblock", 8),
      // matmul, add, relu, matmul1, add1; weights as constants.
      Relax("mlp", 1, 1, 5, true),
      // x[n, 8] -> (h, softmax(h)): shape_func, matmul, add, relu, softmax.
      Relax("dyn_batch", 1, 2, 5, true, /*dynamic_input=*/0),
      // x[4, 8], c: bool -> (y, y > 0.5); recorded with c = True: the taken branch's kernel and greater.
      Relax("bool_if", 2, 2, 2, false),
      // x[4, 8], k: R.Prim int64 -> x * k: one hand-written kernel.
      Relax("prim_scale", 2, 1, 1, false),
      // x[n, 8] -> (argmax, max) over axis 1: shape_func, argmax, max.
      Relax("row_argmax", 1, 2, 3, false, /*dynamic_input=*/0),
      // conv2d, add, relu, max_pool2d, matmul, add1, softmax (reshape is a builtin, not a kernel).
      Relax("cnn", 1, 1, 7, true),
  };
  return *models;
}

void PrintTo(const ConformanceModel& model, std::ostream* os) { *os << model.name; }

NDArray ReadNpy(const std::string& path) {
  auto tensor = ReadNpyFile(Runfile(path));
  EXPECT_TRUE(tensor.ok()) << tensor.status().ToString();
  if (!tensor.ok()) return NDArray();
  auto array = NDArray::Empty(tensor->shape(), tensor->dtype());
  EXPECT_TRUE(array.ok()) << array.status().ToString();
  if (!array.ok()) return NDArray();
  Status copied = array->CopyFrom(*tensor->dl());
  EXPECT_TRUE(copied.ok()) << copied.ToString();
  return *array;
}

std::vector<NDArray> RecordedInputs(const ConformanceModel& model) {
  std::vector<NDArray> out;
  for (const std::string& file : model.inputs) out.push_back(ReadNpy(file));
  return out;
}

std::vector<NDArray> RecordedOutputs(const ConformanceModel& model) {
  std::vector<NDArray> out;
  for (const std::string& file : model.outputs) out.push_back(ReadNpy(file));
  return out;
}

::testing::AssertionResult SameValues(const NDArray& actual, const NDArray& expected, double tolerance) {
  if (!actual.defined() || !expected.defined()) return ::testing::AssertionFailure() << "an array is undefined";
  if (DataTypeName(actual.dtype()) != DataTypeName(expected.dtype()) || actual.shape() != expected.shape()) {
    return ::testing::AssertionFailure() << "got " << actual.Describe() << ", expected " << expected.Describe();
  }
  if (actual.device().device_type != kDLCPU) return ::testing::AssertionFailure() << actual.Describe();
  if (tolerance == 0 || DataTypeName(expected.dtype()) != "float32") {  // integers and bools: exact
    const auto* a = static_cast<const uint8_t*>(actual.data());
    const auto* e = static_cast<const uint8_t*>(expected.data());
    for (uint64_t i = 0; i < expected.nbytes(); ++i) {
      if (a[i] != e[i]) {
        return ::testing::AssertionFailure() << actual.Describe() << " differs from the recorded output at byte " << i
                                             << " (" << int{a[i]} << " vs " << int{e[i]} << ")";
      }
    }
    return ::testing::AssertionSuccess();
  }
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    const double a = actual.data_as<float>()[i];
    const double e = expected.data_as<float>()[i];
    const double err = std::fabs(a - e) / std::max(1.0, std::fabs(e));
    if (!(err <= tolerance)) {  // NaN fails too
      return ::testing::AssertionFailure() << actual.Describe() << " element " << i << " is " << a << ", expected " << e
                                           << " (relative error " << err << " > " << tolerance << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

NDArray RepeatRows(const NDArray& array, int64_t rows) {
  std::vector<int64_t> shape = array.shape();
  if (shape.empty() || shape[0] <= 0) {
    ADD_FAILURE() << "RepeatRows needs rows: " << array.Describe();
    return NDArray();
  }
  const int64_t have = shape[0];
  const uint64_t row_bytes = array.nbytes() / static_cast<uint64_t>(have);
  shape[0] = rows;
  auto out = NDArray::Empty(shape, array.dtype());
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return NDArray();
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(static_cast<uint8_t*>(out->data()) + static_cast<uint64_t>(r) * row_bytes,
                static_cast<const uint8_t*>(array.data()) + static_cast<uint64_t>(r % have) * row_bytes, row_bytes);
  }
  return *out;
}

NDArray CopyOf(const NDArray& array) {
  auto out = NDArray::Empty(array.shape(), array.dtype());
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return NDArray();
  Status copied = out->CopyFrom(array.dl());
  EXPECT_TRUE(copied.ok()) << copied.ToString();
  return *out;
}

NDArray Transformed(const NDArray& array) {
  NDArray out = CopyOf(array);
  if (!out.defined()) return out;
  EXPECT_EQ(DataTypeName(out.dtype()), "float32") << out.Describe();
  for (int64_t i = 0; i < out.num_elements(); ++i) out.data_as<float>()[i] = out.data_as<float>()[i] * -1.5f + 0.25f;
  return out;
}

NDArray Zeros(const std::vector<int64_t>& shape, DLDataType dtype) {
  auto out = NDArray::Empty(shape, dtype);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return NDArray();
  std::memset(out->data(), 0, out->nbytes());
  return *out;
}

}  // namespace testing
}  // namespace sorun
