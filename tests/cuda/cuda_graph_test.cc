// Stream capture of the CUDA backend (backends/cuda/cuda_graph.h, through DeviceApi::BeginCapture /
// EndCapture) against the driver's rules: what cannot be recorded (a synchronous copy of the capturing
// thread, a device allocation, legacy-stream work of another thread while a stream that synchronizes
// with stream 0 captures) spoils the capture, which EndCapture reports; a stream independent of stream 0
// is not disturbed by other threads; workspace handed to recorded kernels is reused in stream order
// within the recording and belongs to the graph, which frees it; the legacy stream and nested captures
// are refused. The _fake_driver variant runs on the stand-in (fake_cuda_graph.c) and counts the live
// allocations; on a GPU the same rules hold with the real driver; without a device the tests skip.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_devices.h"
#include "runtime/device_api.h"
#include "runtime/tensor.h"

namespace sorun {
namespace {

constexpr DLDevice kCuda0{kDLCUDA, 0};

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

using LiveFn = unsigned long long (*)(int);
LiveFn FakeLiveAllocations() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return driver ? reinterpret_cast<LiveFn>(dlsym(driver, "sorun_fake_cuda_live_allocations")) : nullptr;
}

class CudaGraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterCudaBackend().ok() || GetDeviceApi(kDLCUDA).ok());
    Status present = CheckDeviceExists(kCuda0);
    if (!present.ok()) GTEST_SKIP() << "no CUDA device: " << present.ToString();
    auto api = GetDeviceApi(kDLCUDA);
    ASSERT_TRUE(api.ok());
    api_ = *api;
    auto driver = cuda::Driver();
    ASSERT_TRUE(driver.ok());
    if (!(*driver)->has_graphs()) GTEST_SKIP() << "the driver has no CUDA graphs";
  }

  TVMStreamHandle NewStream(StreamOrder order) {
    auto s = api_->CreateStream(kCuda0, order);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    streams_.push_back(*s);
    return *s;
  }

  void TearDown() override {
    if (api_ == nullptr) return;  // skipped
    for (TVMStreamHandle s : streams_) (void)api_->FreeStream(kCuda0, s);
    (void)api_->SetCurrentStream(kCuda0, nullptr);
  }

  DeviceApi* api_ = nullptr;
  std::vector<TVMStreamHandle> streams_;
};

