// The fixture of the executor conformance suite (executor_conformance_test.cc, its thread cases in
// executor_conformance_threads_test.cc): one real model of either kind per parameter
// (tests/executor/conformance_models.h), its recorded inputs and outputs, and the helpers the cases share.
// Test-only; each case runs on the thread gtest gives it.
#ifndef SORUN_TESTS_EXECUTOR_CONFORMANCE_FIXTURE_H_
#define SORUN_TESTS_EXECUTOR_CONFORMANCE_FIXTURE_H_

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/sorun.h"
#include "tests/executor/conformance_models.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace testing {

inline constexpr char kBusy[] = "being used by another thread";

// A device type no backend serves: 6 names no DLPack device (retired), yet lies in DLDeviceType's range
// (0..15, runtime/data_type.h; a larger value would be undefined behaviour, which UBSan reports).
inline constexpr DLDeviceType kNoSuchDeviceType = static_cast<DLDeviceType>(6);

inline bool IsBusyRefusal(const Status& s) {
  return s.code() == StatusCode::kFailedPrecondition && s.message().find(kBusy) != std::string::npos;
}

inline bool SameInfo(const TensorInfo& a, const TensorInfo& b) {
  return a.name == b.name && a.shape == b.shape && DataTypeName(a.dtype) == DataTypeName(b.dtype) &&
         a.is_param == b.is_param;
}

inline bool SameInfos(const std::vector<TensorInfo>& a, const std::vector<TensorInfo>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!SameInfo(a[i], b[i])) return false;
  }
  return true;
}

inline uint64_t Bytes(const TensorInfo& t) {
  uint64_t n = (t.dtype.bits * t.dtype.lanes + 7u) / 8u;
  for (int64_t d : t.shape) n *= static_cast<uint64_t>(d);
  return n;
}

// A view of `array` whose data starts 4 bytes past its (64-byte aligned) start: `backing` holds one
// element more.
inline DLTensor Misaligned(const NDArray& array, const NDArray& backing) {
  DLTensor t = array.dl();
  t.data = static_cast<uint8_t*>(backing.data()) + 4;
  return t;
}

class ExecutorConformanceTest : public ::testing::TestWithParam<ConformanceModel> {
 protected:
  void SetUp() override {
    const ConformanceModel& m = GetParam();
    auto model = Model::Load(testing::Runfile(m.file));
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_.emplace(std::move(*model));
    inputs_ = testing::RecordedInputs(m);
    expected_ = testing::RecordedOutputs(m);
    for (const NDArray& a : inputs_) ASSERT_TRUE(a.defined());
    for (const NDArray& a : expected_) ASSERT_TRUE(a.defined());
    for (size_t i = 0; i < model_->inputs().size(); ++i) {
      if (!model_->inputs()[i].is_param) settable_.push_back(static_cast<int>(i));
    }
    ASSERT_EQ(settable_.size(), inputs_.size()) << "one recorded input per input a caller sets";
    // Input 0 of every model here is a float32 tensor (not a 0-d scalar): the zero-copy and
    // changed-input cases use it.
    ASSERT_EQ(DataTypeName(inputs_[0].dtype()), "float32");
    ASSERT_FALSE(inputs_[0].shape().empty());
  }

  Executor NewExecutor(const ExecutorOptions& options = {}) {
    auto exec = model_->NewExecutor(options);
    EXPECT_TRUE(exec.ok()) << exec.status().ToString();
    return std::move(*exec);
  }

  const std::string& InputName(size_t k) const { return model_->inputs()[static_cast<size_t>(settable_[k])].name; }
  bool IsGraph() const { return GetParam().kind == "graph executor"; }

  // The recorded inputs, the dynamic one with `rows` rows (RepeatRows) when rows > 0.
  std::vector<NDArray> InputsWithRows(int64_t rows) const {
    std::vector<NDArray> values = inputs_;
    const int d = GetParam().dynamic_input;
    if (rows > 0 && d >= 0) values[static_cast<size_t>(d)] = RepeatRows(inputs_[static_cast<size_t>(d)], rows);
    return values;
  }
  // The recorded outputs for InputsWithRows(rows).
  std::vector<NDArray> ExpectedWithRows(int64_t rows) const {
    if (rows <= 0 || GetParam().dynamic_input < 0) return expected_;
    std::vector<NDArray> values;
    for (const NDArray& e : expected_) values.push_back(RepeatRows(e, rows));
    return values;
  }

  // Sets every input a caller sets, by name.
  ::testing::AssertionResult SetInputs(Executor& exec, const std::vector<NDArray>& values) const {
    for (size_t k = 0; k < values.size(); ++k) {
      Status s = exec.SetInput(InputName(k), values[k].dl());
      if (!s.ok()) return ::testing::AssertionFailure() << "SetInput '" << InputName(k) << "': " << s.ToString();
    }
    return ::testing::AssertionSuccess();
  }

  // The last run's outputs (GetOutput, by index) against `expected`.
  ::testing::AssertionResult OutputsAre(const Executor& exec, const std::vector<NDArray>& expected,
                                        double tolerance) const {
    if (exec.num_outputs() != static_cast<int>(expected.size())) {
      return ::testing::AssertionFailure()
             << "num_outputs() is " << exec.num_outputs() << ", expected " << expected.size();
    }
    for (size_t k = 0; k < expected.size(); ++k) {
      auto out = exec.GetOutput(static_cast<int>(k));
      if (!out.ok()) return ::testing::AssertionFailure() << "GetOutput " << k << ": " << out.status().ToString();
      ::testing::AssertionResult same = SameValues(*out, expected[k], tolerance);
      if (!same) return ::testing::AssertionFailure() << "output " << k << ": " << same.message();
    }
    return ::testing::AssertionSuccess();
  }
  ::testing::AssertionResult OutputsAreRecorded(const Executor& exec) const {
    return OutputsAre(exec, expected_, GetParam().tolerance);
  }

  // The outputs of a fresh executor given `values` by SetInput (the reference for a changed input).
  std::vector<NDArray> ReferenceOutputs(const std::vector<NDArray>& values) {
    Executor ref = NewExecutor();
    std::vector<std::pair<std::string, const DLTensor*>> named;
    for (size_t k = 0; k < values.size(); ++k) named.emplace_back(InputName(k), &values[k].dl());
    auto outs = ref.Run(named);
    EXPECT_TRUE(outs.ok()) << outs.status().ToString();
    return outs.ok() ? *outs : std::vector<NDArray>();
  }

  std::optional<Model> model_;     // Model has no empty state
  std::vector<NDArray> inputs_;    // recorded, one per settable_ entry
  std::vector<NDArray> expected_;  // recorded outputs
  std::vector<int> settable_;      // indices (into inputs()) of the inputs a caller sets
};

}  // namespace testing
}  // namespace sorun

#endif  // SORUN_TESTS_EXECUTOR_CONFORMANCE_FIXTURE_H_
