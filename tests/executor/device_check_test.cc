// NewExecutor's device check (executor/device_check.h) through the public API, on real model files of
// both executor kinds: what Model::device_types_needed() says, a model whose kernels are in a CUDA or
// OpenCL module refused without a device of that type, a CPU-only model refused on a CUDA or OpenCL
// device, each with the whole message; the check comes before the executor's thread pool, covers the
// three-file form, and lets fitting devices through to the backends (which may still find no device).
// No fixture has two device modules: that message is checked on CheckExecutorDevices itself.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "api/sorun.h"
#include "executor/device_check.h"
#include "tests/util/host_build.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

constexpr DLDevice kCpu0{kDLCPU, 0};
constexpr DLDevice kCl0{kDLOpenCL, 0};
constexpr DLDevice kCuda0{kDLCUDA, 0};
constexpr DLDevice kCuda1{kDLCUDA, 1};

// One model file of the fixtures and the device types its kernels need.
struct ModelCase {
  const char* name;  // the test's name for it
  const char* file;  // runfile path
  DLDeviceType needs;
};

void PrintTo(const ModelCase& c, std::ostream* os) { *os << c.file; }

const ModelCase kCpuGraph{"cpu_graph", "testdata/models/mlp.so", kDLCPU};
const ModelCase kCpuRelax{"cpu_relax", "testdata/relax/mlp.so", kDLCPU};
const ModelCase kOpenclGraph{"opencl_graph", "testdata/models/mlp_opencl.so", kDLOpenCL};
const ModelCase kOpenclTextureGraph{"opencl_texture_graph", "testdata/opencl_texture/conv_nchw_texture.so", kDLOpenCL};
const ModelCase kOpenclRelax{"opencl_relax", "testdata/relax_device/mlp_opencl.so", kDLOpenCL};
const ModelCase kCudaGraph{"cuda_graph", "testdata/models/mlp_cuda_standin.so", kDLCUDA};
const ModelCase kCudaRelax{"cuda_relax", "testdata/relax_cuda/mlp_ptx.so", kDLCUDA};

// This machine's build of the case's file (tests/util/host_build.h): the TVM exports of CUDA and OpenCL
// models are x86-64 only, and their cases skip elsewhere.
std::string PathOf(const ModelCase& c) { return testing::Runfile(testing::HostBuild(c.file)); }

Model LoadOrDie(const std::string& path) {
  auto model = Model::Load(path);
  EXPECT_TRUE(model.ok()) << path << ": " << model.status().ToString();
  return std::move(model).value();
}

StatusOr<Executor> NewExecutorOn(const Model& model, std::vector<DLDevice> devices) {
  ExecutorOptions options;
  options.devices = std::move(devices);
  return model.NewExecutor(options);
}

// ---- Every model ----

class DeviceCheckTest : public ::testing::TestWithParam<ModelCase> {};

TEST_P(DeviceCheckTest, TheModelSaysTheDeviceTypeItsKernelsNeed) {
  SORUN_SKIP_IF_FOREIGN_BUILD(PathOf(GetParam()));
  const ModelCase& c = GetParam();
  Model model = LoadOrDie(PathOf(c));
  EXPECT_EQ(model.device_types_needed(), std::vector<DLDeviceType>{c.needs});
  EXPECT_STREQ(DeviceTypeName(c.needs), c.needs == kDLCPU ? "cpu" : c.needs == kDLCUDA ? "cuda" : "opencl");
}

// A model with a device module and only the CPU: refused naming the module, the device type it needs and
// what it was given (ExecutorOptions' default devices too). A CPU-only model on a CUDA or OpenCL device:
// refused naming what it has kernels for and the device.
TEST_P(DeviceCheckTest, TheCpuAloneOrAnotherDeviceTypeIsRefused) {
  SORUN_SKIP_IF_FOREIGN_BUILD(PathOf(GetParam()));
  const ModelCase& c = GetParam();
  const std::string path = PathOf(c);
  Model model = LoadOrDie(path);
  if (c.needs == kDLCPU) {
    EXPECT_ERROR(NewExecutorOn(model, {kCl0}).status(), StatusCode::kInvalidArgument,
                 path + ": it has kernels for cpu only (no OpenCL module): it cannot run on opencl:0");
    EXPECT_ERROR(NewExecutorOn(model, {kCpu0, kCuda1}).status(), StatusCode::kInvalidArgument,
                 path + ": it has kernels for cpu only (no CUDA module): it cannot run on cuda:1");
    return;
  }
  const std::string needs = c.needs == kDLCUDA ? "its kernels are in a CUDA module: it needs a cuda device"
                                               : "its kernels are in an OpenCL module: it needs an opencl device";
  EXPECT_ERROR(model.NewExecutor().status(), StatusCode::kInvalidArgument,
               path + ": " + needs + ", the executor was given cpu:0");
  const DLDevice other = c.needs == kDLCUDA ? kCl0 : kCuda0;
  EXPECT_ERROR(NewExecutorOn(model, {other, kCpu0}).status(), StatusCode::kInvalidArgument,
               path + ": " + needs + ", the executor was given " + DeviceName(other) + ", cpu:0");
  const DLDevice own{c.needs, 0};
  const std::string other_module = c.needs == kDLCUDA ? "(no OpenCL module)" : "(no CUDA module)";
  EXPECT_ERROR(NewExecutorOn(model, {own, other}).status(), StatusCode::kInvalidArgument,
               path + ": it has kernels for " + DeviceTypeName(c.needs) + " only " + other_module +
                   ": it cannot run on " + DeviceName(other));
}

