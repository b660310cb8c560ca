// End-to-end tests over the model zoo: every model packed by the build (sorun_model → `sorun pack`)
// into one .so is loaded, run on each device it supports and compared with the expected output from
// the independent reference (testdata/models/reference_ops.cc, double precision). Tolerance: max
// |actual - expected| / max(1, |expected|) <= 1e-4 (float32 kernels vs double reference).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>

#include "api/model_loading.h"
#include "backends/opencl/opencl_module.h"
#include "base/file_util.h"
#include "graph_executor/graph_executable.h"
#include "packer/exporter.h"
#include "runtime/data_type.h"
#include "runtime/device_api.h"
#include "tests/util/test_util.h"
#include "tools/npy.h"

namespace sorun {
namespace {

constexpr double kTolerance = 1e-4;

std::string ModelPath(const std::string& file) { return testing::Runfile("testdata/models/" + file); }

Tensor Npy(const std::string& file) {
  auto t = ReadNpyFile(ModelPath(file));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Tensor();
}

double MaxError(const Tensor& actual, const Tensor& expected) {
  if (actual.shape() != expected.shape() || actual.dtype() != expected.dtype()) return INFINITY;
  double worst = 0;
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    double e = expected.data_as<float>()[i];
    double err = std::fabs(actual.data_as<float>()[i] - e) / std::max(1.0, std::fabs(e));
    if (!(err <= worst)) worst = err;
  }
  return worst;
}

bool OpenclPresent() { return CheckDeviceExists(DLDevice{kDLOpenCL, 0}).ok(); }

// Runs `exec` on the model's sample input and returns the output copied to the host.
Tensor RunSample(GraphExecutor& exec, const std::string& model) {
  Tensor input = Npy(model + "_input.npy");
  Status s = exec.SetInput("data", *input.dl());
  EXPECT_TRUE(s.ok()) << s.ToString();
  s = exec.Run();
  EXPECT_TRUE(s.ok()) << s.ToString();
  auto info = exec.OutputInfo()[0];
  auto out = Tensor::Empty(info.shape, info.dtype, CpuDevice());
  s = exec.CopyOutputTo(0, *out->dl());
  EXPECT_TRUE(s.ok()) << s.ToString();
  return *out;
}

struct Case {
  std::string model;
  std::vector<DLDevice> devices;
};

class ZooTest : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() { ASSERT_TRUE(Initialize().ok()); }
};

