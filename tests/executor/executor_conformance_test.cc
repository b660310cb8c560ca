// One executor contract, one conformance suite: every executor kind (the graph executor, the Relax VM)
// runs the same tests of sorun::Executor (api/sorun.h, executor/model_executor.h) through the public
// API, on real models of each kind with their recorded inputs and outputs
// (tests/executor/conformance_models.h). A kind that lacks a capability says why in its skip, and its
// refusal is tested instead. The thread contract is tested too: a second thread's call on a busy
// executor is refused, and the "any thread" accessors are read while another thread runs (TSan in CI).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "api/sorun.h"
#include "tests/executor/conformance_models.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using testing::ConformanceModel;
using testing::CopyOf;
using testing::RepeatRows;
using testing::SameValues;
using testing::Transformed;
using testing::Zeros;

constexpr char kBusy[] = "being used by another thread";

// A device type no backend serves: 6 names no DLPack device (retired), yet lies in DLDeviceType's range
// (0..15, runtime/data_type.h; a larger value would be undefined behaviour, which UBSan reports).
constexpr DLDeviceType kNoSuchDeviceType = static_cast<DLDeviceType>(6);

bool IsBusyRefusal(const Status& s) {
  return s.code() == StatusCode::kFailedPrecondition && s.message().find(kBusy) != std::string::npos;
}

bool SameInfo(const TensorInfo& a, const TensorInfo& b) {
  return a.name == b.name && a.shape == b.shape && DataTypeName(a.dtype) == DataTypeName(b.dtype) &&
         a.is_param == b.is_param;
}

bool SameInfos(const std::vector<TensorInfo>& a, const std::vector<TensorInfo>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!SameInfo(a[i], b[i])) return false;
  }
  return true;
}

uint64_t Bytes(const TensorInfo& t) {
  uint64_t n = (t.dtype.bits * t.dtype.lanes + 7u) / 8u;
  for (int64_t d : t.shape) n *= static_cast<uint64_t>(d);
  return n;
}

