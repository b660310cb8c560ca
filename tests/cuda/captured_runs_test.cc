// CUDA graphs through the public API (ExecutorOptions::cuda_graph, executor/captured_runs.h), for both
// executor kinds:
//   - the graph model mlp_cuda_only (every node a CUDA kernel of nn_cuda.cu): the first run with given
//     bindings runs kernel by kernel, the second is recorded and launched, later ones replay it; each
//     run's outputs equal an executor's without graphs for the same (changing) input, bit for bit;
//     a rebound input records again; the heterogeneous mlp_cuda (CPU nodes) and a CPU executor are
//     refused with the reason and run as usual;
//   - the Relax VM export testdata/relax_cuda/mlp_cubin.so: recorded and replayed; dyn_batch_fatbin.so
//     (shape functions on the host) is refused naming the kernel.
// The _fake_driver variant runs on the stand-in libcuda (fake_cuda_graph.c: capture with the driver's
// rules; SORUN_FAKE_CUDA_ANY_KERNEL=1 so the Relax exports' kernels launch, as no-ops: their values are
// checked on a GPU only) and also counts graph launches and the work queued per stream. On a GPU the same
// tests run with the real driver; without a CUDA device they skip, unless SORUN_REQUIRE_GPU=1.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
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

std::string ZooFile(const std::string& name) { return testing::Runfile("testdata/models/" + name); }
std::string RelaxFile(const std::string& name) { return testing::Runfile("testdata/relax_cuda/" + name); }

// The stand-in driver's counters, or null with the real driver.
template <typename Fn>
Fn FakeHook(const char* name) {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return driver ? reinterpret_cast<Fn>(dlsym(driver, name)) : nullptr;
}
using StreamOpsFn = unsigned long long (*)(void*);
using GraphLaunchesFn = unsigned long long (*)();

Tensor Npy(const std::string& path) {
  auto t = ReadNpyFile(path);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Tensor();
}

// `t` with every element scaled by `factor` (a new input per run).
Tensor Scaled(const Tensor& t, float factor) {
  Tensor s = *Tensor::Empty(t.shape(), t.dtype(), kCpu);
  for (int64_t i = 0; i < t.num_elements(); ++i) s.data_as<float>()[i] = t.data_as<float>()[i] * factor;
  return s;
}

std::vector<float> Floats(const NDArray& a) {
  const float* p = static_cast<const float*>(a.data());
  return std::vector<float>(p, p + a.num_elements());
}

#define ASSERT_TRUE_OK(expr)                         \
  do {                                               \
    const Status status_ = (expr);                   \
    ASSERT_TRUE(status_.ok()) << status_.ToString(); \
  } while (0)

DeviceGraphReport Report(const Executor& ex) {
  auto r = ex.GraphReport();
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : DeviceGraphReport{};
}

class CapturedRunsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Initialize().ok());
    Status present = CheckDeviceExists(kCuda0);
    const char* required = std::getenv("SORUN_REQUIRE_GPU");
    if (!present.ok() && required != nullptr && std::string(required) == "1") {
      FAIL() << "SORUN_REQUIRE_GPU is set but there is no CUDA device: " << present.ToString();
    }
    if (!present.ok()) GTEST_SKIP() << "no CUDA device: " << present.ToString();
    stand_in_ = FakeHook<GraphLaunchesFn>("sorun_fake_cuda_graph_launches") != nullptr;
  }

  static Executor NewExecutor(const Model& model, std::vector<DLDevice> devices, bool graphs) {
    ExecutorOptions options;
    options.devices = std::move(devices);
    options.cuda_graph = graphs;
    auto ex = model.NewExecutor(options);
    EXPECT_TRUE(ex.ok()) << ex.status().ToString();
    return std::move(*ex);
  }

  static std::vector<float> RunWith(Executor& ex, const std::string& input, const Tensor& value) {
    auto outputs = ex.Run({{input, value.dl()}});
    EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
    return outputs.ok() && !outputs->empty() ? Floats((*outputs)[0]) : std::vector<float>();
  }

  bool stand_in_ = false;
};

// ---- The graph executor ----

