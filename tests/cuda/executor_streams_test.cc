// Executor streams (executor/executor_streams.h) through the public API, on the zoo's mlp_cuda (a
// graph model whose dense/relu/add nodes run as CUDA kernels of nn_cuda.cu): each executor queues its
// device work on a stream of its own, SetStream hands a host stream over and back, the streams are
// current only during the executor's calls, and two executors on two threads keep their outputs.
// The _fake_driver variant runs it on the stand-in libcuda (which runs the zoo's kernels and counts
// the work queued on each stream: sorun_fake_cuda_stream_ops); on a GPU the same tests run with the
// real driver (the per-stream counts are then skipped); without a CUDA device they skip, unless
// SORUN_REQUIRE_GPU=1 (tests/cuda/stage_gpu_tests.sh's run.sh), which makes that a failure.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "api/sorun.h"
#include "backends/cuda/cuda_devices.h"
#include "runtime/device_api.h"
#include "runtime/tensor.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"
#include "tools/npy.h"

namespace sorun {
namespace {

constexpr DLDevice kCpu{kDLCPU, 0};
constexpr DLDevice kCuda0{kDLCUDA, 0};
constexpr double kTolerance = 1e-4;

std::string ZooFile(const std::string& name) { return testing::Runfile("testdata/models/" + name); }

// The stand-in driver's per-stream count of queued work, or null with the real driver.
using StreamOpsFn = unsigned long long (*)(void*);
StreamOpsFn FakeStreamOps() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return driver ? reinterpret_cast<StreamOpsFn>(dlsym(driver, "sorun_fake_cuda_stream_ops")) : nullptr;
}

Tensor Npy(const std::string& name) {
  auto t = ReadNpyFile(ZooFile(name));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Tensor();
}

double MaxError(const NDArray& actual, const Tensor& expected) {
  if (actual.num_elements() != static_cast<int64_t>(expected.num_elements())) return INFINITY;
  const float* a = static_cast<const float*>(actual.data());
  const float* e = expected.data_as<float>();
  double worst = 0;
  for (int64_t i = 0; i < actual.num_elements(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - e[i]) / std::max(1.0, std::abs(double{e[i]})));
  }
  return worst;
}

class ExecutorStreamsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Initialize().ok());
    if (!testing::FileExists(ZooFile("mlp_cuda.so"))) GTEST_SKIP() << "built without nvcc: no mlp_cuda.so";
    Status present = CheckDeviceExists(kCuda0);
    const char* required = std::getenv("SORUN_REQUIRE_GPU");
    if (!present.ok() && required != nullptr && std::string(required) == "1") {
      FAIL() << "SORUN_REQUIRE_GPU is set but there is no CUDA device: " << present.ToString();
    }
    if (!present.ok()) GTEST_SKIP() << "no CUDA device: " << present.ToString();
    auto model = Model::Load(ZooFile("mlp_cuda.so"));
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_.emplace(std::move(*model));
    input_ = Npy("mlp_cuda_input.npy");
    expected_ = Npy("mlp_cuda_expected.npy");
    for (const TensorInfo& info : model_->inputs()) {
      if (!info.is_param) input_name_ = info.name;
    }
  }

  Executor NewExecutor() {
    ExecutorOptions options;
    options.devices = {kCpu, kCuda0};
    auto ex = model_->NewExecutor(options);
    EXPECT_TRUE(ex.ok()) << ex.status().ToString();
    return std::move(*ex);
  }

  // One run through the convenience call (copies in, runs, copies every output to the host).
  double RunOnce(Executor& ex) {
    auto outputs = ex.Run({{input_name_, input_.dl()}});
    EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
    if (!outputs.ok() || outputs->empty()) return INFINITY;
    return MaxError((*outputs)[0], expected_);
  }

  std::optional<Model> model_;
  Tensor input_;
  Tensor expected_;
  std::string input_name_;
};

TEST_F(ExecutorStreamsTest, EachExecutorHasAStreamOfItsOwn) {
  Executor a = NewExecutor();
  Executor b = NewExecutor();
  auto sa = a.GetStream(kCuda0);
  auto sb = b.GetStream(kCuda0);
  ASSERT_TRUE(sa.ok() && sb.ok()) << sa.status().ToString() << sb.status().ToString();
  EXPECT_NE(*sa, nullptr);
  EXPECT_NE(*sb, nullptr);
  EXPECT_NE(*sa, *sb);
  EXPECT_LE(RunOnce(a), kTolerance);
  EXPECT_LE(RunOnce(b), kTolerance);
}

