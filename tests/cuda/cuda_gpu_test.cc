// The CUDA backend on a real GPU: kernels from the nvcc-built PTX, cubin and fatbin images
// (vector add, scalar parameters with a 2-D launch, >= 48 KiB of dynamic shared memory, the global
// barrier), copies with byte offsets and between devices, streams, workspaces, the load-time
// architecture check and launch errors. Every test skips with "no CUDA driver/device: <reason>"
// where there is no usable GPU; see tests/cuda/README.md for running them on a GPU machine.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_devices.h"
#include "backends/cuda/cuda_module.h"
#include "runtime/c_runtime_api.h"
#include "runtime/data_type.h"
#include "runtime/device_api.h"
#include "runtime/function_registry.h"
#include "runtime/last_error.h"
#include "runtime/registry_keys.h"
#include "runtime/tensor.h"
#include "tests/cuda/cuda_test_kernels.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using testing::HaveTestKernelImages;
using testing::LoadThroughBlobLoader;
using testing::TestKernelImagePath;
using testing::TestKernelPayload;

constexpr DLDevice kCuda0{kDLCUDA, 0};

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string ReadImage(const std::string& file) { return testing::ReadFileOrDie(TestKernelImagePath(file)); }

// The reason no GPU test can run here, or "".
std::string NoGpuReason() {
  auto driver = cuda::Driver();
  if (!driver.ok()) return "no CUDA driver/device: " + driver.status().message();
  if (cuda::DeviceCount() == 0) return "no CUDA driver/device: the driver reports 0 devices";
  if (!HaveTestKernelImages()) return "no CUDA test kernels: this test was built without nvcc";
  return "";
}

// SORUN_REQUIRE_GPU=1 (set by the staged run.sh) turns "no GPU" from a skip into a failure, so a
// run meant for a GPU machine cannot pass without one.
bool GpuRequired() {
  const char* v = std::getenv("SORUN_REQUIRE_GPU");
  return v != nullptr && v[0] != '\0' && std::string(v) != "0";
}

class CudaGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterCudaBackend().ok());
    const std::string reason = NoGpuReason();
    if (!reason.empty()) {
      if (GpuRequired()) FAIL() << "SORUN_REQUIRE_GPU is set but " << reason;
      GTEST_SKIP() << reason;
    }
    ASSERT_TRUE(cuda::SetCurrentDevice(0).ok());
    ASSERT_TRUE(cuda::SetCurrentStream(0, nullptr).ok());
    auto info = cuda::DeviceInfo(0);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    info_ = *info;
    api_ = *GetDeviceApi(kDLCUDA);
  }

  static Tensor Upload(const std::vector<float>& values, DLDevice device = kCuda0) {
    auto host = Tensor::Empty({static_cast<int64_t>(values.size())}, Float32(), CpuDevice());
    EXPECT_TRUE(host.ok());
    if (!values.empty()) std::memcpy(host->data(), values.data(), values.size() * sizeof(float));
    auto dev = host->CopyToDevice(device);
    EXPECT_TRUE(dev.ok()) << dev.status().ToString();
    return dev.ok() ? *dev : Tensor();
  }

  static std::vector<float> Download(const Tensor& t) {
    auto host = t.CopyToDevice(CpuDevice());
    EXPECT_TRUE(host.ok()) << host.status().ToString();
    if (!host.ok()) return {};
    const float* p = host->data_as<float>();
    return std::vector<float>(p, p + host->num_elements());
  }

  void SyncDevice(int device_id = 0) {
    Status s = api_->Sync(DLDevice{kDLCUDA, device_id}, nullptr);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // The test kernels in `fmt` from `file`, through the blob loader (which loads them on the device).
  static Module Load(const std::string& fmt, const std::string& file) {
    auto m = LoadThroughBlobLoader(TestKernelPayload(fmt, ReadImage(file)));
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    return m.ok() ? *m : Module();
  }

  cuda::CudaDeviceInfo info_;
  DeviceApi* api_ = nullptr;
};

// ---- Kernels from every image format ----

struct ImageCase {
  const char* fmt;
  const char* file;
  const char* sm;  // the only architecture the image runs on, or "" (sm_80 and newer)
};

// Names the case in gtest's messages.
void PrintTo(const ImageCase& c, std::ostream* os) { *os << c.fmt << " image " << c.file; }