// A view of `array` whose data starts 4 bytes past its (64-byte aligned) start: `backing` holds one
// element more.
DLTensor Misaligned(const NDArray& array, const NDArray& backing) {
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

// ---- What the executor says about itself ----

TEST_P(ExecutorConformanceTest, DescribesItselfLikeItsModel) {
  EXPECT_EQ(std::string(model_->executor_kind()), GetParam().kind);
  Executor exec = NewExecutor();
  EXPECT_TRUE(SameInfos(exec.inputs(), model_->inputs()));
  EXPECT_TRUE(SameInfos(exec.outputs(), model_->outputs()));
  EXPECT_EQ(exec.num_outputs(), static_cast<int>(exec.outputs().size()));  // before the first run
  ASSERT_EQ(exec.devices().size(), 1u);
  EXPECT_EQ(DeviceName(exec.devices()[0]), "cpu:0");
  EXPECT_GE(exec.num_threads(), 1);
  ExecutorOptions options;
  options.num_threads = 3;
  EXPECT_EQ(NewExecutor(options).num_threads(), 3);
}

TEST_P(ExecutorConformanceTest, CapabilitiesAreDeclaredPerKind) {
  const bool graph = IsGraph();
  Executor exec = NewExecutor();
  EXPECT_EQ(exec.capabilities().output_zero_copy, graph);
  EXPECT_EQ(exec.capabilities().params_files, graph);
  EXPECT_EQ(model_->capabilities().output_zero_copy, graph);
  EXPECT_EQ(model_->capabilities().params_files, graph);
}

TEST_P(ExecutorConformanceTest, CallsAKindLacksAreUnimplementedNamingTheCapability) {
  Executor exec = NewExecutor();
  Executor other = NewExecutor();
  const ExecutorCapabilities caps = exec.capabilities();
  if (caps.output_zero_copy && caps.params_files) GTEST_SKIP() << GetParam().kind << " offers every capability";
  NDArray out = Zeros(expected_[0].shape(), expected_[0].dtype());
  if (!caps.output_zero_copy) {
    EXPECT_ERROR(exec.SetOutputZeroCopy(0, out.dl()), StatusCode::kUnimplemented, "SetOutputZeroCopy",
                 "output_zero_copy", GetParam().kind);
    // Refused for the capability before the index is looked at.
    EXPECT_ERROR(exec.SetOutputZeroCopy(99, out.dl()), StatusCode::kUnimplemented, "output_zero_copy");
  }
  if (!caps.params_files) {
    EXPECT_ERROR(exec.LoadParams(""), StatusCode::kUnimplemented, "LoadParams", "params_files", GetParam().kind);
    EXPECT_ERROR(exec.ShareParams(other, ""), StatusCode::kUnimplemented, "ShareParams", "params_files");
  }
  // The refusals changed nothing.
  ASSERT_TRUE(SetInputs(exec, inputs_));
  ASSERT_TRUE(exec.Run().ok());
  EXPECT_TRUE(OutputsAreRecorded(exec));
}

// ---- Set, run, get ----

TEST_P(ExecutorConformanceTest, SetRunGetByIndex) {
  Executor exec = NewExecutor();
  for (size_t k = 0; k < inputs_.size(); ++k) ASSERT_TRUE(exec.SetInput(settable_[k], inputs_[k].dl()).ok());
  for (int run = 0; run < 2; ++run) {  // the second run reuses the first one's memory
    ASSERT_TRUE(exec.Run().ok());
    EXPECT_TRUE(OutputsAreRecorded(exec)) << "run " << run;
  }
  EXPECT_EQ(exec.num_outputs(), static_cast<int>(GetParam().outputs.size()));
}

TEST_P(ExecutorConformanceTest, SetRunGetByName) {
  Executor exec = NewExecutor();
  for (size_t k = 0; k < inputs_.size(); ++k) {
    auto index = exec.InputIndex(InputName(k));
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    EXPECT_EQ(*index, settable_[k]);
  }
  ASSERT_TRUE(SetInputs(exec, inputs_));
  ASSERT_TRUE(exec.Run().ok());
  ASSERT_EQ(exec.outputs().size(), expected_.size());
  for (size_t k = 0; k < expected_.size(); ++k) {
    const std::string& name = exec.outputs()[k].name;
    auto index = exec.OutputIndex(name);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    EXPECT_EQ(*index, static_cast<int>(k));
    auto colon = exec.OutputIndex(name + ":0");  // TVM's spelling of a node's first output
    ASSERT_TRUE(colon.ok()) << colon.status().ToString();
    EXPECT_EQ(*colon, static_cast<int>(k));
    auto out = exec.GetOutput(*index);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(SameValues(*out, expected_[k], GetParam().tolerance)) << name;
  }
}

TEST_P(ExecutorConformanceTest, OutputsAgreeWithTheStaticDescription) {
  Executor exec = NewExecutor();
  ASSERT_TRUE(SetInputs(exec, inputs_));
  ASSERT_TRUE(exec.Run().ok());
  const std::vector<TensorInfo>& outputs = exec.outputs();
  ASSERT_EQ(outputs.size(), static_cast<size_t>(exec.num_outputs()));
  for (size_t k = 0; k < outputs.size(); ++k) {
    auto out = exec.GetOutput(static_cast<int>(k));
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(DataTypeName(out->dtype()), DataTypeName(outputs[k].dtype)) << outputs[k].name;
    ASSERT_EQ(out->shape().size(), outputs[k].shape.size()) << outputs[k].name;
    for (size_t d = 0; d < outputs[k].shape.size(); ++d) {
      if (outputs[k].shape[d] == -1) continue;  // known only at run time
      EXPECT_EQ(out->shape()[d], outputs[k].shape[d]) << outputs[k].name << " dimension " << d;
    }
  }
  // A model with a dynamic input dimension describes it, and the outputs that follow it, as -1.
  const int dynamic = GetParam().dynamic_input;
  if (dynamic >= 0) {
    EXPECT_EQ(exec.inputs()[static_cast<size_t>(settable_[static_cast<size_t>(dynamic)])].shape[0], -1);
    for (const TensorInfo& t : outputs) EXPECT_EQ(t.shape.at(0), -1) << t.name;
  }
}

TEST_P(ExecutorConformanceTest, RunWithInputsReturnsHostCopies) {
  Executor exec = NewExecutor();
  std::vector<std::pair<std::string, const DLTensor*>> named;
  for (size_t k = 0; k < inputs_.size(); ++k) named.emplace_back(InputName(k), &inputs_[k].dl());
  auto outs = exec.Run(named);
  ASSERT_TRUE(outs.ok()) << outs.status().ToString();
  ASSERT_EQ(outs->size(), expected_.size());
  for (size_t k = 0; k < expected_.size(); ++k) {
    EXPECT_TRUE(SameValues((*outs)[k], expected_[k], GetParam().tolerance)) << "output " << k;
    EXPECT_EQ(DeviceName((*outs)[k].device()), "cpu:0");
    auto own = exec.GetOutput(static_cast<int>(k));
    ASSERT_TRUE(own.ok());
    EXPECT_NE((*outs)[k].data(), own->data()) << "Run(inputs) returns copies";
  }
  // A later run with another input leaves the returned arrays as they were.
  NDArray changed = Transformed(inputs_[0]);
  named[0].second = &changed.dl();
  ASSERT_TRUE(exec.Run(named).ok());
  for (size_t k = 0; k < expected_.size(); ++k) {
    EXPECT_TRUE(SameValues((*outs)[k], expected_[k], GetParam().tolerance)) << "output " << k;
  }
}

TEST_P(ExecutorConformanceTest, GetInputIsTheExecutorsOwnCopy) {
  Executor exec = NewExecutor();
  ASSERT_TRUE(SetInputs(exec, inputs_));
  for (size_t k = 0; k < inputs_.size(); ++k) {
    auto in = exec.GetInput(settable_[k]);
    ASSERT_TRUE(in.ok()) << in.status().ToString();
    EXPECT_TRUE(SameValues(*in, inputs_[k], 0)) << InputName(k);
    EXPECT_NE(in->data(), inputs_[k].data()) << "SetInput copies";
  }
  // A parameter bound from the weights reads as its tensor.
  for (size_t i = 0; i < exec.inputs().size(); ++i) {
    if (!exec.inputs()[i].is_param) continue;
    auto param = exec.GetInput(static_cast<int>(i));
    ASSERT_TRUE(param.ok()) << param.status().ToString();
    EXPECT_EQ(param->shape(), exec.inputs()[i].shape) << exec.inputs()[i].name;
  }
}

TEST_P(ExecutorConformanceTest, CopyOutputToACallerTensor) {
  Executor exec = NewExecutor();
  ASSERT_TRUE(SetInputs(exec, inputs_));
  ASSERT_TRUE(exec.Run().ok());
  for (size_t k = 0; k < expected_.size(); ++k) {
    NDArray host = Zeros(expected_[k].shape(), expected_[k].dtype());
    ASSERT_TRUE(exec.CopyOutputTo(static_cast<int>(k), host.dl()).ok());
    EXPECT_TRUE(SameValues(host, expected_[k], GetParam().tolerance)) << "output " << k;
    // Any device: through an OpenCL array where the machine has one.
    auto device = NDArray::Empty(expected_[k].shape(), expected_[k].dtype(), DLDevice{kDLOpenCL, 0});
    if (device.ok()) {
      ASSERT_TRUE(exec.CopyOutputTo(static_cast<int>(k), device->dl()).ok());
      auto back = device->CopyTo(DLDevice{kDLCPU, 0});
      ASSERT_TRUE(back.ok()) << back.status().ToString();
      EXPECT_TRUE(SameValues(*back, expected_[k], GetParam().tolerance)) << "output " << k << " via opencl";
    }
    // A target of another shape or dtype is refused.
    std::vector<int64_t> wider = expected_[k].shape();
    wider.push_back(2);
    NDArray wrong_shape = Zeros(wider, expected_[k].dtype());
    EXPECT_ERROR(exec.CopyOutputTo(static_cast<int>(k), wrong_shape.dl()), StatusCode::kInvalidArgument,
                 "CopyOutputTo output " + std::to_string(k));
    const DLDataType other =
        DataTypeName(expected_[k].dtype()) == "float32" ? DLDataType{kDLInt, 32, 1} : DLDataType{kDLFloat, 32, 1};
    NDArray wrong_dtype = Zeros(expected_[k].shape(), other);
    EXPECT_ERROR(exec.CopyOutputTo(static_cast<int>(k), wrong_dtype.dl()), StatusCode::kInvalidArgument,
                 "CopyOutputTo output " + std::to_string(k));
  }
}

TEST_P(ExecutorConformanceTest, DynamicDimensionChangesBetweenRuns) {
  if (GetParam().dynamic_input < 0) GTEST_SKIP() << GetParam().name << " has static shapes";
  Executor exec = NewExecutor();
  for (int64_t rows : {1, 5, 2, 8, 3, 1}) {
    ASSERT_TRUE(SetInputs(exec, InputsWithRows(rows))) << rows << " rows";
    ASSERT_TRUE(exec.Run().ok()) << rows << " rows";
    EXPECT_TRUE(OutputsAre(exec, ExpectedWithRows(rows), GetParam().tolerance)) << rows << " rows";
    auto in = exec.GetInput(settable_[static_cast<size_t>(GetParam().dynamic_input)]);
    ASSERT_TRUE(in.ok());
    EXPECT_EQ(in->shape()[0], rows);
  }
}

// ---- Errors ----

TEST_P(ExecutorConformanceTest, UnknownNamesAreNotFoundListingTheNames) {
  Executor exec = NewExecutor();
  const std::vector<std::string> listed = [&] {
    std::vector<std::string> names;
    for (size_t k = 0; k < inputs_.size(); ++k) names.push_back(InputName(k));
    return names;
  }();
  const DLTensor& x = inputs_[0].dl();
  for (const Status& s : {exec.InputIndex("no_such_input").status(), exec.SetInput("no_such_input", x),
                          exec.SetInputZeroCopy("no_such_input", x), exec.Run({{"no_such_input", &x}}).status()}) {
    EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
    EXPECT_NE(s.message().find("'no_such_input'"), std::string::npos) << s.message();
    for (const std::string& name : listed) EXPECT_NE(s.message().find(name), std::string::npos) << s.message();
    // Parameters bound from the weights are not the caller's to set: not listed.
    for (const TensorInfo& t : exec.inputs()) {
      if (t.is_param) {
        EXPECT_EQ(s.message().find(t.name), std::string::npos) << t.name << " in " << s.message();
      }
    }
  }
  Status out = exec.OutputIndex("no_such_output").status();
  EXPECT_EQ(out.code(), StatusCode::kNotFound) << out.ToString();
  EXPECT_NE(out.message().find("'no_such_output'"), std::string::npos) << out.message();
  for (const TensorInfo& t : exec.outputs()) EXPECT_NE(out.message().find(t.name), std::string::npos) << out.message();
}

TEST_P(ExecutorConformanceTest, IndicesOutOfRangeAreOutOfRange) {
  Executor exec = NewExecutor();
  const int n_in = static_cast<int>(exec.inputs().size());
  const int n_out = static_cast<int>(expected_.size());
  const DLTensor& x = inputs_[0].dl();
  EXPECT_ERROR(exec.SetInput(n_in, x), StatusCode::kOutOfRange, "input index " + std::to_string(n_in));
  EXPECT_ERROR(exec.SetInput(-1, x), StatusCode::kOutOfRange, "input index -1");
  EXPECT_ERROR(exec.SetInputZeroCopy(n_in, x), StatusCode::kOutOfRange, "input index");
  EXPECT_ERROR(exec.GetInput(n_in).status(), StatusCode::kOutOfRange, "input index");
  ASSERT_TRUE(SetInputs(exec, inputs_));
  ASSERT_TRUE(exec.Run().ok());
  NDArray out = Zeros(expected_[0].shape(), expected_[0].dtype());
  EXPECT_ERROR(exec.GetOutput(n_out).status(), StatusCode::kOutOfRange, "output index " + std::to_string(n_out));
  EXPECT_ERROR(exec.GetOutput(-1).status(), StatusCode::kOutOfRange, "output index -1");
  EXPECT_ERROR(exec.CopyOutputTo(n_out, out.dl()), StatusCode::kOutOfRange, "output index");
  if (exec.capabilities().output_zero_copy) {
    EXPECT_ERROR(exec.SetOutputZeroCopy(n_out, out.dl()), StatusCode::kOutOfRange, "output index");
  }
  EXPECT_TRUE(OutputsAreRecorded(exec));  // the refusals changed nothing
}

TEST_P(ExecutorConformanceTest, WrongDtypeOrShapeIsInvalidArgumentNamingTheInput) {
  Executor exec = NewExecutor();
  ASSERT_TRUE(SetInputs(exec, inputs_));
  for (size_t k = 0; k < inputs_.size(); ++k) {
    const std::string quoted = "'" + InputName(k) + "'";
    const DLDataType other =
        DataTypeName(inputs_[k].dtype()) == "float32" ? DLDataType{kDLInt, 32, 1} : DLDataType{kDLFloat, 32, 1};
    NDArray wrong_dtype = Zeros(inputs_[k].shape(), other);
    EXPECT_ERROR(exec.SetInput(InputName(k), wrong_dtype.dl()), StatusCode::kInvalidArgument, quoted);
    EXPECT_ERROR(exec.SetInput(settable_[k], wrong_dtype.dl()), StatusCode::kInvalidArgument, quoted);
    EXPECT_ERROR(exec.SetInputZeroCopy(settable_[k], wrong_dtype.dl()), StatusCode::kInvalidArgument, quoted);
    if (inputs_[k].shape().empty()) {
      // A 0-d input given a vector: refused by SetInput (an R.Prim scalar), or — a 0-d tensor of the
      // Relax VM, see DISABLED_ZeroDimInputsRefuseOtherShapesAtSetInput — by Run at the latest.
      NDArray vector = Zeros({1}, inputs_[k].dtype());
      Status set = exec.SetInput(InputName(k), vector.dl());
      if (set.ok()) {
        EXPECT_EQ(exec.Run().code(), StatusCode::kInvalidArgument) << quoted << " ran as a vector";
        ASSERT_TRUE(exec.SetInput(InputName(k), inputs_[k].dl()).ok());
      } else {
        EXPECT_ERROR(set, StatusCode::kInvalidArgument, quoted);
      }
      continue;
    }
    std::vector<int64_t> shape = inputs_[k].shape();
    shape.back() += 1;  // the last dimension is static in every model here
    NDArray wrong_shape = Zeros(shape, inputs_[k].dtype());
    EXPECT_ERROR(exec.SetInput(InputName(k), wrong_shape.dl()), StatusCode::kInvalidArgument, quoted);
    EXPECT_ERROR(exec.SetInputZeroCopy(settable_[k], wrong_shape.dl()), StatusCode::kInvalidArgument, quoted);
    std::vector<int64_t> deeper = inputs_[k].shape();
    deeper.push_back(1);
    NDArray wrong_rank = Zeros(deeper, inputs_[k].dtype());
    EXPECT_ERROR(exec.SetInput(InputName(k), wrong_rank.dl()), StatusCode::kInvalidArgument, quoted);
  }
  ASSERT_TRUE(exec.Run().ok());
  EXPECT_TRUE(OutputsAreRecorded(exec));  // the refused inputs left the set ones in place
}

// A 0-d input takes a 0-d tensor only. The Relax VM refuses other ranks at SetInput for an R.Prim scalar
// (prim_scale's k) but not for a 0-d R.Tensor (bool_if's c, R.Tensor((), "bool")): VmExecutor::CheckInput
// reads an empty TensorInfo::shape as "no shape to check", so bool[1], bool[3] or bool[2, 2] are set,
// and only the bytecode's check_tensor_info refuses them at Run ("expected a tensor of ndim 0, got
// e4m3_float8[1]", the bool named as TVM 0.16's float8). Enable when SetInput refuses them.
TEST_P(ExecutorConformanceTest, DISABLED_ZeroDimInputsRefuseOtherShapesAtSetInput) {
  Executor exec = NewExecutor();
  int zero_dim = 0;
  for (size_t k = 0; k < inputs_.size(); ++k) {
    if (!inputs_[k].shape().empty()) continue;
    ++zero_dim;
    for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{1}, {3}, {2, 2}}) {
      NDArray wrong = Zeros(shape, inputs_[k].dtype());
      EXPECT_ERROR(exec.SetInput(InputName(k), wrong.dl()), StatusCode::kInvalidArgument, "'" + InputName(k) + "'");
      EXPECT_ERROR(exec.SetInputZeroCopy(InputName(k), wrong.dl()), StatusCode::kInvalidArgument,
                   "'" + InputName(k) + "'");
    }
  }
  if (zero_dim == 0) GTEST_SKIP() << GetParam().name << " has no 0-d input";
}

