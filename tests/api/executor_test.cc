// sorun::Executor (api/sorun.h) on the zoo's mlp: every method, its errors, and lifetimes (the model
// dropped before its executor, arrays kept after their executor).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/sorun.h"
#include "tests/api/api_test_util.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using testing::MaxRelativeError;
using testing::ReadZooBytes;
using testing::ReadZooNpy;
using testing::ZooFile;

class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto model = Model::Load(ZooFile("mlp.so"));
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::move(*model);
    input_ = ReadZooNpy("mlp_input.npy");
    expected_ = ReadZooNpy("mlp_expected.npy");
    ASSERT_TRUE(input_.defined() && expected_.defined());
  }

  Executor NewExecutor(const ExecutorOptions& options = {}) {
    auto exec = model_->NewExecutor(options);
    EXPECT_TRUE(exec.ok()) << exec.status().ToString();
    return std::move(*exec);
  }

  // A float32 [1, 64] input of zeros (not the sample).
  NDArray Zeros() {
    auto zeros = NDArray::Empty({1, 64}, ParseDataType("float32").value());
    EXPECT_TRUE(zeros.ok());
    std::memset(zeros->data(), 0, zeros->nbytes());
    return *zeros;
  }

  std::optional<Model> model_;  // Model has no empty state to default-construct
  NDArray input_, expected_;
};

TEST_F(ExecutorTest, DescribesItselfLikeItsModel) {
  Executor exec = NewExecutor();
  ASSERT_EQ(exec.inputs().size(), model_->inputs().size());
  for (size_t i = 0; i < exec.inputs().size(); ++i) {
    EXPECT_EQ(exec.inputs()[i].name, model_->inputs()[i].name);
    EXPECT_EQ(exec.inputs()[i].is_param, model_->inputs()[i].is_param);
  }
  ASSERT_EQ(exec.outputs().size(), 1u);
  EXPECT_EQ(exec.outputs()[0].name, "softmax");
  ASSERT_EQ(exec.devices().size(), 1u);
  EXPECT_EQ(DeviceName(exec.devices()[0]), "cpu:0");
  EXPECT_GE(exec.num_threads(), 1);
}

TEST_F(ExecutorTest, SetInputRunGetOutputByIndexAndByName) {
  Executor exec = NewExecutor();
  ASSERT_EQ(exec.InputIndex("data").value(), 0);
  ASSERT_EQ(exec.OutputIndex("softmax").value(), 0);
  ASSERT_EQ(exec.OutputIndex("softmax:0").value(), 0);
  ASSERT_TRUE(exec.SetInput("data", input_.dl()).ok());
  ASSERT_TRUE(exec.Run().ok());
  auto out = exec.GetOutput(0);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->Describe(), "float32[1, 10] on cpu:0");
  EXPECT_LE(MaxRelativeError(*out, expected_), testing::kZooTolerance);

  ASSERT_TRUE(exec.SetInput(0, Zeros().dl()).ok());
  auto in = exec.GetInput(0);
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(in->data_as<float>()[5], 0.0f);
  ASSERT_TRUE(exec.SetInput(0, input_.dl()).ok());
  EXPECT_EQ(in->data_as<float>()[5], input_.data_as<float>()[5]);  // GetInput is the executor's own memory
}

TEST_F(ExecutorTest, RunWithInputsReturnsHostCopiesThatLaterRunsKeep) {
  Executor exec = NewExecutor();
  auto outputs = exec.Run({{"data", &input_.dl()}});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ASSERT_EQ(outputs->size(), 1u);
  EXPECT_LE(MaxRelativeError((*outputs)[0], expected_), testing::kZooTolerance);
  auto view = exec.GetOutput(0);
  ASSERT_TRUE(view.ok());
  EXPECT_NE((*outputs)[0].data(), view->data());

  NDArray zeros = Zeros();
  ASSERT_TRUE(exec.Run({{"data", &zeros.dl()}}).ok());
  // The copy keeps the first run's values; the executor's own output (a view) changed.
  EXPECT_LE(MaxRelativeError((*outputs)[0], expected_), testing::kZooTolerance);
  EXPECT_GT(MaxRelativeError(*view, expected_), testing::kZooTolerance);
}

