// DeviceWeightCache (executor/device_weight_cache.h), the one-copy-per-device rule of both executor
// kinds, on a counting host-memory device (tests/util/counting_device_api.h): the CPU gets the host
// tensors; a device gets each weight uploaded once and shared read-only; GetAll is all or nothing (a
// failed upload frees its copies and caches nothing, the next call succeeds); many threads asking at
// once upload once and get the same copies (also under TSan: tag concurrency); the copies go with the
// cache and its last user.
#include "executor/device_weight_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "runtime/data_type.h"
#include "tests/util/counting_device_api.h"
#include "tests/util/status_matchers.h"

namespace sorun {
namespace {

using testing::CountingDeviceApi;

constexpr DLDevice kDevice{CountingDeviceApi::kType, 0};

Tensor Filled(int64_t n, float start) {
  auto t = Tensor::Empty({n}, Float32(), CpuDevice());
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  for (int64_t i = 0; i < n; ++i) t->data_as<float>()[i] = start + static_cast<float>(i);
  return *t;
}

// Three weights of 4, 8 and 16 floats and, between them, a slot with no tensor (a Relax scalar constant).
struct Weights {
  std::vector<Tensor> host = {Filled(4, 0), Tensor(), Filled(8, 100), Filled(16, 200)};
  std::vector<std::string> names = {"constant 0", "", "constant 2", "constant 3"};
  static constexpr uint64_t kBytes = (4 + 8 + 16) * 4;
};

class DeviceWeightCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = CountingDeviceApi::Get();
    api_->FailAllocationsAfter(-1);
    live_before_ = api_->live_bytes();
  }
  void TearDown() override { api_->FailAllocationsAfter(-1); }

  CountingDeviceApi* api_ = nullptr;
  uint64_t live_before_ = 0;
};

TEST_F(DeviceWeightCacheTest, TheCpuGetsTheHostTensorsThemselves) {
  Weights w;
  DeviceWeightCache cache(w.host, w.names);
  EXPECT_EQ(cache.host_bytes(), Weights::kBytes);
  auto t = cache.Get(2, CpuDevice());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->data(), w.host[2].data());
  auto all = cache.GetAll(CpuDevice());
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 4u);
  EXPECT_FALSE((*all)[1].defined());
  EXPECT_EQ((*all)[3].data(), w.host[3].data());
  EXPECT_EQ(cache.device_bytes(CpuDevice()), 0u);
  EXPECT_EQ(api_->live_bytes(), live_before_);
}

TEST_F(DeviceWeightCacheTest, EachWeightIsUploadedOncePerDeviceAndShared) {
  Weights w;
  DeviceWeightCache cache(w.host, w.names);
  const uint64_t allocations = api_->allocations();
  auto first = cache.Get(2, kDevice);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto again = cache.Get(2, kDevice);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(first->data(), again->data()) << "the same copy, not a second upload";
  EXPECT_EQ(api_->allocations() - allocations, 1u);
  EXPECT_EQ(cache.device_bytes(kDevice), 8u * 4);
  EXPECT_TRUE(first->read_only()) << "shared by every executor: nobody may write it through the API";
  EXPECT_EQ(first->device(), kDevice);
  EXPECT_EQ(std::memcmp(first->data(), w.host[2].data(), 8 * 4), 0);

  // GetAll uploads only what is missing and hands back the copy already made.
  auto all = cache.GetAll(kDevice);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ((*all)[2].data(), first->data());
  EXPECT_FALSE((*all)[1].defined());
  EXPECT_EQ(api_->allocations() - allocations, 3u);
  EXPECT_EQ(cache.device_bytes(kDevice), Weights::kBytes);
  EXPECT_EQ(api_->live_bytes() - live_before_, Weights::kBytes);
  auto all_again = cache.GetAll(kDevice);
  ASSERT_TRUE(all_again.ok());
  for (size_t i : {0u, 2u, 3u}) EXPECT_EQ((*all_again)[i].data(), (*all)[i].data()) << i;
  EXPECT_EQ(api_->allocations() - allocations, 3u);
}