// A refused SetInput leaves the input as it was. The Relax VM, which refuses to run while an input is
// unset ("input 'x' is not set"), replaces the input's tensor before copying into it (VmExecutor::
// CopyInput), so a first SetInput that fails in the copy (a tensor on a device no backend serves) leaves
// the input set to uninitialised memory, and Run succeeds on it. Enable when CopyInput installs the new
// tensor only after the copy succeeded. (The graph executor has no unset state: it runs with whatever
// its inputs hold.)
TEST_P(ExecutorConformanceTest, DISABLED_AFailedFirstSetInputLeavesTheInputUnset) {
  Executor fresh = NewExecutor();
  if (fresh.Run().ok()) GTEST_SKIP() << "the " << GetParam().kind << " runs with inputs never set";
  Executor exec = NewExecutor();
  for (size_t k = 1; k < inputs_.size(); ++k) ASSERT_TRUE(exec.SetInput(InputName(k), inputs_[k].dl()).ok());
  DLTensor bogus = inputs_[0].dl();
  bogus.device = DLDevice{kNoSuchDeviceType, 0};
  ASSERT_FALSE(exec.SetInput(InputName(0), bogus).ok());
  EXPECT_ERROR(exec.Run(), StatusCode::kFailedPrecondition, "'" + InputName(0) + "' is not set");
}