TEST_F(CapturedRunsTest, GraphModelIsRecordedOnTheSecondRunAndReplayedAfter) {
  if (!testing::FileExists(ZooFile("mlp_cuda_only.so"))) GTEST_SKIP() << "built without nvcc: no mlp_cuda_only.so";
  auto model = Model::Load(ZooFile("mlp_cuda_only.so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  Executor plain = NewExecutor(*model, {kCuda0}, false);
  Executor graphed = NewExecutor(*model, {kCuda0}, true);
  const Tensor input = Npy(ZooFile("mlp_cuda_only_input.npy"));
  auto launches = FakeHook<GraphLaunchesFn>("sorun_fake_cuda_graph_launches");
  auto stream_ops = FakeHook<StreamOpsFn>("sorun_fake_cuda_stream_ops");
  auto stream = graphed.GetStream(kCuda0);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();

  EXPECT_FALSE(Report(plain).requested);
  for (int run = 0; run < 6; ++run) {
    // A new input each run: a replay must compute from it, not repeat the recorded run's values.
    const Tensor x = Scaled(input, 1.0f + 0.25f * static_cast<float>(run));
    const std::vector<float> want = RunWith(plain, "data", x);
    const unsigned long long launches_before = launches ? launches() : 0;
    const std::vector<float> got = RunWith(graphed, "data", x);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << "run " << run;
    const DeviceGraphReport r = Report(graphed);
    EXPECT_TRUE(r.requested);
    EXPECT_EQ(r.refusal, "") << "run " << run;
    EXPECT_EQ(r.uncaptured_runs, 1) << "run " << run;
    EXPECT_EQ(r.captures, run == 0 ? 0 : 1) << "run " << run;
    EXPECT_EQ(r.replays, run) << "run " << run;
    EXPECT_EQ(r.active, run > 0);
    if (launches != nullptr) {
      EXPECT_EQ(launches() - launches_before, run == 0 ? 0u : 1u) << "run " << run;
      // dense_bias, relu, add.
      if (run > 0) {
        EXPECT_EQ(r.operations, 3u);
      }
    }
  }
  if (stream_ops != nullptr) {
    // A replayed Run queues one operation on the executor's stream: the graph launch.
    ASSERT_TRUE_OK(graphed.SetInput("data", *input.dl()));
    const unsigned long long before = stream_ops(*stream);
    ASSERT_TRUE_OK(graphed.Run());
    EXPECT_EQ(stream_ops(*stream) - before, 1u);
  }
}

TEST_F(CapturedRunsTest, ReboundInputIsRecordedAgain) {
  if (!testing::FileExists(ZooFile("mlp_cuda_only.so"))) GTEST_SKIP() << "built without nvcc: no mlp_cuda_only.so";
  auto model = Model::Load(ZooFile("mlp_cuda_only.so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  Executor plain = NewExecutor(*model, {kCuda0}, false);
  Executor graphed = NewExecutor(*model, {kCuda0}, true);
  const Tensor input = Npy(ZooFile("mlp_cuda_only_input.npy"));
  const std::vector<float> want = RunWith(plain, "data", input);
  for (int run = 0; run < 3; ++run) EXPECT_EQ(RunWith(graphed, "data", input), want);
  ASSERT_EQ(Report(graphed).captures, 1);

  // The input now read from the caller's device buffer: new bindings, so record again.
  auto bound = NDArray::Empty({1, 64}, DLDataType{kDLFloat, 32, 1}, kCuda0);
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  ASSERT_TRUE_OK(CopyTensor(*input.dl(), bound->dl()));
  ASSERT_TRUE_OK(graphed.SetInputZeroCopy("data", bound->dl()));
  for (int run = 0; run < 3; ++run) {
    ASSERT_TRUE_OK(graphed.Run());
    auto out = NDArray::Empty({1, 32}, DLDataType{kDLFloat, 32, 1}, kCpu);
    ASSERT_TRUE(out.ok());
    ASSERT_TRUE_OK(graphed.CopyOutputTo(0, out->dl()));
    EXPECT_EQ(Floats(*out), want) << "run " << run;
  }
  const DeviceGraphReport r = Report(graphed);
  EXPECT_EQ(r.captures, 2);
  EXPECT_EQ(r.uncaptured_runs, 2);
  EXPECT_EQ(r.replays, 4);
  EXPECT_TRUE(r.active);
}

TEST_F(CapturedRunsTest, HostNodesAreRefusedAndTheModelRunsAsUsual) {
  if (!testing::FileExists(ZooFile("mlp_cuda.so"))) GTEST_SKIP() << "built without nvcc: no mlp_cuda.so";
  auto model = Model::Load(ZooFile("mlp_cuda.so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  Executor plain = NewExecutor(*model, {kCpu, kCuda0}, false);
  Executor graphed = NewExecutor(*model, {kCpu, kCuda0}, true);
  const Tensor input = Npy(ZooFile("mlp_cuda_input.npy"));
  for (int run = 0; run < 3; ++run) EXPECT_EQ(RunWith(graphed, "data", input), RunWith(plain, "data", input));
  const DeviceGraphReport r = Report(graphed);
  EXPECT_TRUE(r.requested);
  EXPECT_FALSE(r.active);
  EXPECT_EQ(r.captures, 0);
  EXPECT_EQ(r.uncaptured_runs, 3);
  EXPECT_NE(r.refusal.find("node 3 'fc1' (sorun_dense_bias_relu) works on host memory"), std::string::npos)
      << r.refusal;
}

TEST_F(CapturedRunsTest, CpuExecutorIsRefused) {
  auto model = Model::Load(ZooFile("mlp.so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  Executor graphed = NewExecutor(*model, {kCpu}, true);
  const Tensor input = Npy(ZooFile("mlp_input.npy"));
  EXPECT_FALSE(RunWith(graphed, "data", input).empty());
  const DeviceGraphReport r = Report(graphed);
  EXPECT_EQ(r.uncaptured_runs, 1);
  EXPECT_NE(r.refusal.find("runs on the CPU only"), std::string::npos) << r.refusal;
}

// ---- The Relax VM ----

TEST_F(CapturedRunsTest, RelaxExportIsRecordedAndReplayed) {
  auto model = Model::Load(RelaxFile("mlp_cubin.so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  Executor graphed = NewExecutor(*model, {kCuda0}, true);
  Executor plain = NewExecutor(*model, {kCuda0}, false);
  const Tensor input = Npy(RelaxFile("mlp.input_0.npy"));
  const Tensor expected = Npy(RelaxFile("mlp.output_0.npy"));
  for (int run = 0; run < 4; ++run) {
    const Tensor x = Scaled(input, 1.0f + 0.5f * static_cast<float>(run));
    const std::vector<float> got = RunWith(graphed, "x", x);
    const std::vector<float> want = RunWith(plain, "x", x);
    if (!stand_in_) {  // the stand-in's kernels for this export are no-ops
      ASSERT_EQ(got.size(), want.size());
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << "run " << run;
    }
  }
  const DeviceGraphReport r = Report(graphed);
  EXPECT_EQ(r.refusal, "");
  EXPECT_GE(r.captures, 1);
  EXPECT_GE(r.replays, 2);
  EXPECT_TRUE(r.active);
  EXPECT_GT(r.operations, 0u);
  if (!stand_in_) {
    auto outputs = graphed.Run({{"x", input.dl()}});
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    const std::vector<float> got = Floats((*outputs)[0]);
    ASSERT_EQ(static_cast<int64_t>(got.size()), expected.num_elements());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected.data_as<float>()[i], 1e-4);
  }
}

TEST_F(CapturedRunsTest, RelaxHostShapeFunctionsAreRefused) {
  auto model = Model::Load(RelaxFile("dyn_batch_fatbin.so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  Executor graphed = NewExecutor(*model, {kCuda0}, true);
  const Tensor input = Npy(RelaxFile("dyn_batch.input_0.npy"));
  for (int run = 0; run < 3; ++run) {
    auto outputs = graphed.Run({{model->inputs()[0].name, input.dl()}});
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  }
  const DeviceGraphReport r = Report(graphed);
  EXPECT_EQ(r.captures, 0);
  EXPECT_FALSE(r.active);
  EXPECT_EQ(r.uncaptured_runs, 3);
  EXPECT_NE(r.refusal, "");
}

}  // namespace
}  // namespace sorun