const ImageCase kImages[] = {
    {"ptx", "test_kernels.ptx", ""},
    {"cubin", "test_kernels_sm90.cubin", "sm_90"},
    {"fatbin", "test_kernels.fatbin", ""},
    {"cubin", "test_kernels.fatbin", ""},  // TVM's label for a fatbin
};

class CudaKernelTest : public CudaGpuTest, public ::testing::WithParamInterface<ImageCase> {
 protected:
  void SetUp() override {
    CudaGpuTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const ImageCase& c = GetParam();
    if (c.sm[0] != '\0' && info_.sm() != c.sm)
      GTEST_SKIP() << c.file << " runs on " << c.sm << " only, not " << info_.sm();
    module_ = Load(c.fmt, c.file);
    ASSERT_TRUE(module_.defined());
  }
  Module module_;
};

TEST_P(CudaKernelTest, VectorAdd) {
  const int n = 1000;  // not a multiple of the block size
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = static_cast<float>(2 * i);
  }
  Tensor da = Upload(a), db = Upload(b), dc = Upload(std::vector<float>(n, -1.0f));
  PackedFunc vector_add = module_.GetFunction("vector_add");
  ASSERT_TRUE(vector_add.defined());
  const int block = 256, grid = (n + block - 1) / block;
  // Tensors (NDArray handles) and raw device pointers (what TVM host code passes) both work.
  auto r = vector_add(da, db, dc, n, grid, block);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  SyncDevice();
  std::vector<float> c = Download(dc);
  for (int i = 0; i < n; ++i) ASSERT_EQ(c[i], 3.0f * i) << i;
  r = vector_add(da.data(), da.data(), dc.data(), n, grid, block);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  c = Download(dc);
  for (int i = 0; i < n; ++i) ASSERT_EQ(c[i], 2.0f * i) << i;
}

TEST_P(CudaKernelTest, ScalarParametersAndTwoDimensionalLaunch) {
  const int width = 37, height = 19;
  std::vector<float> in(width * height);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  Tensor din = Upload(in), dout = Upload(std::vector<float>(in.size(), 0.0f));
  // beta + gamma == 5 only if both 64-bit scalars arrive whole.
  const int64_t beta = (int64_t{1} << 32) + 5;
  const double gamma = -4294967296.0;
  PackedFunc affine = module_.GetFunction("affine_2d");
  const int bx = 16, by = 8;
  auto r = affine(dout, din, width, height, 0.5, beta, gamma, (width + bx - 1) / bx, (height + by - 1) / by, bx, by);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  SyncDevice();
  std::vector<float> out = Download(dout);
  for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(out[i], in[i] * 0.5f + 5.0f) << i;
}

TEST_P(CudaKernelTest, DynamicSharedMemoryAbove48KiB) {
  PackedFunc reverse = module_.GetFunction("reverse_dyn_smem");
  // 64 KiB (raises the limit), 16 KiB (default limit), 80 KiB (raises it again).
  for (int n : {16384, 4096, 20000}) {
    const int64_t smem = int64_t{n} * 4;
    if (smem > info_.max_shared_memory_per_block) continue;
    std::vector<float> in(n);
    for (int i = 0; i < n; ++i) in[i] = static_cast<float>(i);
    Tensor din = Upload(in), dout = Upload(std::vector<float>(n, 0.0f));
    auto r = reverse(dout, din, n, 1, 256, smem);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    SyncDevice();
    std::vector<float> out = Download(dout);
    for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], static_cast<float>(n - 1 - i)) << "n=" << n << " i=" << i;
  }
  // More than the device allows is refused before the launch.
  auto r = reverse(Upload({0.0f}), Upload({0.0f}), 1, 1, 1, int64_t{info_.max_shared_memory_per_block} + 4);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status().message(), "allows at most")) << r.status().message();
}