// A tensor on another device is copied by SetInput (where that device exists) or refused with its
// backend's reason; zero-copy binding needs the executor's device. A device type no backend serves is
// Unavailable.
TEST_P(ExecutorConformanceTest, InputsOnAnotherDeviceAreCopiedOrRefused) {
  Executor exec = NewExecutor();
  ASSERT_TRUE(SetInputs(exec, inputs_));
  const std::string& name = InputName(0);
  const int index = settable_[0];
  DLTensor bogus = inputs_[0].dl();
  bogus.device = DLDevice{kNoSuchDeviceType, 0};
  EXPECT_ERROR(exec.SetInput(name, bogus), StatusCode::kUnavailable, "device type 6");
  EXPECT_ERROR(exec.SetInputZeroCopy(name, bogus), StatusCode::kInvalidArgument, "'" + name + "'", "cpu:0");
  NDArray out = Zeros(expected_[0].shape(), expected_[0].dtype());
  DLTensor bogus_out = out.dl();
  bogus_out.device = bogus.device;
  ASSERT_TRUE(exec.Run().ok());
  EXPECT_ERROR(exec.CopyOutputTo(0, bogus_out), StatusCode::kUnavailable, "device type 6");

  for (DLDeviceType type : {kDLCUDA, kDLOpenCL}) {
    const DLDevice device{type, 0};
    auto on_device = inputs_[0].CopyTo(device);
    if (on_device.ok()) {  // the machine has one: SetInput copies from it
      ASSERT_TRUE(exec.SetInput(name, on_device->dl()).ok()) << DeviceName(device);
      ASSERT_TRUE(exec.Run().ok());
      EXPECT_TRUE(OutputsAreRecorded(exec)) << DeviceName(device);
      EXPECT_ERROR(exec.SetInputZeroCopy(index, on_device->dl()), StatusCode::kInvalidArgument, "'" + name + "'",
                   "cpu:0", DeviceName(device));
      continue;
    }
    // None here: a tensor that claims to be on it is refused for the backend's reason.
    DLTensor absent = inputs_[0].dl();
    absent.device = device;
    Status s = exec.SetInput(name, absent);
    EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
    EXPECT_NE(s.message().find(DeviceName(device)), std::string::npos) << s.message();
    EXPECT_ERROR(exec.SetInputZeroCopy(index, absent), StatusCode::kInvalidArgument, "'" + name + "'", "cpu:0");
  }
  ASSERT_TRUE(exec.Run().ok());
  EXPECT_TRUE(OutputsAreRecorded(exec));  // the refusals left the set input in place
}

