#include "runtime/tensor.h"

#include <gtest/gtest.h>

#include <cstring>

#include "runtime/data_type.h"
#include "runtime/device_api.h"

namespace sorun {
namespace {

TEST(TensorTest, EmptyIsAlignedCompactAndSized) {
  auto t = Tensor::Empty({2, 3, 5}, Float32(), CpuDevice());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % 64, 0u);
  EXPECT_EQ(t->nbytes(), 120u);
  EXPECT_EQ(t->num_elements(), 30);
  EXPECT_EQ(t->ndim(), 3);
  EXPECT_EQ(t->dl()->strides, nullptr);
  EXPECT_EQ(t->Describe(), "float32[2, 3, 5] on cpu:0");
}

TEST(TensorTest, EmptyRejectsBadShapesAndAbsentDevices) {
  EXPECT_FALSE(Tensor::Empty({-1}, Float32(), CpuDevice()).ok());
  auto s = Tensor::Empty({1}, Float32(), DLDevice{static_cast<DLDeviceType>(9), 0});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(s.status().message().find("vpi"), std::string::npos) << s.status().message();
}

TEST(TensorTest, ViewsShareStorageAndAreBoundsChecked) {
  auto base = Tensor::Empty({16}, Float32(), CpuDevice());
  ASSERT_TRUE(base.ok());
  for (int i = 0; i < 16; ++i) base->data_as<float>()[i] = static_cast<float>(i);
  auto view = base->View({2, 4}, Float32(), 32);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->data_as<float>()[0], 8.0f);
  view->data_as<float>()[1] = 100.0f;
  EXPECT_EQ(base->data_as<float>()[9], 100.0f);
  // A view outliving its parent handle keeps the storage alive.
  Tensor v = *view;
  base = StatusOr<Tensor>(Internal("drop"));
  EXPECT_EQ(v.data_as<float>()[1], 100.0f);
  auto too_big = v.View({100}, Float32(), 0);
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.status().message().find("needs 400 bytes"), std::string::npos) << too_big.status().message();
  auto reinterpret = v.View({8}, UInt8(), 4);
  ASSERT_TRUE(reinterpret.ok());
}

TEST(TensorTest, DLPackRoundTripIsZeroCopyAndReleasesOnce) {
  static int deleted = 0;
  deleted = 0;
  static float storage[6] = {1, 2, 3, 4, 5, 6};
  static int64_t shape[2] = {2, 3};
  auto* managed = new DLManagedTensor();
  managed->dl_tensor.data = storage;
  managed->dl_tensor.device = CpuDevice();
  managed->dl_tensor.ndim = 2;
  managed->dl_tensor.dtype = Float32();
  managed->dl_tensor.shape = shape;
  managed->dl_tensor.strides = nullptr;
  managed->dl_tensor.byte_offset = 0;
  managed->manager_ctx = nullptr;
  managed->deleter = [](DLManagedTensor* self) {
    ++deleted;
    delete self;
  };
  {
    auto t = Tensor::FromDLPack(managed);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->data(), storage);
    DLManagedTensor* exported = t->ToDLPack();
    EXPECT_EQ(exported->dl_tensor.data, storage);
    EXPECT_EQ(exported->dl_tensor.shape[1], 3);
    // Re-import the exported tensor, drop everything.
    auto again = Tensor::FromDLPack(exported);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->data_as<float>()[5], 6.0f);
    EXPECT_EQ(deleted, 0);
  }
  EXPECT_EQ(deleted, 1);
}

TEST(TensorTest, FromDLPackRejectsBadTensorButStillReleasesIt) {
  static int deleted = 0;
  deleted = 0;
  auto* managed = new DLManagedTensor();
  std::memset(managed, 0, sizeof(*managed));
  managed->dl_tensor.ndim = 2;  // no shape
  managed->deleter = [](DLManagedTensor* self) {
    ++deleted;
    delete self;
  };
  EXPECT_FALSE(Tensor::FromDLPack(managed).ok());
  EXPECT_EQ(deleted, 1);
}

TEST(TensorTest, CopiesCheckSizes) {
  auto a = Tensor::Empty({4}, Float32(), CpuDevice());
  auto b = Tensor::Empty({2, 2}, Float32(), CpuDevice());
  auto c = Tensor::Empty({5}, Float32(), CpuDevice());
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  for (int i = 0; i < 4; ++i) a->data_as<float>()[i] = static_cast<float>(i + 1);
  ASSERT_TRUE(b->CopyFrom(*a->dl()).ok());
  EXPECT_EQ(b->data_as<float>()[3], 4.0f);
  Status s = c->CopyFrom(*a->dl());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("float32[4] on cpu:0 (16 bytes) into float32[5] on cpu:0 (20 bytes)"), std::string::npos)
      << s.message();
  auto d = a->CopyToDevice(CpuDevice());
  ASSERT_TRUE(d.ok());
  EXPECT_NE(d->data(), a->data());
  EXPECT_EQ(d->data_as<float>()[2], 3.0f);
}

TEST(DeviceApiTest, CpuIsAlwaysRegisteredAndOthersAreExplained) {
  ASSERT_TRUE(GetDeviceApi(kDLCPU).ok());
  EXPECT_TRUE(CheckDeviceExists(CpuDevice()).ok());
  Status s = CheckDeviceExists(DLDevice{kDLCPU, 1});
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  auto missing = GetDeviceApi(kDLVulkan);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("vulkan"), std::string::npos);
}

}  // namespace
}  // namespace sorun