TEST_P(CudaKernelTest, PrepareGlobalBarrierZeroesTheCounter) {
  auto out = Tensor::Empty({1}, MakeDType(kDLUInt, 32), kCuda0);
  ASSERT_TRUE(out.ok());
  PackedFunc probe = module_.GetFunction("barrier_probe");
  PackedFunc prepare = module_.GetFunction("__tvm_prepare_global_barrier");
  auto read = [&]() -> uint32_t {
    auto host = out->CopyToDevice(CpuDevice());
    EXPECT_TRUE(host.ok());
    return host.ok() ? host->data_as<uint32_t>()[0] : 0xdeadbeef;
  };
  ASSERT_TRUE(probe(*out).ok());  // no launch tags: a 1 x 1 launch
  ASSERT_TRUE(probe(*out).ok());
  EXPECT_EQ(read(), 1u);
  ASSERT_TRUE(prepare().ok());
  ASSERT_TRUE(probe(*out).ok());
  EXPECT_EQ(read(), 0u);
}

INSTANTIATE_TEST_SUITE_P(AllFormats, CudaKernelTest, ::testing::ValuesIn(kImages),
                         [](const ::testing::TestParamInfo<ImageCase>& info) {
                           return std::string(info.param.fmt) + "_" + std::to_string(info.index);
                         });

// ---- Device API ----

TEST_F(CudaGpuTest, DescribeAndSetDevice) {
  EXPECT_EQ(api_->DeviceCount(), cuda::DeviceCount());
  auto text = api_->Describe(0);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_TRUE(Contains(*text, info_.name)) << *text;
  EXPECT_TRUE(Contains(*text, "(" + info_.sm() + ", ")) << *text;
  const int count = api_->DeviceCount();
  EXPECT_EQ(api_->Describe(count).status().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(api_->SetDevice(count).ok());
  EXPECT_FALSE(api_->SetDevice(-1).ok());
  PackedFunc set_device = FunctionRegistry::Global().Get(keys::kSetDevice);
  EXPECT_TRUE(set_device(static_cast<int>(kDLCUDA), 0).ok());
  EXPECT_FALSE(set_device(static_cast<int>(kDLCUDA), count).ok());
  EXPECT_EQ(cuda::CurrentDevice(), 0);
}

TEST_F(CudaGpuTest, AllocationsAndOutOfMemory) {
  auto empty = Tensor::Empty({0}, Float32(), kCuda0);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_NE(empty->data(), nullptr);
  auto t = Tensor::Empty({1 << 20}, Float32(), kCuda0);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % 256, 0u);
  auto huge = Tensor::Empty({int64_t{1} << 50}, UInt8(), kCuda0);  // 1 PiB
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(Contains(huge.status().message(), "CUDA_ERROR_OUT_OF_MEMORY")) << huge.status().message();
}

TEST_F(CudaGpuTest, CopiesHonourByteOffsets) {
  std::vector<float> src(64);
  for (int i = 0; i < 64; ++i) src[i] = static_cast<float>(100 + i);
  auto host = Tensor::Empty({64}, Float32(), CpuDevice());
  ASSERT_TRUE(host.ok());
  std::memcpy(host->data(), src.data(), sizeof(float) * 64);
  Tensor dev = Upload(std::vector<float>(64, 0.0f));
  Tensor dev2 = Upload(std::vector<float>(64, 0.0f));

  // host[8, 24) -> dev[32, 48) -> dev2[4, 20) -> host_out[40, 56)
  auto host_view = host->View({16}, Float32(), 8 * 4);
  auto dev_view = dev.View({16}, Float32(), 32 * 4);
  auto dev2_view = dev2.View({16}, Float32(), 4 * 4);
  ASSERT_TRUE(host_view.ok() && dev_view.ok() && dev2_view.ok());
  ASSERT_TRUE(CopyTensor(*host_view->dl(), *dev_view->dl()).ok());
  ASSERT_TRUE(CopyTensor(*dev_view->dl(), *dev2_view->dl()).ok());
  auto host_out = Tensor::Empty({64}, Float32(), CpuDevice());
  ASSERT_TRUE(host_out.ok());
  std::memset(host_out->data(), 0, 64 * 4);
  auto out_view = host_out->View({16}, Float32(), 40 * 4);
  ASSERT_TRUE(out_view.ok());
  ASSERT_TRUE(CopyTensor(*dev2_view->dl(), *out_view->dl()).ok());

  std::vector<float> d1 = Download(dev), d2 = Download(dev2);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(d1[i], (i >= 32 && i < 48) ? src[i - 24] : 0.0f) << i;
    EXPECT_EQ(d2[i], (i >= 4 && i < 20) ? src[i + 4] : 0.0f) << i;
    EXPECT_EQ(host_out->data_as<float>()[i], (i >= 40 && i < 56) ? src[i - 32] : 0.0f) << i;
  }
  // Size mismatches are refused before any copy.
  auto small = dev.View({8}, Float32(), 0);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(CopyTensor(*host->dl(), *small->dl()).code(), StatusCode::kInvalidArgument);
}