// Every error about an input names it — also a copy from another device failing in the device's
// backend. The graph executor annotates it ("set_input 'data': ..."); the Relax VM returns the backend's
// error alone ("no backend for unknown device type 6 ..."). Enable when VmExecutor::CopyInput annotates
// its copy with the input's name.
TEST_P(ExecutorConformanceTest, DISABLED_AFailedCopyFromAnotherDeviceNamesTheInput) {
  Executor exec = NewExecutor();
  DLTensor bogus = inputs_[0].dl();
  bogus.device = DLDevice{kNoSuchDeviceType, 0};
  EXPECT_ERROR(exec.SetInput(InputName(0), bogus), StatusCode::kUnavailable, "'" + InputName(0) + "'");
}

// ---- Zero-copy bindings ----

TEST_P(ExecutorConformanceTest, ZeroCopyInputIsReadInPlace) {
  Executor exec = NewExecutor();
  ASSERT_TRUE(SetInputs(exec, inputs_));
  NDArray bound = CopyOf(inputs_[0]);  // the caller's 64-byte aligned buffer
  ASSERT_TRUE(exec.SetInputZeroCopy(InputName(0), bound.dl()).ok());
  auto in = exec.GetInput(settable_[0]);
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(in->data(), bound.data()) << "the executor reads the caller's buffer";
  ASSERT_TRUE(exec.Run().ok());
  EXPECT_TRUE(OutputsAreRecorded(exec));

  // Change the buffer, not the binding: the next run reads the new values.
  std::vector<NDArray> changed = inputs_;
  changed[0] = Transformed(inputs_[0]);
  std::memcpy(bound.data(), changed[0].data(), bound.nbytes());
  ASSERT_TRUE(exec.Run().ok());
  const std::vector<NDArray> reference = ReferenceOutputs(changed);
  ASSERT_EQ(reference.size(), expected_.size());
  EXPECT_TRUE(OutputsAre(exec, reference, 0));
  EXPECT_FALSE(OutputsAreRecorded(exec)) << "the changed input changes the outputs";

  std::memcpy(bound.data(), inputs_[0].data(), bound.nbytes());
  ASSERT_TRUE(exec.Run().ok());
  EXPECT_TRUE(OutputsAreRecorded(exec));
}

TEST_P(ExecutorConformanceTest, MisalignedZeroCopyIsRefused) {
  Executor exec = NewExecutor();
  std::vector<int64_t> more = {inputs_[0].num_elements() + 1};
  NDArray backing = Zeros(more, inputs_[0].dtype());
  EXPECT_ERROR(exec.SetInputZeroCopy(InputName(0), Misaligned(inputs_[0], backing)), StatusCode::kInvalidArgument,
               "64-byte aligned");
  DLTensor offset = inputs_[0].dl();  // aligned data, misaligned through byte_offset
  offset.data = backing.data();
  offset.byte_offset = 4;
  EXPECT_ERROR(exec.SetInputZeroCopy(settable_[0], offset), StatusCode::kInvalidArgument, "64-byte aligned");
  if (exec.capabilities().output_zero_copy) {
    NDArray out_backing = Zeros({expected_[0].num_elements() + 1}, expected_[0].dtype());
    EXPECT_ERROR(exec.SetOutputZeroCopy(0, Misaligned(expected_[0], out_backing)), StatusCode::kInvalidArgument,
                 "64-byte aligned");
  }
}

