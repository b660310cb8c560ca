// The CUDA backend on a machine without a GPU: the driver loader's errors, registration, and every
// device operation failing cleanly with "no CUDA driver" while CPU work and model loading go on.
// Tests that need the driver to be absent skip where one is installed (cuda_gpu_test covers them).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_devices.h"
#include "backends/cuda/cuda_driver.h"
#include "runtime/blob_loader.h"
#include "runtime/c_runtime_api.h"
#include "runtime/data_type.h"
#include "runtime/device_api.h"
#include "runtime/function_registry.h"
#include "runtime/last_error.h"
#include "runtime/registry_keys.h"
#include "runtime/tensor.h"

namespace sorun {
namespace {

constexpr DLDevice kCuda0{kDLCUDA, 0};

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// First in this file: nothing before it may have opened the driver.
TEST(CudaBackendTest, RegistrationDoesNotOpenTheDriver) {
  void* before = dlopen(cuda::kCudaDriverLibrary, RTLD_NOW | RTLD_NOLOAD);
  if (before != nullptr) {
    dlclose(before);
    GTEST_SKIP() << "the driver was already open in this process";
  }
  ASSERT_TRUE(RegisterCudaBackend().ok());
  ASSERT_TRUE(GetDeviceApi(kDLCUDA).ok());
  void* after = dlopen(cuda::kCudaDriverLibrary, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_EQ(after, nullptr) << "RegisterCudaBackend opened " << cuda::kCudaDriverLibrary;
  if (after != nullptr) dlclose(after);
}

TEST(CudaDriverTest, MissingLibraryIsUnavailableWithDlerror) {
  auto driver = cuda::CudaDriver::Open("libsorun_no_such_cuda_driver.so.1");
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(driver.status().message(), "no CUDA driver: libsorun_no_such_cuda_driver.so.1 not found ("))
      << driver.status().message();
  // dlerror's own text is carried.
  EXPECT_TRUE(Contains(driver.status().message(), "cannot open shared object file")) << driver.status().message();
}

TEST(CudaDriverTest, LibraryWithoutDriverSymbolsIsRefused) {
  auto driver = cuda::CudaDriver::Open("libm.so.6");
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(driver.status().message(), "no CUDA driver: libm.so.6 has no symbol cuGetErrorName"))
      << driver.status().message();
}

TEST(CudaDriverTest, ResultCodesMapToStatusClasses) {
  using cuda::CudaResultStatusCode;
  EXPECT_EQ(CudaResultStatusCode(cuda::CUDA_SUCCESS), StatusCode::kOk);
  EXPECT_EQ(CudaResultStatusCode(cuda::CUDA_ERROR_OUT_OF_MEMORY), StatusCode::kResourceExhausted);
  EXPECT_EQ(CudaResultStatusCode(cuda::CUDA_ERROR_NO_DEVICE), StatusCode::kUnavailable);
  EXPECT_EQ(CudaResultStatusCode(cuda::CUDA_ERROR_INVALID_PTX), StatusCode::kDataLoss);
  EXPECT_EQ(CudaResultStatusCode(cuda::CUDA_ERROR_NO_BINARY_FOR_GPU), StatusCode::kFailedPrecondition);
  EXPECT_EQ(CudaResultStatusCode(cuda::CUDA_ERROR_ILLEGAL_ADDRESS), StatusCode::kAborted);
  EXPECT_EQ(CudaResultStatusCode(cuda::CUDA_ERROR_INVALID_VALUE), StatusCode::kInvalidArgument);
  EXPECT_EQ(CudaResultStatusCode(999), StatusCode::kInternal);
}

TEST(CudaBackendTest, RegistrationIsIdempotent) {
  ASSERT_TRUE(RegisterCudaBackend().ok());
  ASSERT_TRUE(RegisterCudaBackend().ok());
  auto api = GetDeviceApi(kDLCUDA);
  ASSERT_TRUE(api.ok()) << api.status().ToString();
  EXPECT_EQ((*api)->device_type(), kDLCUDA);
  bool found = false;
  for (const std::string& key : RegisteredBlobLoaderKeys()) found |= key == "cuda";
  EXPECT_TRUE(found);
  EXPECT_TRUE(FunctionRegistry::Global().Get("runtime.module.loadbinary_cuda").defined());
}

// Fixture for behaviour without a driver; skips where libcuda.so.1 is present and usable.
class NoDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterCudaBackend().ok());
    auto driver = cuda::Driver();
    if (driver.ok()) GTEST_SKIP() << "a CUDA driver is installed here (covered by cuda_gpu_test)";
    driver_error_ = driver.status().message();
    api_ = *GetDeviceApi(kDLCUDA);
  }

  // Every device operation fails with the driver's own error.
  void ExpectNoDriver(const Status& status) {
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.ToString();
    EXPECT_TRUE(Contains(status.message(), "no CUDA driver")) << status.message();
  }

  std::string driver_error_;
  DeviceApi* api_ = nullptr;
};