TEST_F(DeviceWeightCacheTest, AFailedUploadKeepsNothingAndTheNextCallUploadsAll) {
  Weights w;
  DeviceWeightCache cache(w.host, w.names);
  api_->FailAllocationsAfter(1);  // constant 0 uploads, constant 2 fails
  auto failed = cache.GetAll(kDevice);
  EXPECT_ERROR(failed.status(), StatusCode::kResourceExhausted,
               "uploading constant 2 (float32[8] on cpu:0) to ext_dev:0", "allocation failure requested by the test");
  EXPECT_EQ(api_->live_bytes(), live_before_) << "the copy of constant 0 went with the failed upload";
  EXPECT_EQ(cache.device_bytes(kDevice), 0u);

  // Failing again gives the same error; then, with memory to spare, everything is uploaded.
  api_->FailAllocationsAfter(0);
  EXPECT_ERROR(cache.GetAll(kDevice).status(), StatusCode::kResourceExhausted, "uploading constant 0");
  EXPECT_ERROR(cache.Get(3, kDevice).status(), StatusCode::kResourceExhausted, "uploading constant 3");
  api_->FailAllocationsAfter(-1);
  const uint64_t allocations = api_->allocations();
  auto all = cache.GetAll(kDevice);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(api_->allocations() - allocations, 3u);
  EXPECT_EQ(api_->live_bytes() - live_before_, Weights::kBytes);
  EXPECT_EQ(cache.device_bytes(kDevice), Weights::kBytes);
}

TEST_F(DeviceWeightCacheTest, BadIndicesAreInvalidArgument) {
  Weights w;
  DeviceWeightCache cache(w.host, w.names);
  EXPECT_ERROR(cache.Get(1, kDevice).status(), StatusCode::kInvalidArgument, "no weight 1");
  EXPECT_ERROR(cache.Get(4, CpuDevice()).status(), StatusCode::kInvalidArgument, "no weight 4");
}

// Many executors made at once for one device: one upload, every caller gets the same copies.
TEST_F(DeviceWeightCacheTest, ManyThreadsAtOnceUploadOnce) {
  Weights w;
  DeviceWeightCache cache(w.host, w.names);
  const uint64_t allocations = api_->allocations();
  constexpr int kThreads = 8;
  std::vector<std::vector<Tensor>> got(kThreads);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      if (i % 2 == 0) {
        auto all = cache.GetAll(kDevice);
        if (all.ok()) got[static_cast<size_t>(i)] = *all;
      } else {  // a graph executor asks one weight at a time, and reads the report meanwhile
        auto one = cache.Get(3, kDevice);
        if (one.ok()) got[static_cast<size_t>(i)] = {Tensor(), Tensor(), Tensor(), *one};
        (void)cache.device_bytes(kDevice);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(api_->allocations() - allocations, 3u) << "one upload per weight";
  EXPECT_EQ(api_->live_bytes() - live_before_, Weights::kBytes);
  for (int i = 0; i < kThreads; ++i) {
    const auto& g = got[static_cast<size_t>(i)];
    ASSERT_EQ(g.size(), 4u) << "thread " << i;
    EXPECT_EQ(g[3].data(), got[0][3].data()) << "thread " << i;
    if (i % 2 == 0) {
      EXPECT_EQ(g[0].data(), got[0][0].data()) << "thread " << i;
    }
  }
}

// The copies belong to the cache (the model) and to whoever still holds one (an executor).
TEST_F(DeviceWeightCacheTest, CopiesAreFreedWithTheCacheAndTheirLastUser) {
  Tensor kept;
  {
    Weights w;
    DeviceWeightCache cache(w.host, w.names);
    auto all = cache.GetAll(kDevice);
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    kept = (*all)[3];
  }
  EXPECT_EQ(api_->live_bytes() - live_before_, 16u * 4) << "only the copy still held";
  kept = Tensor();
  EXPECT_EQ(api_->live_bytes(), live_before_);
}

}  // namespace
}  // namespace sorun