TEST_P(ExecutorConformanceTest, ZeroCopyOutputWritesIntoTheCallersBuffer) {
  Executor exec = NewExecutor();
  if (!exec.capabilities().output_zero_copy) {
    GTEST_SKIP() << "the " << GetParam().kind << " lacks output_zero_copy (its refusal is tested above)";
  }
  std::vector<NDArray> outs;
  for (size_t k = 0; k < expected_.size(); ++k) {
    outs.push_back(Zeros(expected_[k].shape(), expected_[k].dtype()));
    ASSERT_TRUE(exec.SetOutputZeroCopy(static_cast<int>(k), outs[k].dl()).ok());
  }
  ASSERT_TRUE(SetInputs(exec, inputs_));
  ASSERT_TRUE(exec.Run().ok());
  for (size_t k = 0; k < expected_.size(); ++k) {
    EXPECT_TRUE(SameValues(outs[k], expected_[k], GetParam().tolerance)) << "output " << k;
    auto own = exec.GetOutput(static_cast<int>(k));
    ASSERT_TRUE(own.ok());
    EXPECT_EQ(own->data(), outs[k].data()) << "the output is the caller's buffer";
  }
  std::vector<NDArray> changed = inputs_;
  changed[0] = Transformed(inputs_[0]);
  ASSERT_TRUE(SetInputs(exec, changed));
  ASSERT_TRUE(exec.Run().ok());
  const std::vector<NDArray> reference = ReferenceOutputs(changed);
  ASSERT_EQ(reference.size(), outs.size());
  for (size_t k = 0; k < outs.size(); ++k) EXPECT_TRUE(SameValues(outs[k], reference[k], 0)) << "output " << k;
  // Another shape is refused.
  std::vector<int64_t> wider = expected_[0].shape();
  wider.back() += 1;
  NDArray wrong = Zeros(wider, expected_[0].dtype());
  EXPECT_ERROR(exec.SetOutputZeroCopy(0, wrong.dl()), StatusCode::kInvalidArgument, "expected");
}

TEST_P(ExecutorConformanceTest, LoadParamsAndShareParamsBindTheParamsFile) {
  Executor owner = NewExecutor();
  if (!owner.capabilities().params_files) {
    GTEST_SKIP() << "the " << GetParam().kind << " lacks params_files (its refusal is tested above)";
  }
  const std::string params = testing::ReadFileOrDie(testing::Runfile(GetParam().params));
  int param = -1;
  for (size_t i = 0; i < owner.inputs().size() && param < 0; ++i) {
    if (owner.inputs()[i].is_param) param = static_cast<int>(i);
  }
  ASSERT_GE(param, 0) << "a params file binds parameters";
  const TensorInfo& info = owner.inputs()[static_cast<size_t>(param)];
  NDArray zeros = Zeros(info.shape, info.dtype);

  // Overwrite a weight in one executor: its outputs change, another executor's do not (weights shared,
  // written copy-on-write); LoadParams puts the file's values back.
  ASSERT_TRUE(SetInputs(owner, inputs_));
  ASSERT_TRUE(owner.SetInput(param, zeros.dl()).ok());
  ASSERT_TRUE(owner.Run().ok());
  EXPECT_FALSE(OutputsAreRecorded(owner)) << "a zeroed " << info.name << " changes the outputs";
  Executor untouched = NewExecutor();
  ASSERT_TRUE(SetInputs(untouched, inputs_));
  ASSERT_TRUE(untouched.Run().ok());
  EXPECT_TRUE(OutputsAreRecorded(untouched));
  ASSERT_TRUE(owner.LoadParams(params).ok());
  ASSERT_TRUE(owner.Run().ok());
  EXPECT_TRUE(OutputsAreRecorded(owner));

  // ShareParams: the sharer's parameters become the owner's tensors.
  Executor sharer = NewExecutor();
  ASSERT_TRUE(SetInputs(sharer, inputs_));
  ASSERT_TRUE(sharer.SetInput(param, zeros.dl()).ok());
  ASSERT_TRUE(sharer.ShareParams(owner, params).ok());
  ASSERT_TRUE(sharer.Run().ok());
  EXPECT_TRUE(OutputsAreRecorded(sharer));
  auto mine = sharer.GetInput(param);
  auto theirs = owner.GetInput(param);
  ASSERT_TRUE(mine.ok() && theirs.ok());
  EXPECT_EQ(mine->data(), theirs->data());

  EXPECT_FALSE(owner.LoadParams("not a params file").ok());
  ASSERT_TRUE(owner.Run().ok());
  EXPECT_TRUE(OutputsAreRecorded(owner));
}

// ---- Warmup, Profile, Memory ----

TEST_P(ExecutorConformanceTest, WarmupKeepsRunsCorrect) {
  Executor exec = NewExecutor();
  EXPECT_TRUE(exec.Warmup().ok());  // before any input is set
  ASSERT_TRUE(SetInputs(exec, inputs_));
  EXPECT_TRUE(exec.Warmup().ok());
  ASSERT_TRUE(exec.Run().ok());
  EXPECT_TRUE(OutputsAreRecorded(exec));
  ExecutorOptions options;
  options.warmup = true;
  Executor warm = NewExecutor(options);
  ASSERT_TRUE(SetInputs(warm, inputs_));
  ASSERT_TRUE(warm.Run().ok());
  EXPECT_TRUE(OutputsAreRecorded(warm));
}

TEST_P(ExecutorConformanceTest, ProfileHasOneEntryPerKernelCallSite) {
  Executor exec = NewExecutor();
  ASSERT_TRUE(SetInputs(exec, inputs_));
  auto profile = exec.Profile(3);
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  EXPECT_EQ(static_cast<int>(profile->size()), GetParam().kernel_calls);
  std::set<uint32_t> sites;
  for (const NodeProfile& p : *profile) {
    EXPECT_FALSE(p.func_name.empty()) << p.node_id;
    EXPECT_FALSE(p.name.empty()) << p.node_id;
    EXPECT_GE(p.mean_us, 0) << p.func_name;
    EXPECT_GE(p.min_us, 0) << p.func_name;
    EXPECT_LE(p.min_us, p.mean_us) << p.func_name;
    EXPECT_TRUE(sites.insert(p.node_id).second) << "call site " << p.node_id << " listed twice";
  }
  EXPECT_TRUE(OutputsAreRecorded(exec)) << "profiling runs the model";
  EXPECT_ERROR(exec.Profile(0).status(), StatusCode::kInvalidArgument, "repeat");
}