// Devices that fit pass the check: the executor is made, or the backend says why it cannot be (no
// OpenCL platform, no CUDA driver here) — never the device check's InvalidArgument.
TEST_P(DeviceCheckTest, FittingDevicesPassTheCheck) {
  SORUN_SKIP_IF_FOREIGN_BUILD(PathOf(GetParam()));
  const ModelCase& c = GetParam();
  Model model = LoadOrDie(PathOf(c));
  for (const std::vector<DLDevice>& devices :
       {std::vector<DLDevice>{DLDevice{c.needs, 0}}, std::vector<DLDevice>{DLDevice{c.needs, 0}, kCpu0}}) {
    auto exec = NewExecutorOn(model, devices);
    if (exec.ok()) continue;
    EXPECT_NE(exec.status().code(), StatusCode::kInvalidArgument) << exec.status().ToString();
    EXPECT_FALSE(testing::Contains(exec.status().message(), "its kernels")) << exec.status().ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(Models, DeviceCheckTest,
                         ::testing::Values(kCpuGraph, kCpuRelax, kOpenclGraph, kOpenclTextureGraph, kOpenclRelax,
                                           kCudaGraph, kCudaRelax),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- The rest of the contract ----

// The check runs before the executor's own thread pool is made: options that would fail there (a CPU id
// no machine has) are not reached.
TEST(DeviceCheckOrderTest, TheRefusalComesBeforeTheThreadPool) {
  SORUN_SKIP_IF_FOREIGN_BUILD(PathOf(kCudaRelax));
  const std::string path = PathOf(kCudaRelax);
  Model model = LoadOrDie(path);
  ExecutorOptions options;
  options.cpu_affinity = {100000};
  EXPECT_ERROR(model.NewExecutor(options).status(), StatusCode::kInvalidArgument,
               path + ": its kernels are in a CUDA module: it needs a cuda device, the executor was given cpu:0");
  options.devices = {kCpu0};
  Model cpu_model = LoadOrDie(PathOf(kCpuGraph));
  EXPECT_ERROR(cpu_model.NewExecutor(options).status(), StatusCode::kInvalidArgument, "ExecutorOptions", "CPU 100000");
}

// The three-file form: the device types come from the tree of the library given (a packed OpenCL model
// standing for its kernel library), the message names that library.
TEST(DeviceCheckOrderTest, ThreeFileDeploymentIsCheckedToo) {
  const std::string library = PathOf(kOpenclGraph);
  auto model = Model::LoadFromFiles(testing::Runfile("testdata/models/mlp_opencl.json"), library,
                                    testing::Runfile("testdata/models/mlp_opencl.params"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(model->device_types_needed(), std::vector<DLDeviceType>{kDLOpenCL});
  EXPECT_ERROR(
      model->NewExecutor().status(), StatusCode::kInvalidArgument,
      library + ": its kernels are in an OpenCL module: it needs an opencl device, the executor was given cpu:0");

  auto cpu = Model::LoadFromFiles(testing::Runfile("testdata/models/mlp.json"),
                                  testing::Runfile("testdata/kernels/libnn_kernels.so"),
                                  testing::Runfile("testdata/models/mlp.params"));
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  EXPECT_EQ(cpu->device_types_needed(), std::vector<DLDeviceType>{kDLCPU});
  EXPECT_ERROR(NewExecutorOn(*cpu, {kCl0}).status(), StatusCode::kInvalidArgument, "no OpenCL module", "opencl:0");
}

// Two loads of one Relax file share its program (the root module caches it): both say the same.
TEST(DeviceCheckOrderTest, ASecondLoadOfTheSameFileSaysTheSame) {
  SORUN_SKIP_IF_FOREIGN_BUILD(PathOf(kCudaRelax));
  Model first = LoadOrDie(PathOf(kCudaRelax));
  Model second = LoadOrDie(PathOf(kCudaRelax));
  EXPECT_EQ(first.device_types_needed(), second.device_types_needed());
  EXPECT_ERROR(second.NewExecutor().status(), StatusCode::kInvalidArgument, "it needs a cuda device");
}

// A model with a CUDA and an OpenCL module needs both; a device list with one names the other.
TEST(DeviceCheckOrderTest, TwoDeviceModulesNeedBothDevices) {
  const std::vector<DLDeviceType> both{kDLCUDA, kDLOpenCL};
  EXPECT_TRUE(CheckExecutorDevices(both, {kCuda0, kCl0}).ok());
  EXPECT_TRUE(CheckExecutorDevices(both, {kCl0, kCuda1, kCpu0}).ok());
  EXPECT_ERROR(CheckExecutorDevices(both, {kCuda0, kCpu0}), StatusCode::kInvalidArgument,
               "its kernels are in a CUDA module and an OpenCL module: it needs an opencl device, the executor was "
               "given cuda:0, cpu:0");
  EXPECT_ERROR(CheckExecutorDevices(both, {kCuda0, kCl0, DLDevice{kDLVulkan, 0}}), StatusCode::kInvalidArgument,
               "it has kernels for cuda and opencl only (no vulkan module): it cannot run on vulkan:0");
  EXPECT_ERROR(CheckExecutorDevices(both, {}), StatusCode::kInvalidArgument, "it needs a cuda device",
               "the executor was given no device");
}

TEST(DeviceCheckOrderTest, AMovedFromModelNeedsNothing) {
  Model model = LoadOrDie(PathOf(kCpuGraph));
  Model taken = std::move(model);
  EXPECT_TRUE(model.device_types_needed().empty());  // NOLINT(bugprone-use-after-move): the documented state
  EXPECT_EQ(taken.device_types_needed(), std::vector<DLDeviceType>{kDLCPU});
}

}  // namespace
}  // namespace sorun