TEST_F(ExecutorStreamsTest, RunQueuesItsWorkOnTheExecutorsStreamNotStreamZero) {
  StreamOpsFn ops = FakeStreamOps();
  if (ops == nullptr) GTEST_SKIP() << "per-stream counts need the stand-in driver";
  Executor ex = NewExecutor();
  auto stream = ex.GetStream(kCuda0);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  const unsigned long long own_before = ops(*stream);
  const unsigned long long zero_before = ops(nullptr);
  EXPECT_LE(RunOnce(ex), kTolerance);
  // The input copy, the kernels and the output copy: all on the executor's stream.
  EXPECT_GE(ops(*stream) - own_before, 3u);
  EXPECT_EQ(ops(nullptr), zero_before);
}

TEST_F(ExecutorStreamsTest, SetStreamHandsTheHostsStreamOverAndBack) {
  Executor ex = NewExecutor();
  auto own = ex.GetStream(kCuda0);
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  auto host = cuda::CreateStream(0);
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  ASSERT_TRUE(ex.SetStream(kCuda0, *host).ok());
  auto now = ex.GetStream(kCuda0);
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(*now, static_cast<void*>(*host));
  StreamOpsFn ops = FakeStreamOps();
  const unsigned long long host_before = ops ? ops(*host) : 0;
  const unsigned long long own_before = ops ? ops(*own) : 0;
  EXPECT_LE(RunOnce(ex), kTolerance);
  if (ops != nullptr) {
    EXPECT_GE(ops(*host) - host_before, 3u);
    EXPECT_EQ(ops(*own), own_before);
  }
  ASSERT_TRUE(ex.SetStream(kCuda0, nullptr).ok());
  auto back = ex.GetStream(kCuda0);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, *own);
  EXPECT_LE(RunOnce(ex), kTolerance);
  EXPECT_TRUE(ex.Synchronize().ok());
  EXPECT_TRUE(cuda::DestroyStream(0, *host).ok());
}

TEST_F(ExecutorStreamsTest, StreamsAreCurrentOnlyDuringTheExecutorsCalls) {
  Executor ex = NewExecutor();
  ASSERT_EQ(cuda::CurrentStream(0), nullptr);
  EXPECT_LE(RunOnce(ex), kTolerance);
  EXPECT_EQ(cuda::CurrentStream(0), nullptr);
  // A stream the caller made current is restored, not cleared.
  auto mine = cuda::CreateStream(0);
  ASSERT_TRUE(mine.ok());
  ASSERT_TRUE(cuda::SetCurrentStream(0, *mine).ok());
  EXPECT_LE(RunOnce(ex), kTolerance);
  EXPECT_EQ(cuda::CurrentStream(0), *mine);
  EXPECT_TRUE(cuda::DestroyStream(0, *mine).ok());
}

TEST_F(ExecutorStreamsTest, DevicesWithoutStreamsAreRefusedNamingThem) {
  Executor ex = NewExecutor();
  EXPECT_ERROR(ex.GetStream(kCpu).status(), StatusCode::kInvalidArgument, "stream of cpu:0", "it has cuda:0");
  EXPECT_ERROR(ex.GetStream(DLDevice{kDLCUDA, 1}).status(), StatusCode::kInvalidArgument, "stream of cuda:1");
  EXPECT_EQ(ex.SetStream(DLDevice{kDLCUDA, 1}, nullptr).code(), StatusCode::kInvalidArgument);
  // A CPU model's executor queues nothing.
  auto cpu_model = Model::Load(ZooFile("mlp.so"));
  ASSERT_TRUE(cpu_model.ok()) << cpu_model.status().ToString();
  auto cpu_ex = cpu_model->NewExecutor();
  ASSERT_TRUE(cpu_ex.ok());
  EXPECT_ERROR(cpu_ex->GetStream(kCuda0).status(), StatusCode::kInvalidArgument, "a CPU executor queues nothing");
  EXPECT_TRUE(cpu_ex->Synchronize().ok());
}

TEST_F(ExecutorStreamsTest, TwoExecutorsOnTwoThreadsKeepTheirOutputs) {
  std::vector<Executor> executors;
  executors.push_back(NewExecutor());
  executors.push_back(NewExecutor());
  std::vector<double> worst(2, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) worst[t] = std::max(worst[t], RunOnce(executors[t]));
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_LE(worst[0], kTolerance);
  EXPECT_LE(worst[1], kTolerance);
}

}  // namespace
}  // namespace sorun
