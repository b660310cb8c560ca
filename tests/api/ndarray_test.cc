// sorun::NDArray (api/sorun.h): creation, metadata, shared ownership, DLPack exchange and copies.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "api/sorun.h"
#include "tests/util/status_matchers.h"

namespace sorun {
namespace {

DLDataType F32() { return ParseDataType("float32").value(); }

TEST(NDArrayTest, UndefinedArrayIsSafeToAsk) {
  NDArray a;
  EXPECT_FALSE(a.defined());
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_TRUE(a.shape().empty());
  EXPECT_EQ(a.num_elements(), 0);
  EXPECT_EQ(a.nbytes(), 0u);
  EXPECT_EQ(a.ToDLPack(), nullptr);
  EXPECT_EQ(a.Describe(), "undefined NDArray");
  EXPECT_ERROR(a.CopyTo(DLDevice{kDLCPU, 0}).status(), StatusCode::kFailedPrecondition, "undefined");
  EXPECT_ERROR(a.CopyFrom(a.dl()), StatusCode::kFailedPrecondition, "undefined");
}

TEST(NDArrayTest, EmptyDescribesItself) {
  auto a = NDArray::Empty({2, 3}, F32());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(a->defined());
  EXPECT_EQ(a->shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(DataTypeName(a->dtype()), "float32");
  EXPECT_EQ(DeviceName(a->device()), "cpu:0");
  EXPECT_EQ(a->num_elements(), 6);
  EXPECT_EQ(a->nbytes(), 24u);
  EXPECT_EQ(a->dl().ndim, 2);
  EXPECT_EQ(a->Describe(), "float32[2, 3] on cpu:0");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a->data()) % 64, 0u);
  EXPECT_EQ(static_cast<void*>(a->data_as<float>()), a->data());
  EXPECT_ERROR(NDArray::Empty({2, -1}, F32()).status(), StatusCode::kInvalidArgument, "-1");
}

TEST(NDArrayTest, CopiesShareTheData) {
  auto a = NDArray::Empty({4}, F32());
  ASSERT_TRUE(a.ok());
  NDArray b = *a;
  EXPECT_EQ(b.data(), a->data());
  b.data_as<float>()[2] = 7.5f;
  EXPECT_EQ(a->data_as<float>()[2], 7.5f);
  NDArray c = std::move(b);
  EXPECT_EQ(c.data(), a->data());
}

TEST(NDArrayTest, CopyToAndCopyFromMoveBytes) {
  auto a = NDArray::Empty({3}, F32());
  ASSERT_TRUE(a.ok());
  for (int i = 0; i < 3; ++i) a->data_as<float>()[i] = static_cast<float>(i) + 0.5f;
  auto copy = a->CopyTo(DLDevice{kDLCPU, 0});
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  EXPECT_NE(copy->data(), a->data());
  EXPECT_EQ(std::memcmp(copy->data(), a->data(), 12), 0);
  auto b = NDArray::Empty({3}, F32());
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(b->CopyFrom(a->dl()).ok());
  EXPECT_EQ(b->data_as<float>()[2], 2.5f);
  auto wrong = NDArray::Empty({5}, F32());
  ASSERT_TRUE(wrong.ok());
  EXPECT_ERROR(b->CopyFrom(wrong->dl()), StatusCode::kInvalidArgument, "20 bytes", "12 bytes");
}

TEST(NDArrayTest, DLPackRoundTripIsZeroCopy) {
  auto a = NDArray::Empty({2, 2}, F32());
  ASSERT_TRUE(a.ok());
  DLManagedTensor* managed = a->ToDLPack();
  ASSERT_NE(managed, nullptr);
  EXPECT_EQ(managed->dl_tensor.data, a->dl().data);
  auto b = NDArray::FromDLPack(managed);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->data(), a->data());
  EXPECT_EQ(b->shape(), a->shape());
}

// A producer's tensor: FromDLPack owns it and runs its deleter once, when the last copy goes.
struct Producer {
  float values[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  int deleted = 0;
  DLManagedTensor managed{};
};

TEST(NDArrayTest, FromDLPackRunsTheDeleterWhenTheLastCopyGoes) {
  Producer p;
  p.managed.dl_tensor.data = p.values;
  p.managed.dl_tensor.device = DLDevice{kDLCPU, 0};
  p.managed.dl_tensor.ndim = 2;
  p.managed.dl_tensor.dtype = F32();
  p.managed.dl_tensor.shape = p.shape;
  p.managed.manager_ctx = &p;
  p.managed.deleter = [](DLManagedTensor* self) { ++static_cast<Producer*>(self->manager_ctx)->deleted; };
  {
    auto a = NDArray::FromDLPack(&p.managed);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_EQ(a->data(), p.values);
    EXPECT_EQ(a->data_as<float>()[5], 6.0f);
    NDArray copy = *a;
    a = NDArray();
    EXPECT_EQ(p.deleted, 0);  // `copy` still holds it
  }
  EXPECT_EQ(p.deleted, 1);
}

}  // namespace
}  // namespace sorun