// NodeProfile::min_us is the fastest of the `repeat` timings. The graph executor fills it; the Relax VM
// leaves it 0 (VmExecutor::DoProfile sums into mean_us only). Enable when the VM measures it.
TEST_P(ExecutorConformanceTest, DISABLED_ProfileMeasuresTheFastestRepetition) {
  Executor exec = NewExecutor();
  ASSERT_TRUE(SetInputs(exec, inputs_));
  auto profile = exec.Profile(3);
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  for (const NodeProfile& p : *profile) {
    EXPECT_GT(p.min_us, 0) << p.func_name;
    EXPECT_LE(p.min_us, p.mean_us) << p.func_name;
  }
}

TEST_P(ExecutorConformanceTest, MemoryReportsWeightsAndActivations) {
  Executor exec = NewExecutor();
  std::vector<DeviceMemory> before = exec.Memory();
  ASSERT_EQ(before.size(), exec.devices().size());
  EXPECT_EQ(DeviceName(before[0].device), "cpu:0");
  if (GetParam().has_weights) {
    EXPECT_GT(before[0].weight_bytes, 0u);
  } else {
    EXPECT_EQ(before[0].weight_bytes, 0u);
  }
  uint64_t params = 0;  // a graph's weights are its parameters
  for (const TensorInfo& t : exec.inputs()) params += t.is_param ? Bytes(t) : 0;
  if (params > 0) {
    EXPECT_EQ(before[0].weight_bytes, params);
  }
  ASSERT_TRUE(SetInputs(exec, inputs_));
  ASSERT_TRUE(exec.Run().ok());
  std::vector<DeviceMemory> after = exec.Memory();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_GT(after[0].activation_bytes, 0u);
  EXPECT_EQ(after[0].weight_bytes, before[0].weight_bytes);
  // Weights are the model's, shared: a second executor reports the same bytes.
  EXPECT_EQ(NewExecutor().Memory()[0].weight_bytes, before[0].weight_bytes);
}

// ---- Threads ----

// A second thread's call while the executor is busy is refused, never run concurrently: one thread loops
// Run while this one makes every kind of exclusive call until each has been refused once. Every call
// either succeeds (it got in between two runs) or fails with the busy refusal; the runner's own runs too.
TEST_P(ExecutorConformanceTest, ABusyExecutorRefusesASecondThread) {
  Executor exec = NewExecutor();
  ASSERT_TRUE(SetInputs(exec, inputs_));
  ASSERT_TRUE(exec.Run().ok());
  NDArray out = Zeros(expected_[0].shape(), expected_[0].dtype());
  const std::vector<std::string> calls = {"Run",          "SetInput", "GetInput", "GetOutput",
                                          "CopyOutputTo", "Warmup",   "Profile"};
  auto call = [&](size_t c) -> Status {
    switch (c) {
      case 0: return exec.Run();
      case 1: return exec.SetInput(settable_[0], inputs_[0].dl());
      case 2: return exec.GetInput(settable_[0]).status();
      case 3: return exec.GetOutput(0).status();
      case 4: return exec.CopyOutputTo(0, out.dl());
      case 5: return exec.Warmup();
      default: return exec.Profile(1).status();
    }
  };
  std::atomic<bool> stop{false};
  std::atomic<bool> runner_failed{false};
  std::string runner_error;  // written by the runner only, read after join
  std::thread runner([&] {
    while (!stop.load(std::memory_order_acquire)) {
      Status s = exec.Run();
      if (!s.ok() && !IsBusyRefusal(s)) {
        runner_error = s.ToString();
        runner_failed.store(true, std::memory_order_release);
        return;
      }
    }
  });
  std::vector<int> refused(calls.size(), 0);
  std::string error;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto all_refused = [&] {
    for (int r : refused) {
      if (r == 0) return false;
    }
    return true;
  };
  for (size_t i = 0;
       error.empty() && !runner_failed.load() && !all_refused() && std::chrono::steady_clock::now() < deadline; ++i) {
    const size_t c = i % calls.size();
    Status s = call(c);
    if (IsBusyRefusal(s)) {
      ++refused[c];
    } else if (!s.ok()) {
      error = calls[c] + ": " + s.ToString();
    }
  }
  stop.store(true, std::memory_order_release);
  runner.join();
  EXPECT_EQ(error, "");
  EXPECT_EQ(runner_error, "");
  for (size_t c = 0; c < calls.size(); ++c) EXPECT_GE(refused[c], 1) << calls[c] << " was never refused";
  ASSERT_TRUE(exec.Run().ok());
  EXPECT_TRUE(OutputsAreRecorded(exec));
}