TEST_P(ZooTest, OneFileLoadsRunsAndMatchesTheReference) {
  const Case& c = GetParam();
  for (const DLDevice& d : c.devices) {
    if (d.device_type == kDLOpenCL && !OpenclPresent()) GTEST_SKIP() << "no OpenCL platform";
  }
  auto model = Load(ModelPath(c.model + ".so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto exec = CreateExecutor(*model, c.devices);
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  Tensor out = RunSample(**exec, c.model);
  EXPECT_LE(MaxError(out, Npy(c.model + "_expected.npy")), kTolerance) << c.model;
  // Run again (steady state) and compare again: no state leaks between runs.
  Tensor again = RunSample(**exec, c.model);
  EXPECT_LE(MaxError(again, Npy(c.model + "_expected.npy")), kTolerance);
}

TEST_P(ZooTest, ThreeFilePathGivesTheSameOutput) {
  const Case& c = GetParam();
  if (c.model == "mlp_opencl" && !OpenclPresent()) GTEST_SKIP() << "no OpenCL platform";
  // The three-file deployment: graph JSON + a plain kernel library + the params file.
  std::string lib =
      c.model == "mlp_opencl" ? "testdata/kernels/libnn_opencl_kernels.so" : "testdata/kernels/libnn_kernels.so";
  if (c.model == "mlp_opencl") {
    // The plain library has no OpenCL module: use the packed library as the kernel library instead
    // (the graph and params still come from the side files).
    lib = "testdata/models/mlp_opencl.so";
  }
  auto library = Load(testing::Runfile(lib));
  ASSERT_TRUE(library.ok()) << library.status().ToString();
  auto exec =
      CreateExecutorFromFiles(ModelPath(c.model + ".json"), *library, ModelPath(c.model + ".params"), c.devices);
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  Tensor out = RunSample(**exec, c.model);
  EXPECT_LE(MaxError(out, Npy(c.model + "_expected.npy")), kTolerance);
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooTest,
                         ::testing::Values(Case{"mlp", {CpuDevice()}}, Case{"cnn", {CpuDevice()}},
                                           Case{"resblock", {CpuDevice()}}, Case{"digits", {CpuDevice()}},
                                           Case{"conv_heavy", {CpuDevice()}},
                                           Case{"mlp_opencl", {CpuDevice(), DLDevice{kDLOpenCL, 0}}}),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.model; });

TEST(ZooDeviceTest, OpenclModelWithOnlyTheAcceleratorNamedStillUsesTheHost) {
  ASSERT_TRUE(Initialize().ok());
  if (!OpenclPresent()) GTEST_SKIP() << "no OpenCL platform";
  auto model = Load(ModelPath("mlp_opencl.so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto exec = CreateExecutor(*model, {DLDevice{kDLOpenCL, 0}});
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  Tensor out = RunSample(**exec, "mlp_opencl");
  EXPECT_LE(MaxError(out, Npy("mlp_opencl_expected.npy")), kTolerance);
  // Weights of the OpenCL layers were uploaded once and are shared by a second executor.
  auto second = CreateExecutor(*model, {DLDevice{kDLOpenCL, 0}});
  ASSERT_TRUE(second.ok());
  int w = *(*exec)->GetInputIndex("fc2_w");
  EXPECT_EQ((*exec)->GetInput(w)->data(), (*second)->GetInput(w)->data());
  EXPECT_EQ((*exec)->GetInput(w)->device().device_type, kDLOpenCL);
}

TEST(ZooDeviceTest, OpenclModelOnACpuOnlyExecutorIsAClearError) {
  ASSERT_TRUE(Initialize().ok());
  auto model = Load(ModelPath("mlp_opencl.so"));
  ASSERT_TRUE(model.ok());
  auto exec = CreateExecutor(*model, {CpuDevice()});
  ASSERT_FALSE(exec.ok());
  EXPECT_NE(exec.status().message().find("must live on a opencl device"), std::string::npos) << exec.status().message();
}

TEST(ZooFormatTest, TarExportRuns) {
  ASSERT_TRUE(Initialize().ok());
  auto model = Load(ModelPath("cnn_tar.tar"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto exec = CreateExecutor(*model, {CpuDevice()});
  ASSERT_TRUE(exec.ok());
  EXPECT_LE(MaxError(RunSample(**exec, "cnn"), Npy("cnn_expected.npy")), kTolerance);
}

TEST(ZooFormatTest, LegacyBlobWithoutImportTreeRunsThroughTheThreeFilePath) {
  // A pre-v0.7 kernel library: host code + an "opencl" module in a blob WITHOUT _import_tree; the
  // graph and params ship as separate files.
  ASSERT_TRUE(Initialize().ok());
  if (!OpenclPresent()) GTEST_SKIP() << "no OpenCL platform";
  DeviceModulePayload cl;
  cl.fmt = "cl";
  cl.data = *ReadFileToString(testing::Runfile("testdata/kernels/nn_opencl.cl"));
  FunctionInfo relu, add, dense;
  relu.arg_types = {MakeDType(kDTypeHandle, 64), MakeDType(kDTypeHandle, 64), Int32()};
  add.arg_types = {MakeDType(kDTypeHandle, 64), MakeDType(kDTypeHandle, 64), MakeDType(kDTypeHandle, 64), Int32()};
  dense.arg_types = {MakeDType(kDTypeHandle, 64),
                     MakeDType(kDTypeHandle, 64),
                     MakeDType(kDTypeHandle, 64),
                     MakeDType(kDTypeHandle, 64),
                     Int32(),
                     Int32(),
                     Int32()};
  for (FunctionInfo* f : {&relu, &add, &dense}) f->launch_param_tags = {"blockIdx.x", "threadIdx.x"};
  cl.functions = {
      {"sorun_dev_add_kernel", add}, {"sorun_dev_dense_bias_kernel", dense}, {"sorun_dev_relu_kernel", relu}};
  BinaryWriter w;
  w.WriteU64(1);  // one module, no _import_tree
  w.WriteString("opencl");
  WriteDeviceModulePayload(cl, &w);
  std::string payload = w.bytes();
  std::string dir = testing::MakeTempDir("legacy");
  HostCode host;
  host.files = {testing::Runfile("testdata/kernels/nn_kernels.c"),
                testing::Runfile("testdata/kernels/nn_device_host.c")};
  host.compile_flags = {testing::KernelIncludeFlag(), "-std=c11", "-D_GNU_SOURCE", "-DSORUN_DEVICE_OPENCL"};
  ASSERT_TRUE(LinkLibraryWithBlob(&payload, {host}, dir + "/legacy_lib.so").ok());
  auto lib = Load(dir + "/legacy_lib.so");
  ASSERT_TRUE(lib.ok()) << lib.status().ToString();
  EXPECT_STREQ(lib->type_key(), "library");
  ASSERT_EQ(lib->imports().size(), 1u);
  EXPECT_STREQ(lib->imports()[0].type_key(), "opencl");
  auto legacy = Load(dir + "/legacy_lib.so");
  ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
  auto exec = CreateExecutorFromFiles(ModelPath("mlp_opencl.json"), *legacy, ModelPath("mlp_opencl.params"),
                                      {CpuDevice(), DLDevice{kDLOpenCL, 0}});
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  EXPECT_LE(MaxError(RunSample(**exec, "mlp_opencl"), Npy("mlp_opencl_expected.npy")), kTolerance);
}

TEST(ZooConcurrencyTest, SeveralExecutorsFromOneLoadRunConcurrently) {
  ASSERT_TRUE(Initialize().ok());
  auto model = Load(ModelPath("cnn.so"));
  ASSERT_TRUE(model.ok());
  Tensor input = Npy("cnn_input.npy");
  Tensor expected = Npy("cnn_expected.npy");
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      auto exec = CreateExecutor(*model, {CpuDevice()});
      if (!exec.ok()) {
        ++failures;
        return;
      }
      auto out = Tensor::Empty({1, 10}, Float32(), CpuDevice());
      for (int i = 0; i < 25; ++i) {
        if (!(*exec)->SetInput("data", *input.dl()).ok() || !(*exec)->Run().ok() ||
            !(*exec)->CopyOutputTo(0, *out->dl()).ok() || MaxError(*out, expected) > kTolerance) {
          ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(ZooDigitsTest, TrainedClassifierReachesItsHeldOutAccuracy) {
  // digits_meta.json: test_accuracy 0.9722 on 360 held-out images (train_digits.py).
  ASSERT_TRUE(Initialize().ok());
  auto model = Load(ModelPath("digits.so"));
  ASSERT_TRUE(model.ok());
  auto exec = CreateExecutor(*model, {CpuDevice()});
  ASSERT_TRUE(exec.ok());
  Tensor x = Npy("digits/digits_test_x.npy");
  Tensor y = Npy("digits/digits_test_y.npy");
  ASSERT_EQ(x.shape(), (std::vector<int64_t>{360, 64}));
  int correct = 0;
  auto sample = Tensor::Empty({1, 64}, Float32(), CpuDevice());
  for (int i = 0; i < 360; ++i) {
    std::memcpy(sample->data(), x.data_as<float>() + i * 64, 64 * sizeof(float));
    ASSERT_TRUE((*exec)->SetInput("data", *sample->dl()).ok());
    ASSERT_TRUE((*exec)->Run().ok());
    const float* p = (*exec)->GetOutput(0)->data_as<float>();
    int best = static_cast<int>(std::max_element(p, p + 10) - p);
    correct += best == y.data_as<int64_t>()[i];
  }
  EXPECT_EQ(correct, 350);  // 350 / 360 = 0.9722, as the training script measured in numpy
}

bool CudaPresent() { return CheckDeviceExists(DLDevice{kDLCUDA, 0}).ok(); }

bool CudaModelsBuilt() { return testing::FileExists(ModelPath("mlp_with_cuda_module.so")); }

TEST(ZooCudaTest, ModelWithACudaModuleLoadsAndRunsOnTheCpuWithoutADriver) {
  ASSERT_TRUE(Initialize().ok());
  if (!CudaModelsBuilt()) GTEST_SKIP() << "no CUDA toolkit at build time: the CUDA models were not built";
  auto model = Load(ModelPath("mlp_with_cuda_module.so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_EQ(model->imports().size(), 1u);
  ASSERT_EQ(model->imports()[0].imports().size(), 1u);
  EXPECT_STREQ(model->imports()[0].imports()[0].type_key(), "cuda");
  auto exec = CreateExecutor(*model, {CpuDevice()});
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  EXPECT_LE(MaxError(RunSample(**exec, "mlp"), Npy("mlp_expected.npy")), kTolerance);
}

TEST(ZooCudaTest, HeterogeneousCudaModelRunsOnAGpuAndSaysWhyNotOtherwise) {
  ASSERT_TRUE(Initialize().ok());
  if (!CudaModelsBuilt()) GTEST_SKIP() << "no CUDA toolkit at build time: the CUDA models were not built";
  auto model = Load(ModelPath("mlp_cuda.so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto exec = CreateExecutor(*model, {CpuDevice(), DLDevice{kDLCUDA, 0}});
  if (!CudaPresent()) {
    ASSERT_FALSE(exec.ok());
    EXPECT_EQ(exec.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(exec.status().message().find("no CUDA driver"), std::string::npos) << exec.status().message();
    GTEST_SKIP() << "no CUDA device: " << exec.status().message();
  }
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  EXPECT_LE(MaxError(RunSample(**exec, "mlp_cuda"), Npy("mlp_cuda_expected.npy")), kTolerance);
}

TEST(ZooConcurrencyTest, ConcurrentLoadsOfDifferentFiles) {
  ASSERT_TRUE(Initialize().ok());
  const std::vector<std::string> models = {"mlp", "cnn", "resblock", "digits"};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int round = 0; round < 2; ++round) {
    for (const std::string& m : models) {
      threads.emplace_back([&, m] {
        for (int i = 0; i < 10; ++i) {
          auto model = Load(ModelPath(m + ".so"));
          if (!model.ok()) {
            ++failures;
            continue;
          }
          auto exec = CreateExecutor(*model, {CpuDevice()});
          if (!exec.ok()) {
            ++failures;
            continue;
          }
          Tensor input = Npy(m + "_input.npy");
          auto info = (*exec)->OutputInfo()[0];
          auto out = Tensor::Empty(info.shape, info.dtype, CpuDevice());
          if (!(*exec)->SetInput("data", *input.dl()).ok() || !(*exec)->Run().ok() ||
              !(*exec)->CopyOutputTo(0, *out->dl()).ok() || MaxError(*out, Npy(m + "_expected.npy")) > kTolerance) {
            ++failures;
          }
        }
      });
    }
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(ZooBigTest, BigModelLoadsInPlaceAndMatches) {
  ASSERT_TRUE(Initialize().ok());
  auto model = Load(ModelPath("big256.so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto* factory = *GetFactory(*model);
  EXPECT_GE(factory->weights()->total_bytes(), 256ull << 20);
  for (const auto& kv : factory->weights()->params()) EXPECT_TRUE(kv.second.read_only()) << kv.first << " was copied";
  auto exec = CreateExecutor(*model, {CpuDevice()});
  ASSERT_TRUE(exec.ok());
  EXPECT_LE(MaxError(RunSample(**exec, "big256"), Npy("big256_expected.npy")), kTolerance);
}

}  // namespace
}  // namespace sorun