TEST_F(NoDriverTest, DriverErrorNamesTheLibrary) {
  EXPECT_TRUE(Contains(driver_error_, "no CUDA driver: libcuda.so.1")) << driver_error_;
  EXPECT_EQ(cuda::DeviceCount(), 0);
  EXPECT_EQ(api_->DeviceCount(), 0);
}

TEST_F(NoDriverTest, TensorOnCudaIsUnavailable) {
  auto t = Tensor::Empty({16}, Float32(), kCuda0);
  ExpectNoDriver(t.status());
  EXPECT_TRUE(
      Contains(t.status().message(), "cannot allocate 64 bytes on cuda:0: no CUDA driver: libcuda.so.1 not found ("))
      << t.status().message();
}

TEST_F(NoDriverTest, CopiesSyncDescribeAndStreamsAreUnavailable) {
  auto host = Tensor::Empty({4}, Float32(), CpuDevice());
  ASSERT_TRUE(host.ok());
  DLTensor fake = *host->dl();
  fake.device = kCuda0;
  fake.data = nullptr;
  Status copy = CopyTensor(*host->dl(), fake);
  ExpectNoDriver(copy);
  EXPECT_TRUE(Contains(copy.message(), "copying float32[4] on cpu:0 to float32[4] on cuda:0: no CUDA driver"))
      << copy.message();
  ExpectNoDriver(CopyTensor(fake, *host->dl()));
  ExpectNoDriver(api_->Sync(kCuda0, nullptr));
  ExpectNoDriver(api_->Describe(0).status());
  ExpectNoDriver(api_->SetDevice(0));
  ExpectNoDriver(cuda::CreateStream(0).status());
  ExpectNoDriver(cuda::DeviceInfo(0).status());
  EXPECT_EQ(cuda::CurrentDevice(), 0);
  // Setting a stream is thread-local bookkeeping only; bad ids are still refused.
  EXPECT_TRUE(cuda::SetCurrentStream(0, nullptr).ok());
  EXPECT_FALSE(cuda::SetCurrentStream(cuda::kMaxCudaDevices, nullptr).ok());
  api_->Free(kCuda0, nullptr);  // harmless
}

TEST_F(NoDriverTest, TvmSetDeviceAndWorkspaceReportTheDriver) {
  PackedFunc set_device = FunctionRegistry::Global().Get(keys::kSetDevice);
  ASSERT_TRUE(set_device.defined());
  auto r = set_device(static_cast<int>(kDLCUDA), 0);
  ExpectNoDriver(r.status());
  // CPU still works through the same global.
  EXPECT_TRUE(set_device(static_cast<int>(kDLCPU), 0).ok());

  ClearLastError();
  void* ws = TVMBackendAllocWorkspace(kDLCUDA, 0, 4096, kDLFloat, 32);
  EXPECT_EQ(ws, nullptr);
  EXPECT_TRUE(Contains(GetLastErrorMessage(), "no CUDA driver")) << GetLastErrorMessage();
  EXPECT_NE(TVMBackendFreeWorkspace(kDLCUDA, 0, reinterpret_cast<void*>(uintptr_t{4096})), 0);
}

}  // namespace
}  // namespace sorun