// Executors of one model, one per thread, run concurrently (a model with a dynamic dimension: each
// thread with its own batch size).
TEST_P(ExecutorConformanceTest, ExecutorsOnSeveralThreadsRunConcurrently) {
  constexpr int kThreads = 4;
  constexpr int kRuns = 5;
  const double tolerance = GetParam().tolerance;
  std::vector<int> good(kThreads, 0);
  std::vector<std::string> errors(kThreads);
  std::vector<std::vector<NDArray>> inputs, expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(InputsWithRows(t + 1));
    expected.push_back(ExpectedWithRows(t + 1));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto exec = model_->NewExecutor();  // the model is shared; executors are created concurrently
      if (!exec.ok()) {
        errors[t] = exec.status().ToString();
        return;
      }
      for (int r = 0; r < kRuns; ++r) {
        ::testing::AssertionResult set = SetInputs(*exec, inputs[t]);
        if (!set) {
          errors[t] = set.message();
          return;
        }
        Status run = exec->Run();
        if (!run.ok()) {
          errors[t] = run.ToString();
          return;
        }
        ::testing::AssertionResult same = OutputsAre(*exec, expected[t], tolerance);
        if (!same) {
          errors[t] = same.message();
          return;
        }
        ++good[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(good[t], kRuns) << "thread " << t << ": " << errors[t];
}

// The "any thread" accessors (api/sorun.h, executor/model_executor.h) read while another thread runs
// the executor — with a model's dynamic dimension changing between runs — stay sane, and race-free
// under TSan: inputs() and outputs() never change, num_outputs() is a legal count, the indices, devices,
// threads, capabilities and weight bytes are those read before.
TEST_P(ExecutorConformanceTest, AnyThreadAccessorsWhileAnotherThreadRuns) {
  ExecutorOptions options;
  options.num_threads = 2;  // its own pool, started while the reader reads
  Executor exec = NewExecutor(options);
  const std::vector<TensorInfo> inputs = exec.inputs();
  const std::vector<TensorInfo> outputs = exec.outputs();
  const std::vector<TensorInfo>* outputs_address = &exec.outputs();
  const std::set<int> legal_counts = {static_cast<int>(outputs.size()), static_cast<int>(expected_.size())};
  const int threads = exec.num_threads();
  const ExecutorCapabilities caps = exec.capabilities();
  const uint64_t weights = exec.Memory().at(0).weight_bytes;
  const std::string kind = GetParam().kind;

  auto check = [&]() -> std::string {
    if (!SameInfos(exec.inputs(), inputs)) return "inputs() changed";
    if (&exec.outputs() != outputs_address || !SameInfos(exec.outputs(), outputs)) return "outputs() changed";
    const int n = exec.num_outputs();
    if (legal_counts.count(n) == 0) return "num_outputs() is " + std::to_string(n);
    if (exec.devices().size() != 1 || DeviceName(exec.devices()[0]) != "cpu:0") return "devices() changed";
    if (exec.num_threads() != threads) return "num_threads() is " + std::to_string(exec.num_threads());
    const ExecutorCapabilities c = exec.capabilities();
    if (c.output_zero_copy != caps.output_zero_copy || c.params_files != caps.params_files) {
      return "capabilities() changed";
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto index = exec.InputIndex(inputs[i].name);
      if (!index.ok() || *index != static_cast<int>(i)) return "InputIndex('" + inputs[i].name + "') changed";
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      auto index = exec.OutputIndex(outputs[k].name);
      if (!index.ok() || *index != static_cast<int>(k)) return "OutputIndex('" + outputs[k].name + "') changed";
    }
    if (exec.InputIndex("no_such_input").ok()) return "InputIndex found no_such_input";
    const std::vector<DeviceMemory> memory = exec.Memory();
    if (memory.size() != 1 || memory[0].weight_bytes != weights) return "Memory() weights changed";
    if (memory[0].activation_bytes > (uint64_t{1} << 30)) return "Memory() activations are insane";
    if (!SameInfos(model_->inputs(), inputs) || std::string(model_->executor_kind()) != kind) {
      return "the model's description changed";
    }
    return "";
  };

  std::atomic<bool> writer_done{false};
  std::atomic<int64_t> reads{0};
  std::atomic<bool> reader_failed{false};
  std::string reader_error;  // written by the reader only, read after join
  std::thread reader([&] {
    while (!writer_done.load(std::memory_order_acquire)) {
      reader_error = check();
      if (!reader_error.empty()) {
        reader_failed.store(true, std::memory_order_release);
        return;
      }
      reads.fetch_add(1, std::memory_order_relaxed);
    }
  });
  while (reads.load() == 0 && !reader_failed.load()) std::this_thread::yield();

  // The writer: at least 24 runs, and on until the reader has read 10 times meanwhile.
  const int64_t reads_before = reads.load();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const int64_t batches[] = {3, 1, 5, 2, 7, 4};
  const double tolerance = GetParam().tolerance;
  std::string writer_error;
  int runs = 0;
  for (; writer_error.empty() && !reader_failed.load() &&
         (runs < 24 || (reads.load() - reads_before < 10 && std::chrono::steady_clock::now() < deadline));
       ++runs) {
    const int64_t rows = batches[runs % 6];
    ::testing::AssertionResult set = SetInputs(exec, InputsWithRows(rows));
    if (!set) {
      writer_error = set.message();
      break;
    }
    Status s = exec.Run();
    if (!s.ok()) {
      writer_error = s.ToString();
      break;
    }
    ::testing::AssertionResult same = OutputsAre(exec, ExpectedWithRows(rows), tolerance);
    if (!same) writer_error = "run " + std::to_string(runs) + ": " + same.message();
  }
  const int64_t reads_during = reads.load() - reads_before;
  writer_done.store(true, std::memory_order_release);
  reader.join();
  EXPECT_EQ(writer_error, "");
  EXPECT_EQ(reader_error, "");
  EXPECT_GE(runs, 24);
  EXPECT_GE(reads_during, 10) << "the reader read while the writer ran";
}

INSTANTIATE_TEST_SUITE_P(Models, ExecutorConformanceTest, ::testing::ValuesIn(testing::ConformanceModels()),
                         [](const ::testing::TestParamInfo<ConformanceModel>& info) { return info.param.name; });

}  // namespace
}  // namespace sorun
