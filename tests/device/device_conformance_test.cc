// One device contract, one conformance suite: every backend (cpu, opencl, cuda) runs the same tests
// of the DeviceApi through the public Tensor API. A backend with no device here skips with the
// reason its API gives (e.g. "no CUDA driver" on a machine without a GPU).
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <thread>

#include "api/model_loading.h"
#include "graph_executor/graph_executable.h"
#include "runtime/c_runtime_api.h"
#include "runtime/data_type.h"
#include "runtime/device_api.h"
#include "runtime/function_registry.h"

namespace sorun {
namespace {

class DeviceConformanceTest : public ::testing::TestWithParam<DLDeviceType> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Initialize().ok());
    device_ = DLDevice{GetParam(), 0};
    auto api = GetDeviceApi(GetParam());
    ASSERT_TRUE(api.ok()) << api.status().ToString();
    api_ = *api;
    Status present = CheckDeviceExists(device_);
    if (!present.ok()) {
      auto why = api_->Describe(0);
      GTEST_SKIP() << DeviceToString(device_) << " absent: " << (why.ok() ? present.message() : why.status().message());
    }
  }
  DLDevice device_;
  DeviceApi* api_ = nullptr;
};

Tensor HostRamp(int64_t n, float start) {
  auto t = Tensor::Empty({n}, Float32(), CpuDevice());
  for (int64_t i = 0; i < n; ++i) t->data_as<float>()[i] = start + static_cast<float>(i);
  return *t;
}

TEST_P(DeviceConformanceTest, DescribesItself) {
  auto d = api_->Describe(0);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_FALSE(d->empty());
  EXPECT_GE(api_->DeviceCount(), 1);
}

TEST_P(DeviceConformanceTest, HostDeviceHostRoundTrip) {
  Tensor src = HostRamp(1000, 1);
  auto on_device = src.CopyToDevice(device_);
  ASSERT_TRUE(on_device.ok()) << on_device.status().ToString();
  EXPECT_EQ(on_device->device(), device_);
  auto back = on_device->CopyToDevice(CpuDevice());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(std::memcmp(back->data(), src.data(), 4000), 0);
}

TEST_P(DeviceConformanceTest, DeviceToDeviceCopy) {
  Tensor src = HostRamp(257, -3);
  auto a = src.CopyToDevice(device_);
  auto b = Tensor::Empty({257}, Float32(), device_);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(b->CopyFrom(*a->dl()).ok());
  auto back = b->CopyToDevice(CpuDevice());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->data_as<float>()[256], 253.0f);
}

TEST_P(DeviceConformanceTest, CopiesHonourByteOffsets) {
  // Write the second half of a device buffer through a view, read the whole buffer back.
  auto dev = Tensor::Empty({64}, Float32(), device_);
  ASSERT_TRUE(dev.ok());
  Tensor zeros = HostRamp(64, 0);
  std::fill(zeros.data_as<float>(), zeros.data_as<float>() + 64, 0.0f);
  ASSERT_TRUE(dev->CopyFrom(*zeros.dl()).ok());
  auto half = dev->View({32}, Float32(), 32 * sizeof(float));
  ASSERT_TRUE(half.ok());
  Tensor ramp = HostRamp(32, 100);
  ASSERT_TRUE(half->CopyFrom(*ramp.dl()).ok()) << DeviceToString(device_);
  auto back = dev->CopyToDevice(CpuDevice());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->data_as<float>()[31], 0.0f);
  EXPECT_EQ(back->data_as<float>()[32], 100.0f);
  EXPECT_EQ(back->data_as<float>()[63], 131.0f);
  // And reading through the view.
  Tensor out = HostRamp(32, 0);
  ASSERT_TRUE(half->CopyTo(*out.dl()).ok());
  EXPECT_EQ(out.data_as<float>()[5], 105.0f);
}

TEST_P(DeviceConformanceTest, SizeMismatchIsAnError) {
  auto dev = Tensor::Empty({8}, Float32(), device_);
  ASSERT_TRUE(dev.ok());
  Tensor host = HostRamp(9, 0);
  Status s = dev->CopyFrom(*host.dl());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

TEST_P(DeviceConformanceTest, ZeroSizeAllocationsWork) {
  auto t = Tensor::Empty({0, 4}, Float32(), device_);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto host = Tensor::Empty({0, 4}, Float32(), CpuDevice());
  EXPECT_TRUE(t->CopyFrom(*host->dl()).ok());
}

TEST_P(DeviceConformanceTest, SyncAndSetDevice) {
  EXPECT_TRUE(api_->Sync(device_, nullptr).ok());
  EXPECT_TRUE(api_->SetDevice(0).ok());
  Status bad = api_->SetDevice(1000);
  EXPECT_FALSE(bad.ok());
  // Through the registry, as generated host code does.
  auto r = FunctionRegistry::Global().Get("__tvm_set_device")(static_cast<int>(device_.device_type), 0);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
}

TEST_P(DeviceConformanceTest, WorkspaceThroughTheCApi) {
  void* a = TVMBackendAllocWorkspace(device_.device_type, 0, 4096, kDLFloat, 32);
  void* b = TVMBackendAllocWorkspace(device_.device_type, 0, 100, kDLFloat, 32);
  ASSERT_NE(a, nullptr) << TVMGetLastError();
  ASSERT_NE(b, nullptr) << TVMGetLastError();
  EXPECT_EQ(TVMBackendFreeWorkspace(device_.device_type, 0, b), 0);
  EXPECT_EQ(TVMBackendFreeWorkspace(device_.device_type, 0, a), 0);
}

TEST_P(DeviceConformanceTest, AbsentDeviceIdIsUnavailable) {
  DLDevice missing{device_.device_type, 999};
  EXPECT_EQ(CheckDeviceExists(missing).code(), StatusCode::kUnavailable);
  auto t = Tensor::Empty({4}, Float32(), missing);
  EXPECT_FALSE(t.ok());
}

TEST_P(DeviceConformanceTest, ConcurrentCopiesFromManyThreads) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        Tensor src = HostRamp(512, static_cast<float>(t * 1000 + i));
        auto dev = src.CopyToDevice(device_);
        if (!dev.ok()) {
          ++failures;
          continue;
        }
        auto back = dev->CopyToDevice(CpuDevice());
        if (!back.ok() || std::memcmp(back->data(), src.data(), 2048) != 0) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, DeviceConformanceTest, ::testing::Values(kDLCPU, kDLOpenCL, kDLCUDA),
                         [](const ::testing::TestParamInfo<DLDeviceType>& info) {
                           return std::string(DeviceTypeName(info.param));
                         });

}  // namespace
}  // namespace sorun
