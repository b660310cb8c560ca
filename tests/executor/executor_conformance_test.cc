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
#include "tests/executor/conformance_fixture.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using testing::Bytes;
using testing::ConformanceModel;
using testing::CopyOf;
using testing::ExecutorConformanceTest;
using testing::IsBusyRefusal;
using testing::kBusy;
using testing::kNoSuchDeviceType;
using testing::Misaligned;
using testing::RepeatRows;
using testing::SameInfo;
using testing::SameInfos;
using testing::SameValues;
using testing::Transformed;
using testing::Zeros;

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
      // A 0-d input given a vector: refused by SetInput (ZeroDimInputsRefuseOtherShapesAtSetInput), or
      // by Run at the latest.
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

// A 0-d input takes a 0-d tensor only, at SetInput: an R.Prim scalar (prim_scale's k) and a 0-d
// R.Tensor (bool_if's c, R.Tensor((), "bool")) alike (the rank main checks, VmProgram::input_ndim).
TEST_P(ExecutorConformanceTest, ZeroDimInputsRefuseOtherShapesAtSetInput) {
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

// A refused SetInput leaves the input as it was: for the Relax VM, which refuses to run while an input
// is unset ("input 'x' is not set"), a first SetInput that fails in the copy (a tensor on a device no
// backend serves) leaves the input unset. (The graph executor has no unset state: it runs with whatever
// its inputs hold.)
TEST_P(ExecutorConformanceTest, AFailedFirstSetInputLeavesTheInputUnset) {
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
// backend ("set_input 'data': ..." / "input 'x': ...").
TEST_P(ExecutorConformanceTest, AFailedCopyFromAnotherDeviceNamesTheInput) {
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

// NodeProfile::min_us is the fastest of the timings of a call site, mean_us their mean, for both kinds
// (executor/kernel_timer.h).
TEST_P(ExecutorConformanceTest, ProfileMeasuresTheFastestRepetition) {
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

INSTANTIATE_TEST_SUITE_P(Models, ExecutorConformanceTest, ::testing::ValuesIn(testing::ConformanceModels()),
                         [](const ::testing::TestParamInfo<ConformanceModel>& info) { return info.param.name; });

}  // namespace
}  // namespace sorun