TEST_F(CudaGraphTest, SynchronousCopyOfTheCapturingThreadSpoilsTheCapture) {
  TVMStreamHandle stream = NewStream(StreamOrder::kIndependent);
  auto host = Tensor::Empty({16}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
  auto device = Tensor::Empty({16}, DLDataType{kDLFloat, 32, 1}, kCuda0);
  ASSERT_TRUE(host.ok() && device.ok());
  ASSERT_TRUE(api_->BeginCapture(kCuda0, stream).ok());
  // No stream given and none current: the driver's synchronous copy on stream 0.
  Status copy = api_->Copy(*host->dl(), *device->dl(), nullptr);
  EXPECT_FALSE(copy.ok());
  EXPECT_TRUE(Contains(copy.message(), "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED")) << copy.message();
  auto graph = api_->EndCapture(kCuda0, stream);
  ASSERT_FALSE(graph.ok());
  EXPECT_TRUE(Contains(graph.status().message(), "the capture was spoiled")) << graph.status().message();
  EXPECT_TRUE(Contains(graph.status().message(), "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED")) << graph.status().message();
  // The stream works as before.
  EXPECT_TRUE(api_->Copy(*host->dl(), *device->dl(), stream).ok());
  EXPECT_TRUE(api_->Sync(kCuda0, stream).ok());
}

// Why an executor that records uses a stream independent of stream 0: another thread's stream-0 copy
// would otherwise fail and spoil the recording.
TEST_F(CudaGraphTest, OtherThreadsStreamZeroWorkJoinsOnlyABlockingStreamsCapture) {
  for (StreamOrder order : {StreamOrder::kWithDefaultQueue, StreamOrder::kIndependent}) {
    const bool blocking = order == StreamOrder::kWithDefaultQueue;
    TVMStreamHandle stream = NewStream(order);
    auto host = Tensor::Empty({16}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
    auto device = Tensor::Empty({16}, DLDataType{kDLFloat, 32, 1}, kCuda0);
    ASSERT_TRUE(host.ok() && device.ok());
    ASSERT_TRUE(api_->BeginCapture(kCuda0, stream).ok());
    Status other;
    std::thread([&] {
      other = cuda::ActivateDevice(0).status();
      if (other.ok()) other = api_->Copy(*host->dl(), *device->dl(), nullptr);  // stream 0, synchronous
    }).join();
    auto graph = api_->EndCapture(kCuda0, stream);
    if (blocking) {
      EXPECT_FALSE(other.ok());
      EXPECT_TRUE(Contains(other.message(), "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT")) << other.message();
      EXPECT_FALSE(graph.ok());
    } else {
      EXPECT_TRUE(other.ok()) << other.ToString();
      ASSERT_TRUE(graph.ok()) << graph.status().ToString();
      EXPECT_EQ((*graph)->num_operations(), 0u);
    }
  }
}

TEST_F(CudaGraphTest, WorkspaceOfRecordedKernelsIsReusedInOrderAndBelongsToTheGraph) {
  TVMStreamHandle stream = NewStream(StreamOrder::kIndependent);
  ASSERT_TRUE(api_->SetCurrentStream(kCuda0, stream).ok());
  // An uncaptured run leaves one cached block on this stream.
  auto warm = api_->AllocWorkspace(kCuda0, 1000);
  ASSERT_TRUE(warm.ok()) << warm.status().ToString();
  ASSERT_TRUE(api_->FreeWorkspace(kCuda0, *warm).ok());
  LiveFn live = FakeLiveAllocations();
  const unsigned long long live_before = live ? live(0) : 0;

  ASSERT_TRUE(api_->BeginCapture(kCuda0, stream).ok());
  auto first = api_->AllocWorkspace(kCuda0, 128);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, *warm);  // the cached block
  ASSERT_TRUE(api_->FreeWorkspace(kCuda0, *first).ok());
  auto second = api_->AllocWorkspace(kCuda0, 40);  // a later kernel: the same block, in stream order
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(*second, *warm);
  // Two blocks at once: the cache has no second one, and an allocation cannot be recorded.
  auto third = api_->AllocWorkspace(kCuda0, 64);
  EXPECT_FALSE(third.ok());
  EXPECT_TRUE(Contains(third.status().message(), "during CUDA-graph capture and none was cached"))
      << third.status().message();
  ASSERT_TRUE(api_->FreeWorkspace(kCuda0, *second).ok());
  auto graph = api_->EndCapture(kCuda0, stream);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();

  // The block is the graph's now: a new uncaptured allocation gets another one.
  auto after = api_->AllocWorkspace(kCuda0, 128);
  ASSERT_TRUE(after.ok());
  EXPECT_NE(*after, *warm);
  ASSERT_TRUE(api_->FreeWorkspace(kCuda0, *after).ok());
  if (live != nullptr) {
    EXPECT_EQ(live(0), live_before + 1);  // `after`'s block
    graph->reset();                       // frees the graph's block
    EXPECT_EQ(live(0), live_before);
  }
}

TEST_F(CudaGraphTest, LegacyStreamAndNestedCapturesAreRefused) {
  Status legacy = api_->BeginCapture(kCuda0, nullptr);
  EXPECT_EQ(legacy.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(legacy.message(), "the legacy default stream cannot be captured")) << legacy.message();
  TVMStreamHandle a = NewStream(StreamOrder::kIndependent);
  TVMStreamHandle b = NewStream(StreamOrder::kIndependent);
  ASSERT_TRUE(api_->BeginCapture(kCuda0, a).ok());
  Status nested = api_->BeginCapture(kCuda0, b);
  EXPECT_TRUE(Contains(nested.message(), "this thread is already capturing")) << nested.message();
  auto wrong = api_->EndCapture(kCuda0, b);
  EXPECT_FALSE(wrong.ok());
  auto graph = api_->EndCapture(kCuda0, a);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
}

}  // namespace
}  // namespace sorun