TEST_F(CudaGpuTest, StreamsOrderLaunchesAndAsyncCopies) {
  Module module = Load("fatbin", "test_kernels.fatbin");
  ASSERT_TRUE(module.defined());
  auto stream = cuda::CreateStream(0);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  ASSERT_TRUE(cuda::SetCurrentStream(0, *stream).ok());
  EXPECT_EQ(cuda::CurrentStream(0), *stream);

  const int n = 1 << 16;
  std::vector<float> a(n, 1.5f);
  Tensor da = Upload(a), dc = Upload(std::vector<float>(n, 0.0f));
  ASSERT_TRUE(module.GetFunction("vector_add")(da, da, dc, n, n / 256, 256).ok());
  auto host = Tensor::Empty({n}, Float32(), CpuDevice());
  ASSERT_TRUE(host.ok());
  ASSERT_TRUE(CopyTensor(*dc.dl(), *host->dl(), *stream).ok());  // queued behind the kernel
  ASSERT_TRUE(api_->Sync(kCuda0, *stream).ok());
  for (int i = 0; i < n; i += 997) ASSERT_EQ(host->data_as<float>()[i], 3.0f) << i;

  // A thread's streams are its own.
  std::thread([&] { EXPECT_EQ(cuda::CurrentStream(0), nullptr); }).join();

  ASSERT_TRUE(cuda::DestroyStream(0, *stream).ok());
  EXPECT_EQ(cuda::CurrentStream(0), nullptr);  // reset: it was current
  EXPECT_EQ(cuda::DestroyStream(0, nullptr).code(), StatusCode::kInvalidArgument);
}

TEST_F(CudaGpuTest, WorkspacesAreReusedAndUsable) {
  void* first = TVMBackendAllocWorkspace(kDLCUDA, 0, 10000, kDLFloat, 32);
  ASSERT_NE(first, nullptr) << GetLastErrorMessage();
  void* second = TVMBackendAllocWorkspace(kDLCUDA, 0, 64, kDLFloat, 32);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(first, second);
  EXPECT_EQ(TVMBackendFreeWorkspace(kDLCUDA, 0, second), 0);
  EXPECT_EQ(TVMBackendFreeWorkspace(kDLCUDA, 0, first), 0);
  void* again = TVMBackendAllocWorkspace(kDLCUDA, 0, 9000, kDLFloat, 32);
  EXPECT_EQ(again, first);  // best fit from the cache
  // The block is real device memory.
  auto view = Tensor::Wrap(again, 9000, {16}, Float32(), kCuda0, nullptr);
  ASSERT_TRUE(view.ok());
  std::vector<float> values(16, 7.0f);
  Tensor src = Upload(values);
  ASSERT_TRUE(CopyTensor(*src.dl(), *view->dl()).ok());
  EXPECT_EQ(Download(*view), values);
  EXPECT_EQ(TVMBackendFreeWorkspace(kDLCUDA, 0, again), 0);
  EXPECT_NE(TVMBackendFreeWorkspace(kDLCUDA, 0, again), 0);  // double free is an error, not a crash
}

// ---- Load-time and launch errors ----

TEST_F(CudaGpuTest, WrongArchitectureFailsAtLoadNamingTheGpu) {
  // CUDA 13's nvcc cannot target sm_50; an sm_75 cubin has no code for sm_8x / sm_9x devices.
  const char* file = info_.cc_major == 7 ? "test_kernels_sm90.cubin" : "test_kernels_sm75.cubin";
  auto m = LoadThroughBlobLoader(TestKernelPayload("cubin", ReadImage(file)));
  ASSERT_FALSE(m.ok()) << file << " loaded on " << info_.sm();
  EXPECT_EQ(m.status().code(), StatusCode::kFailedPrecondition) << m.status().ToString();
  EXPECT_TRUE(Contains(m.status().message(), "CUDA_ERROR_NO_BINARY_FOR_GPU")) << m.status().message();
  EXPECT_TRUE(Contains(m.status().message(), "on cuda:0 (" + info_.name + ", " + info_.sm() + ")"))
      << m.status().message();
  EXPECT_TRUE(Contains(m.status().message(), "no machine code for " + info_.sm())) << m.status().message();
}