TEST_F(ExecutorTest, CopyOutputToAndZeroCopyBindings) {
  Executor exec = NewExecutor();
  // Zero-copy input: the kernels read this array itself.
  auto bound = NDArray::Empty({1, 64}, input_.dtype());
  ASSERT_TRUE(bound.ok());
  ASSERT_TRUE(exec.SetInputZeroCopy("data", bound->dl()).ok());
  ASSERT_TRUE(bound->CopyFrom(input_.dl()).ok());  // written after binding: still seen
  // Zero-copy output: the kernels write into this array.
  auto out = NDArray::Empty({1, 10}, expected_.dtype());
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE(exec.SetOutputZeroCopy(0, out->dl()).ok());
  ASSERT_TRUE(exec.Run().ok());
  EXPECT_LE(MaxRelativeError(*out, expected_), testing::kZooTolerance);

  auto copy = NDArray::Empty({1, 10}, expected_.dtype());
  ASSERT_TRUE(copy.ok());
  ASSERT_TRUE(exec.CopyOutputTo(0, copy->dl()).ok());
  EXPECT_LE(MaxRelativeError(*copy, expected_), testing::kZooTolerance);
  EXPECT_TRUE(exec.Synchronize().ok());

  ASSERT_TRUE(exec.SetInputZeroCopy(0, input_.dl()).ok());  // by index
  ASSERT_TRUE(exec.Run().ok());
  EXPECT_LE(MaxRelativeError(*out, expected_), testing::kZooTolerance);
}

TEST_F(ExecutorTest, ErrorsNameWhatIsWrong) {
  Executor exec = NewExecutor();
  EXPECT_ERROR(exec.InputIndex("nope").status(), StatusCode::kNotFound, "'nope'", "data");
  EXPECT_ERROR(exec.OutputIndex("nope").status(), StatusCode::kNotFound, "'nope'");
  EXPECT_ERROR(exec.SetInput("nope", input_.dl()), StatusCode::kNotFound, "'nope'");
  EXPECT_ERROR(exec.SetInput(7, input_.dl()), StatusCode::kOutOfRange, "input index 7");
  EXPECT_ERROR(exec.GetOutput(3).status(), StatusCode::kOutOfRange, "output index 3");
  auto ints = NDArray::Empty({1, 64}, ParseDataType("int32").value());
  ASSERT_TRUE(ints.ok());
  EXPECT_ERROR(exec.SetInput("data", ints->dl()), StatusCode::kInvalidArgument, "'data'", "float32[1, 64]",
               "int32[1, 64]");
  auto wide = NDArray::Empty({2, 64}, input_.dtype());
  ASSERT_TRUE(wide.ok());
  EXPECT_ERROR(exec.SetInput(0, wide->dl()), StatusCode::kInvalidArgument, "float32[2, 64]");
  // Zero-copy needs 64-byte aligned data on the CPU.
  auto big = NDArray::Empty({1, 65}, input_.dtype());
  ASSERT_TRUE(big.ok());
  DLTensor unaligned = input_.dl();
  unaligned.data = big->data_as<float>() + 1;
  EXPECT_ERROR(exec.SetInputZeroCopy(0, unaligned), StatusCode::kInvalidArgument, "64-byte aligned");
  EXPECT_ERROR(exec.Run({{"data", nullptr}}).status(), StatusCode::kInvalidArgument, "'data'", "null");
  EXPECT_ERROR(exec.Run({{"nope", &input_.dl()}}).status(), StatusCode::kNotFound, "'nope'");
  EXPECT_ERROR(exec.Profile(0).status(), StatusCode::kInvalidArgument, "repeat");
  // A malformed DLTensor from a C++ caller is an error, not a read through NULL.
  DLTensor no_shape = input_.dl();
  no_shape.shape = nullptr;
  EXPECT_ERROR(exec.SetInput(0, no_shape), StatusCode::kInvalidArgument, "set_input 'data'", "shape is NULL");
  EXPECT_ERROR(exec.CopyOutputTo(0, no_shape), StatusCode::kInvalidArgument, "shape is NULL");
  DLTensor no_data = input_.dl();
  no_data.data = nullptr;
  EXPECT_ERROR(exec.SetInput("data", no_data), StatusCode::kInvalidArgument, "data is NULL");
  EXPECT_ERROR(exec.SetInputZeroCopy(0, no_data), StatusCode::kInvalidArgument, "data is NULL");
}

