// The kDLOpenCL DeviceApi on a real OpenCL device (PoCL in CI): discovery, allocation, copies in every
// direction with byte offsets, device -> device, workspace pooling, errors.
#include "backends/opencl/opencl_device_api.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "backends/opencl/opencl_backend.h"
#include "backends/opencl/opencl_devices.h"
#include "backends/opencl/opencl_status.h"
#include "runtime/data_type.h"
#include "runtime/function_registry.h"
#include "runtime/registry_keys.h"
#include "tests/opencl/opencl_test_util.h"

namespace sorun {
namespace {

using testing::DeviceFloats;
using testing::HostFloats;

constexpr DLDevice kCl0{kDLOpenCL, 0};

DeviceApi* Api() {
  testing::SetUpOpenclTestEnvironment();
  auto api = GetDeviceApi(kDLOpenCL);
  EXPECT_TRUE(api.ok()) << api.status().ToString();
  return api.ok() ? *api : nullptr;
}

// A 1-D uint8 DLTensor view of `n` bytes at `offset` of `data` on `device`.
DLTensor Bytes(void* data, DLDevice device, int64_t* shape, uint64_t offset) {
  DLTensor t{};
  t.data = data;
  t.device = device;
  t.ndim = 1;
  t.dtype = UInt8();
  t.shape = shape;
  t.byte_offset = offset;
  return t;
}

TEST(OpenclStatusTest, NamesErrorsAndCalls) {
  EXPECT_STREQ(opencl::ClErrorName(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  EXPECT_STREQ(opencl::ClErrorName(CL_INVALID_WORK_GROUP_SIZE), "CL_INVALID_WORK_GROUP_SIZE");
  EXPECT_STREQ(opencl::ClErrorName(-12345), "CL_UNKNOWN_ERROR");
  EXPECT_TRUE(opencl::ClStatus(CL_SUCCESS, "clFinish").ok());
  Status s = opencl::ClStatus(CL_MEM_OBJECT_ALLOCATION_FAILURE, "clCreateBuffer", "allocating 8 bytes");
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "allocating 8 bytes: clCreateBuffer failed: CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)");
  EXPECT_EQ(opencl::ClStatus(CL_INVALID_KERNEL_ARGS, "clEnqueueNDRangeKernel").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(opencl::ClStatus(CL_DEVICE_NOT_AVAILABLE, "clCreateContext").code(), StatusCode::kUnavailable);
}

TEST(OpenclBackendTest, RegistrationIsIdempotent) {
  testing::SetUpOpenclTestEnvironment();
  EXPECT_TRUE(RegisterOpenclBackend().ok());
  EXPECT_TRUE(RegisterOpenclBackend().ok());
  EXPECT_TRUE(FunctionRegistry::Global().Get(std::string(keys::kLoadBinaryPrefix) + "opencl").defined());
  EXPECT_NE(dynamic_cast<OpenclDeviceApi*>(Api()), nullptr);
}

TEST(OpenclDeviceApiTest, DiscoversAndDescribesDevices) {
  SORUN_REQUIRE_OPENCL();
  DeviceApi* api = Api();
  int count = api->DeviceCount();
  ASSERT_GE(count, 1);
  auto text = api->Describe(0);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto info = OpenclDevices::Global().Info(0);
  ASSERT_TRUE(info.ok());
  EXPECT_NE(text->find((*info)->name), std::string::npos) << *text;
  EXPECT_NE(text->find((*info)->platform_name), std::string::npos) << *text;
  EXPECT_NE(text->find("OpenCL"), std::string::npos) << *text;  // the device version

  auto missing = api->Describe(count);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(missing.status().message().find("opencl:" + std::to_string(count) + " does not exist"), std::string::npos);
  EXPECT_TRUE(CheckDeviceExists(kCl0).ok());
  EXPECT_FALSE(CheckDeviceExists(DLDevice{kDLOpenCL, count}).ok());
}

TEST(OpenclDeviceApiTest, SetDeviceIsThreadLocalAndChecked) {
  SORUN_REQUIRE_OPENCL();
  DeviceApi* api = Api();
  ASSERT_TRUE(api->SetDevice(0).ok());
  EXPECT_EQ(OpenclDevices::CurrentDevice(), 0);
  Status bad = api->SetDevice(api->DeviceCount());
  EXPECT_EQ(bad.code(), StatusCode::kUnavailable);
  EXPECT_EQ(OpenclDevices::CurrentDevice(), 0);
  // Through the global function generated host code calls.
  PackedFunc set_device = FunctionRegistry::Global().Get(keys::kSetDevice);
  ASSERT_TRUE(set_device.defined());
  EXPECT_TRUE(set_device(static_cast<int>(kDLOpenCL), 0).ok());
  EXPECT_FALSE(set_device(static_cast<int>(kDLOpenCL), 1000).ok());
}

TEST(OpenclDeviceApiTest, ZeroByteAllocationIsAValidBuffer) {
  SORUN_REQUIRE_OPENCL();
  DeviceApi* api = Api();
  auto ptr = api->Alloc(kCl0, 0, kAllocAlignment);
  ASSERT_TRUE(ptr.ok()) << ptr.status().ToString();
  ASSERT_NE(*ptr, nullptr);
  size_t size = 0;
  EXPECT_EQ(clGetMemObjectInfo(static_cast<cl_mem>(*ptr), CL_MEM_SIZE, sizeof(size), &size, nullptr), CL_SUCCESS);
  EXPECT_GE(size, 1u);
  api->Free(kCl0, *ptr);
  // Tensors with zero elements too.
  auto empty = Tensor::Empty({0, 4}, Float32(), kCl0);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_NE(empty->data(), nullptr);
  auto host = empty->CopyToDevice(CpuDevice());
  EXPECT_TRUE(host.ok()) << host.status().ToString();
}

TEST(OpenclDeviceApiTest, HugeAllocationIsResourceExhausted) {
  SORUN_REQUIRE_OPENCL();
  auto r = Api()->Alloc(kCl0, SIZE_MAX / 2, kAllocAlignment);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("opencl:0"), std::string::npos) << r.status().message();
}

TEST(OpenclDeviceApiTest, HostDeviceRoundTrip) {
  SORUN_REQUIRE_OPENCL();
  std::vector<float> values(1000);
  std::iota(values.begin(), values.end(), -3.5f);
  Tensor dev = DeviceFloats(values);
  EXPECT_EQ(dev.device().device_type, kDLOpenCL);
  EXPECT_EQ(HostFloats(dev), values);
}

TEST(OpenclDeviceApiTest, CopiesHonourByteOffsetsOnBothSides) {
  SORUN_REQUIRE_OPENCL();
  DeviceApi* api = Api();
  std::vector<uint8_t> host(256);
  std::iota(host.begin(), host.end(), 0);
  auto mem = api->Alloc(kCl0, 256, kAllocAlignment);
  ASSERT_TRUE(mem.ok());
  // Zero the buffer, then write host[10..110) to device bytes [50, 150).
  std::vector<uint8_t> zeros(256, 0);
  int64_t all = 256;
  ASSERT_TRUE(api->Copy(Bytes(zeros.data(), CpuDevice(), &all, 0), Bytes(*mem, kCl0, &all, 0), nullptr).ok());
  int64_t n = 100;
  Status s = api->Copy(Bytes(host.data(), CpuDevice(), &n, 10), Bytes(*mem, kCl0, &n, 50), nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // Read device bytes [60, 160) into out[5..105).
  std::vector<uint8_t> out(128, 0xee);
  s = api->Copy(Bytes(*mem, kCl0, &n, 60), Bytes(out.data(), CpuDevice(), &n, 5), nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(out[i], 0xee);
  for (int i = 0; i < 90; ++i) EXPECT_EQ(out[5 + i], host[20 + i]) << i;  // device 60..149 = host 20..109
  for (int i = 90; i < 100; ++i) EXPECT_EQ(out[5 + i], 0) << i;           // device 150..159 untouched
  EXPECT_EQ(out[105], 0xee);
  api->Free(kCl0, *mem);
}

TEST(OpenclDeviceApiTest, DeviceToDeviceWithOffsets) {
  SORUN_REQUIRE_OPENCL();
  std::vector<float> a(64), b(64, 0.0f);
  std::iota(a.begin(), a.end(), 1.0f);
  Tensor src = DeviceFloats(a);
  Tensor dst = DeviceFloats(b);
  // Whole-tensor copy through Tensor::CopyFrom.
  ASSERT_TRUE(dst.CopyFrom(*src.dl()).ok());
  EXPECT_EQ(HostFloats(dst), a);
  // Views: src[8..24) -> dst[40..56).
  ASSERT_TRUE(dst.CopyFrom(*DeviceFloats(b).dl()).ok());
  auto from = src.View({16}, Float32(), 8 * sizeof(float));
  auto to = dst.View({16}, Float32(), 40 * sizeof(float));
  ASSERT_TRUE(from.ok() && to.ok());
  Status s = CopyTensor(*from->dl(), *to->dl());
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::vector<float> got = HostFloats(dst);
  for (int i = 0; i < 64; ++i) {
    float want = (i >= 40 && i < 56) ? a[i - 32] : 0.0f;
    EXPECT_EQ(got[i], want) << i;
  }
}

TEST(OpenclDeviceApiTest, OverlappingCopyWithinOneBuffer) {
  SORUN_REQUIRE_OPENCL();
  std::vector<float> a(32);
  std::iota(a.begin(), a.end(), 0.0f);
  Tensor t = DeviceFloats(a);
  auto from = t.View({16}, Float32(), 0);
  auto to = t.View({16}, Float32(), 8 * sizeof(float));
  ASSERT_TRUE(from.ok() && to.ok());
  Status s = CopyTensor(*from->dl(), *to->dl());
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::vector<float> got = HostFloats(t);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(got[i], a[i]);
  for (int i = 8; i < 24; ++i) EXPECT_EQ(got[i], a[i - 8]) << i;  // memmove semantics
  for (int i = 24; i < 32; ++i) EXPECT_EQ(got[i], a[i]);
}

TEST(OpenclDeviceApiTest, CopyErrorsAreClear) {
  SORUN_REQUIRE_OPENCL();
  DeviceApi* api = Api();
  auto mem = api->Alloc(kCl0, 16, kAllocAlignment);
  ASSERT_TRUE(mem.ok());
  std::vector<uint8_t> host(64);
  int64_t n = 32;
  // Past the end of the buffer.
  Status s = api->Copy(Bytes(host.data(), CpuDevice(), &n, 0), Bytes(*mem, kCl0, &n, 0), nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("outside its cl_mem of 16 bytes"), std::string::npos) << s.message();
  // Null cl_mem.
  int64_t four = 4;
  s = api->Copy(Bytes(nullptr, kCl0, &four, 0), Bytes(host.data(), CpuDevice(), &four, 0), nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  // Mismatched sizes.
  int64_t two = 2;
  s = api->Copy(Bytes(host.data(), CpuDevice(), &four, 0), Bytes(*mem, kCl0, &two, 0), nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  // Not an OpenCL copy at all.
  s = api->Copy(Bytes(host.data(), CpuDevice(), &four, 0), Bytes(host.data(), CpuDevice(), &four, 8), nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  // Nonexistent device.
  auto bad = api->Alloc(DLDevice{kDLOpenCL, 99}, 16, kAllocAlignment);
  EXPECT_EQ(bad.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(api->Sync(DLDevice{kDLOpenCL, 99}, nullptr).code(), StatusCode::kUnavailable);
  api->Free(kCl0, *mem);
}

TEST(OpenclDeviceApiTest, SyncWaitsForTheQueue) {
  SORUN_REQUIRE_OPENCL();
  EXPECT_TRUE(Api()->Sync(kCl0, nullptr).ok());
}

TEST(OpenclDeviceApiTest, WorkspaceIsPooledAndChecked) {
  SORUN_REQUIRE_OPENCL();
  auto* api = dynamic_cast<OpenclDeviceApi*>(Api());
  ASSERT_NE(api, nullptr);
  size_t before = api->workspace_reserved_bytes(0);
  auto a = api->AllocWorkspace(kCl0, 5000);
  auto b = api->AllocWorkspace(kCl0, 100);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  EXPECT_EQ(api->workspace_reserved_bytes(0), before + 8192 + 4096);
  // The buffer is usable device memory of at least the requested size.
  size_t size = 0;
  ASSERT_EQ(clGetMemObjectInfo(static_cast<cl_mem>(*a), CL_MEM_SIZE, sizeof(size), &size, nullptr), CL_SUCCESS);
  EXPECT_GE(size, 5000u);
  ASSERT_TRUE(api->FreeWorkspace(kCl0, *b).ok());
  ASSERT_TRUE(api->FreeWorkspace(kCl0, *a).ok());
  // Freed buffers are reused (best fit), nothing new is allocated.
  auto c = api->AllocWorkspace(kCl0, 4000);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, *b);
  EXPECT_EQ(api->workspace_reserved_bytes(0), before + 8192 + 4096);
  ASSERT_TRUE(api->FreeWorkspace(kCl0, *c).ok());
  // Double free and foreign pointers are errors, not crashes.
  Status again = api->FreeWorkspace(kCl0, *c);
  EXPECT_EQ(again.code(), StatusCode::kInvalidArgument);
  int local = 0;
  EXPECT_FALSE(api->FreeWorkspace(kCl0, &local).ok());
  // Through the C API generated code uses.
  void* w = TVMBackendAllocWorkspace(kDLOpenCL, 0, 2048, kDLFloat, 32);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(TVMBackendFreeWorkspace(kDLOpenCL, 0, w), 0);
  EXPECT_EQ(TVMBackendAllocWorkspace(kDLOpenCL, 77, 2048, kDLFloat, 32), nullptr);
  EXPECT_NE(std::string(TVMGetLastError()).find("opencl:77"), std::string::npos) << TVMGetLastError();
}

}  // namespace
}  // namespace sorun