TEST_F(CudaGpuTest, InvalidPtxFailsAtLoadWithTheJitLog) {
  auto m = LoadThroughBlobLoader(TestKernelPayload("ptx", ".version 8.0\n.target sm_80\nthis is not ptx\n"));
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(Contains(m.status().message(), "CUDA_ERROR_")) << m.status().message();
  EXPECT_TRUE(Contains(m.status().message(), info_.sm())) << m.status().message();
}

TEST_F(CudaGpuTest, LaunchErrorsNameTheKernel) {
  Module module = Load("ptx", "test_kernels.ptx");
  ASSERT_TRUE(module.defined());
  Tensor d = Upload(std::vector<float>(4, 0.0f));
  auto r = module.GetFunction("vector_add")(d, d, d, 4, 1, 4096);  // more threads than a block holds
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "CUDA launch of kernel vector_add failed: CUDA_ERROR_INVALID_VALUE"))
      << r.status().message();
  EXPECT_TRUE(Contains(r.status().message(), "block (4096, 1, 1)")) << r.status().message();

  // A kernel listed in the payload but absent from the image.
  DeviceModulePayload payload = TestKernelPayload("ptx", ReadImage("test_kernels.ptx"));
  payload.functions.push_back({"zz_missing_kernel", testing::MakeFunctionInfo({testing::HandleType()}, {})});
  auto m = LoadThroughBlobLoader(payload);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  r = m->GetFunction("zz_missing_kernel")(d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(r.status().message(), "kernel zz_missing_kernel is not in the code image"))
      << r.status().message();
  SyncDevice();  // the context is still healthy
}

// ---- Concurrency and several devices ----

TEST_F(CudaGpuTest, FirstLaunchesFromManyThreadsLoadOnce) {
  // CreateCudaModule defers loading: the threads race to load the image on first use.
  auto module = CreateCudaModule(TestKernelPayload("ptx", ReadImage("test_kernels.ptx")));
  ASSERT_TRUE(module.ok());
  PackedFunc vector_add = module->GetFunction("vector_add");
  const int n = 4096;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      Tensor a = Upload(std::vector<float>(n, static_cast<float>(t)));
      Tensor c = Upload(std::vector<float>(n, 0.0f));
      auto r = vector_add(a, a, c, n, n / 128, 128);  // each thread starts on device 0
      if (!r.ok() || Download(c) != std::vector<float>(n, 2.0f * t)) failures.fetch_add(1);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(CudaGpuTest, TwoDevicesRunKernelsAndCopyPeerToPeer) {
  if (cuda::DeviceCount() < 2) GTEST_SKIP() << "needs two CUDA devices; " << cuda::DeviceCount() << " present";
  const DLDevice cuda1{kDLCUDA, 1};
  auto info1 = cuda::DeviceInfo(1);
  ASSERT_TRUE(info1.ok());
  ASSERT_TRUE(cuda::SetCurrentDevice(1).ok());
  // The fatbin covers sm_80 and sm_90 and carries PTX, so it loads on either device.
  Module module = Load("fatbin", "test_kernels.fatbin");
  ASSERT_TRUE(module.defined());
  const int n = 512;
  Tensor a = Upload(std::vector<float>(n, 4.0f), cuda1);
  Tensor c = Upload(std::vector<float>(n, 0.0f), cuda1);
  auto r = module.GetFunction("vector_add")(a, a, c, n, n / 128, 128);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  SyncDevice(1);
  // cuda:1 -> cuda:0 (peer copy), then to the host.
  auto on0 = c.CopyToDevice(kCuda0);
  ASSERT_TRUE(on0.ok()) << on0.status().ToString();
  EXPECT_EQ(Download(*on0), std::vector<float>(n, 8.0f));
  ASSERT_TRUE(cuda::SetCurrentDevice(0).ok());
}

}  // namespace
}  // namespace sorun