TEST_F(ExecutorTest, WarmupProfileAndMemory) {
  ExecutorOptions options;
  options.warmup = true;
  Executor exec = NewExecutor(options);
  EXPECT_TRUE(exec.Warmup().ok());
  ASSERT_TRUE(exec.SetInput("data", input_.dl()).ok());
  auto profile = exec.Profile(2);
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  ASSERT_EQ(profile->size(), 4u);  // fc1, fc2, fc3, softmax
  EXPECT_EQ((*profile)[0].name, "fc1");
  EXPECT_EQ(profile->back().name, "softmax");
  for (const NodeProfile& p : *profile) EXPECT_GE(p.mean_us, p.min_us) << p.name;
  std::vector<DeviceMemory> memory = exec.Memory();
  ASSERT_EQ(memory.size(), 1u);
  EXPECT_EQ(DeviceName(memory[0].device), "cpu:0");
  uint64_t param_bytes = 0;  // every float32 parameter, once
  for (const TensorInfo& t : model_->inputs()) {
    if (!t.is_param) continue;
    uint64_t n = 4;
    for (int64_t d : t.shape) n *= static_cast<uint64_t>(d);
    param_bytes += n;
  }
  EXPECT_EQ(memory[0].weight_bytes, param_bytes);
  EXPECT_GT(memory[0].activation_bytes, 0u);
}

TEST_F(ExecutorTest, LoadParamsAndShareParams) {
  auto bare = Model::LoadFromFiles(ZooFile("mlp.json"), testing::Runfile("testdata/kernels/libnn_kernels.so"), "");
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  const std::string params = ReadZooBytes("mlp.params");
  auto owner = bare->NewExecutor();
  auto sharer = bare->NewExecutor();
  ASSERT_TRUE(owner.ok() && sharer.ok());
  ASSERT_TRUE(owner->LoadParams(params).ok());
  ASSERT_TRUE(sharer->ShareParams(*owner, params).ok());
  auto a = owner->Run({{"data", &input_.dl()}});
  auto b = sharer->Run({{"data", &input_.dl()}});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LE(MaxRelativeError((*a)[0], expected_), testing::kZooTolerance);
  EXPECT_LE(MaxRelativeError((*b)[0], expected_), testing::kZooTolerance);
  EXPECT_FALSE(owner->LoadParams("not a params file").ok());
}

TEST_F(ExecutorTest, AMovedFromExecutorFailsCleanly) {
  Executor exec = NewExecutor();
  Executor taken = std::move(exec);
  EXPECT_ERROR(exec.Run(), StatusCode::kFailedPrecondition, "moved from");  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(exec.inputs().empty());
  EXPECT_TRUE(exec.Memory().empty());
  EXPECT_ERROR(taken.ShareParams(exec, ""), StatusCode::kFailedPrecondition, "other executor");
  EXPECT_TRUE(taken.Run({{"data", &input_.dl()}}).ok());
}

TEST_F(ExecutorTest, TheModelMayGoBeforeItsExecutor) {
  std::unique_ptr<Executor> exec;
  {
    auto model = Model::Load(ZooFile("mlp.so"));
    ASSERT_TRUE(model.ok());
    auto made = model->NewExecutor();
    ASSERT_TRUE(made.ok());
    exec = std::make_unique<Executor>(std::move(*made));
  }  // the only Model handle is gone
  EXPECT_EQ(exec->inputs()[0].name, "data");
  auto outputs = exec->Run({{"data", &input_.dl()}});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_LE(MaxRelativeError((*outputs)[0], expected_), testing::kZooTolerance);
}

TEST_F(ExecutorTest, ArraysOutliveTheirExecutor) {
  for (int num_threads : {0, 2}) {  // the process pool, and a pool the executor owns
    NDArray output, input;
    {
      ExecutorOptions options;
      options.num_threads = num_threads;
      Executor exec = NewExecutor(options);
      ASSERT_TRUE(exec.SetInput("data", input_.dl()).ok());
      ASSERT_TRUE(exec.Run().ok());
      output = exec.GetOutput(0).value();
      input = exec.GetInput(0).value();
    }  // the executor (and its activation memory's other owner) is gone
    EXPECT_LE(MaxRelativeError(output, expected_), testing::kZooTolerance) << num_threads;
    EXPECT_EQ(std::memcmp(input.data(), input_.data(), input_.nbytes()), 0);
  }
}

// Several threads, each creating and running its own executors of ONE shared model at the same time
// (half on the process pool, half on pools of their own).
TEST_F(ExecutorTest, ManyThreadsShareOneModel) {
  constexpr int kThreads = 4;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ExecutorOptions options;
      if (t % 2 == 1) options.num_threads = 2;
      auto exec = model_->NewExecutor(options);
      if (!exec.ok()) {
        ++failures;
        return;
      }
      for (int i = 0; i < 20; ++i) {
        auto out = exec->Run({{"data", &input_.dl()}});
        if (!out.ok() || MaxRelativeError((*out)[0], expected_) > testing::kZooTolerance) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace sorun
