// Launch-argument mapping of the "cuda" module, without a driver: MarshalKernelArgs (kernel
// parameters) and ExtractLaunchDims / LaunchConfig (grid, block, dynamic shared memory).
#include "backends/cuda/kernel_args.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "backends/device_module_payload.h"
#include "runtime/data_type.h"
#include "tests/cuda/cuda_test_kernels.h"

namespace sorun {
namespace {

using testing::HandleType;
using testing::MakeFunctionInfo;

DLDataType Float64() { return MakeDType(kDLFloat, 64); }
DLDataType UInt32() { return MakeDType(kDLUInt, 32); }

// Packed arguments built up by the tests.
struct Args {
  std::vector<TVMValue> values;
  std::vector<int> codes;

  Args& Int(int64_t v) {
    TVMValue x;
    x.v_int64 = v;
    return Push(x, kTVMArgInt);
  }
  Args& Float(double v) {
    TVMValue x;
    x.v_float64 = v;
    return Push(x, kTVMArgFloat);
  }
  Args& Handle(void* v) {
    TVMValue x;
    x.v_handle = v;
    return Push(x, kTVMOpaqueHandle);
  }
  Args& Push(TVMValue v, int code) {
    values.push_back(v);
    codes.push_back(code);
    return *this;
  }
  int size() const { return static_cast<int>(values.size()); }
};

// The bytes the driver reads for parameter `i` of size `n`.
template <typename T>
T Read(const KernelArgs& args, size_t i) {
  T v;
  std::memcpy(&v, args.pointers[i], sizeof(T));
  return v;
}

TEST(MarshalKernelArgsTest, NarrowsScalarsAndPassesPointersByAddress) {
  FunctionInfo info =
      MakeFunctionInfo({HandleType(), Int32(), UInt32(), Float32(), Int64(), Float64()}, {"blockIdx.x"});
  void* device_ptr = reinterpret_cast<void*>(uintptr_t{0x7f0000001000});
  Args a;
  a.Handle(device_ptr).Int(-7).Int(4000000000LL).Float(1.5).Int(int64_t{1} << 40).Float(-2.25).Int(16);
  KernelArgs out;
  Status s = MarshalKernelArgs("k", info, a.values.data(), a.codes.data(), a.size(), &out);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(out.pointers.size(), 6u);  // launch values are not kernel parameters
  for (size_t i = 0; i < out.pointers.size(); ++i) EXPECT_EQ(out.pointers[i], &out.slots[i]);
  EXPECT_EQ(out.kernel_params(), out.pointers.data());
  EXPECT_EQ(Read<uint64_t>(out, 0), 0x7f0000001000u);
  EXPECT_EQ(Read<int32_t>(out, 1), -7);
  EXPECT_EQ(Read<uint32_t>(out, 2), 4000000000u);
  EXPECT_EQ(Read<float>(out, 3), 1.5f);
  EXPECT_EQ(Read<int64_t>(out, 4), int64_t{1} << 40);
  EXPECT_EQ(Read<double>(out, 5), -2.25);
}

TEST(MarshalKernelArgsTest, SmallIntegersBoolsAndIntsForFloats) {
  FunctionInfo info = MakeFunctionInfo({MakeDType(kDLInt, 8), MakeDType(kDLUInt, 16), Int32(), Float32()}, {});
  Args a;
  a.Int(-1)
      .Int(65535)
      .Push(
          [] {
            TVMValue v;
            v.v_int64 = 1;
            return v;
          }(),
          kTVMArgBool)
      .Int(3);
  KernelArgs out;
  Status s = MarshalKernelArgs("k", info, a.values.data(), a.codes.data(), a.size(), &out);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Read<int8_t>(out, 0), -1);
  EXPECT_EQ(Read<uint16_t>(out, 1), 65535);
  EXPECT_EQ(Read<int32_t>(out, 2), 1);
  EXPECT_EQ(Read<float>(out, 3), 3.0f);
  // The unused upper bytes of each slot are zero (the driver never reads them, but no stale data).
  EXPECT_EQ(out.slots[0].u64, 0xffu);
}

TEST(MarshalKernelArgsTest, NullAndTensorHandles) {
  FunctionInfo info = MakeFunctionInfo({HandleType(), HandleType(), HandleType()}, {});
  int64_t shape[1] = {4};
  DLTensor on_gpu{};
  on_gpu.data = reinterpret_cast<void*>(uintptr_t{0x10000});
  on_gpu.device = DLDevice{kDLCUDA, 0};
  on_gpu.ndim = 1;
  on_gpu.dtype = Float32();
  on_gpu.shape = shape;
  on_gpu.byte_offset = 256;
  Args a;
  TVMValue null_value;
  null_value.v_handle = nullptr;
  TVMValue tensor_value;
  tensor_value.v_handle = &on_gpu;
  a.Push(null_value, kTVMNullptr).Push(tensor_value, kTVMDLTensorHandle).Push(tensor_value, kTVMNDArrayHandle);
  KernelArgs out;
  Status s = MarshalKernelArgs("k", info, a.values.data(), a.codes.data(), a.size(), &out);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Read<uint64_t>(out, 0), 0u);
  EXPECT_EQ(Read<uint64_t>(out, 1), 0x10000u + 256u);
  EXPECT_EQ(Read<uint64_t>(out, 2), 0x10000u + 256u);

  // A host tensor cannot be handed to a kernel.
  DLTensor on_cpu = on_gpu;
  on_cpu.device = CpuDevice();
  tensor_value.v_handle = &on_cpu;
  Args b;
  b.Push(null_value, kTVMNullptr).Push(tensor_value, kTVMDLTensorHandle).Handle(nullptr);
  s = MarshalKernelArgs("k", info, b.values.data(), b.codes.data(), b.size(), &out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("kernel 'k' argument 1: tensor float32[4] on cpu:0 is not in CUDA device memory"),
            std::string::npos)
      << s.message();
}

TEST(MarshalKernelArgsTest, WrongCountsAreRejected) {
  FunctionInfo info =
      MakeFunctionInfo({HandleType(), Int32()}, {"blockIdx.x", "threadIdx.x", "tir.use_dyn_shared_memory"});
  KernelArgs out;
  Args too_few;
  too_few.Handle(nullptr).Int(1).Int(1).Int(1);
  Status s = MarshalKernelArgs("vadd", info, too_few.values.data(), too_few.codes.data(), too_few.size(), &out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "kernel 'vadd' expects 5 packed arguments (2 parameters + 3 launch values), got 4");
  Args too_many = too_few;
  too_many.Int(0).Int(0);
  s = MarshalKernelArgs("vadd", info, too_many.values.data(), too_many.codes.data(), too_many.size(), &out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("got 6"), std::string::npos) << s.message();
  s = MarshalKernelArgs("vadd", info, nullptr, nullptr, -1, &out);
  EXPECT_FALSE(s.ok());
  s = MarshalKernelArgs("vadd", info, nullptr, nullptr, 5, &out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("null argument arrays"), std::string::npos) << s.message();
}

TEST(MarshalKernelArgsTest, WrongArgumentTypesAreRejected) {
  FunctionInfo info = MakeFunctionInfo({HandleType(), Int32(), Float32()}, {});
  KernelArgs out;
  struct Case {
    Args args;
    const char* expected;
  };
  TVMValue str;
  str.v_str = "hello";
  std::vector<Case> cases;
  cases.push_back(
      {Args().Int(5).Int(1).Float(1), "kernel 'k' argument 0: expected a device pointer (handle), got int"});
  cases.push_back(
      {Args().Handle(nullptr).Float(1.0).Float(1), "kernel 'k' argument 1: expected int for int32, got float"});
  cases.push_back(
      {Args().Handle(nullptr).Int(1).Push(str, kTVMStr), "kernel 'k' argument 2: expected float for float32"});
  cases.push_back(
      {Args().Handle(nullptr).Int(int64_t{1} << 33).Float(1), "argument 1: value 8589934592 does not fit int32"});
  cases.push_back({Args().Handle(nullptr).Int(-(int64_t{1} << 31) - 1).Float(1), "does not fit int32"});
  for (const Case& c : cases) {
    Status s = MarshalKernelArgs("k", info, c.args.values.data(), c.args.codes.data(), c.args.size(), &out);
    ASSERT_FALSE(s.ok()) << c.expected;
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find(c.expected), std::string::npos) << s.message();
  }
}

TEST(MarshalKernelArgsTest, UnsupportedParameterTypes) {
  KernelArgs out;
  for (DLDataType type :
       {MakeDType(kDLFloat, 16), MakeDType(kDLFloat, 32, 4), MakeDType(kDLUInt, 1), MakeDType(kDLBfloat, 16)}) {
    FunctionInfo info = MakeFunctionInfo({type}, {});
    Args a;
    a.Float(1.0);
    Status s = MarshalKernelArgs("k", info, a.values.data(), a.codes.data(), a.size(), &out);
    ASSERT_FALSE(s.ok()) << DTypeToString(type);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("kernel 'k' argument 0: "), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(DTypeToString(type)), std::string::npos) << s.message();
    // The same function info is refused when a module is built.
    EXPECT_FALSE(LaunchConfig::FromFunctionInfo("k", info).ok());
  }
}

TEST(MarshalKernelArgsTest, ReusedArgsShrinkAndRepoint) {
  KernelArgs out;
  Args big;
  big.Int(1).Int(2).Int(3);
  ASSERT_TRUE(MarshalKernelArgs("k", MakeFunctionInfo({Int32(), Int32(), Int32()}, {}), big.values.data(),
                                big.codes.data(), big.size(), &out)
                  .ok());
  Args none;
  ASSERT_TRUE(MarshalKernelArgs("k", MakeFunctionInfo({}, {}), none.values.data(), none.codes.data(), 0, &out).ok());
  EXPECT_TRUE(out.pointers.empty());
  EXPECT_EQ(out.kernel_params(), nullptr);
}

// ---- Launch dimensions (ExtractLaunchDims over LaunchConfig) ----

StatusOr<LaunchDims> Dims(const std::vector<std::string>& tags, const Args& launch_values, int num_params = 0) {
  FunctionInfo info = MakeFunctionInfo(std::vector<DLDataType>(num_params, Int32()), tags);
  auto config = LaunchConfig::FromFunctionInfo("k", info);
  if (!config.ok()) return config.status();
  return ExtractLaunchDims("k", *config, launch_values.values.data(), launch_values.codes.data(), launch_values.size());
}

TEST(LaunchDimsTest, TwoDimensionalGridAndBlock) {
  Args a;
  a.Int(9).Int(11).Int(7).Int(8).Int(16).Int(4);  // 2 parameters, then the launch values
  auto dims = Dims({"blockIdx.x", "blockIdx.y", "threadIdx.x", "threadIdx.y"}, a, 2);
  ASSERT_TRUE(dims.ok()) << dims.status().ToString();
  EXPECT_EQ(dims->grid[0], 7);
  EXPECT_EQ(dims->grid[1], 8);
  EXPECT_EQ(dims->grid[2], 1);
  EXPECT_EQ(dims->block[0], 16);
  EXPECT_EQ(dims->block[1], 4);
  EXPECT_EQ(dims->block[2], 1);
  EXPECT_EQ(dims->dyn_shared_bytes, 0);
}

TEST(LaunchDimsTest, MissingDimensionsDefaultToOne) {
  Args none;
  auto dims = Dims({}, none);
  ASSERT_TRUE(dims.ok()) << dims.status().ToString();
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(dims->grid[d], 1);
    EXPECT_EQ(dims->block[d], 1);
  }
  // Tags in any order; zero or negative extents leave 1 (as TVM does).
  Args a;
  a.Int(32).Int(0).Int(-5);
  dims = Dims({"threadIdx.z", "blockIdx.z", "threadIdx.x"}, a);
  ASSERT_TRUE(dims.ok()) << dims.status().ToString();
  EXPECT_EQ(dims->block[2], 32);
  EXPECT_EQ(dims->grid[2], 1);
  EXPECT_EQ(dims->block[0], 1);
}

// TVM 0.16's conv2d kernels for OpenCL list a tag more than once (12 tags for 6 axes: blockIdx.z/y/x,
// then threadIdx.z/y/x three times). The host passes one value per listed tag; as in TVM's
// ThreadAxisConfig, each value sets its dimension and a later one for the same tag wins.
TEST(LaunchDimsTest, RepeatedTagsAsTvmOpenclConvKernelsHave) {
  const std::vector<std::string> tags = {"blockIdx.z",  "blockIdx.y",  "blockIdx.x",  "threadIdx.z",
                                         "threadIdx.y", "threadIdx.x", "threadIdx.z", "threadIdx.y",
                                         "threadIdx.x", "threadIdx.z", "threadIdx.y", "threadIdx.x"};
  Args a;
  a.Handle(nullptr).Handle(nullptr).Handle(nullptr).Handle(nullptr);  // (data, weight, bias, out)
  a.Int(4).Int(2).Int(8).Int(2).Int(1).Int(8).Int(2).Int(1).Int(8).Int(2).Int(1).Int(8);
  FunctionInfo info = MakeFunctionInfo({HandleType(), HandleType(), HandleType(), HandleType()}, tags);
  auto config = LaunchConfig::FromFunctionInfo("conv_kernel", info);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->num_packed_args(), 16);
  EXPECT_EQ(config->work_dim, 3);
  auto dims = ExtractLaunchDims("conv_kernel", *config, a.values.data(), a.codes.data(), a.size());
  ASSERT_TRUE(dims.ok()) << dims.status().ToString();
  EXPECT_EQ(dims->grid[0], 8);
  EXPECT_EQ(dims->grid[1], 2);
  EXPECT_EQ(dims->grid[2], 4);
  EXPECT_EQ(dims->block[0], 8);
  EXPECT_EQ(dims->block[1], 1);
  EXPECT_EQ(dims->block[2], 2);
  // A later value for a repeated tag wins.
  a.values[15].v_int64 = 16;
  dims = ExtractLaunchDims("conv_kernel", *config, a.values.data(), a.codes.data(), a.size());
  ASSERT_TRUE(dims.ok()) << dims.status().ToString();
  EXPECT_EQ(dims->block[0], 16);
}

TEST(LaunchDimsTest, DynamicSharedMemoryTag) {
  Args a;
  a.Int(1).Int(256).Int(64 * 1024);
  auto dims = Dims({"blockIdx.x", "threadIdx.x", "tir.use_dyn_shared_memory"}, a);
  ASSERT_TRUE(dims.ok()) << dims.status().ToString();
  EXPECT_EQ(dims->block[0], 256);
  EXPECT_EQ(dims->dyn_shared_bytes, 64 * 1024);
  // The dyn tag must be last.
  Args b;
  b.Int(1).Int(1);
  auto bad = Dims({"tir.use_dyn_shared_memory", "threadIdx.x"}, b);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("must be the last tag"), std::string::npos) << bad.status().message();
}

TEST(LaunchDimsTest, BadLaunchValues) {
  Args float_extent;
  float_extent.Int(1).Float(2.0);
  auto dims = Dims({"blockIdx.x", "threadIdx.x"}, float_extent);
  ASSERT_FALSE(dims.ok());
  EXPECT_EQ(dims.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dims.status().message().find("launch value (argument 1) must be an integer"), std::string::npos)
      << dims.status().message();

  Args float_smem;
  float_smem.Int(1).Float(1024.0);
  dims = Dims({"blockIdx.x", "tir.use_dyn_shared_memory"}, float_smem);
  ASSERT_FALSE(dims.ok());
  EXPECT_NE(dims.status().message().find("dynamic shared memory size must be an integer"), std::string::npos);

  Args short_args;
  short_args.Int(1);
  dims = Dims({"blockIdx.x", "threadIdx.x"}, short_args);
  ASSERT_FALSE(dims.ok());
  EXPECT_NE(dims.status().message().find("expects 2 packed arguments"), std::string::npos) << dims.status().message();

  auto unknown = Dims({"vthread"}, short_args);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown launch tag 'vthread'"), std::string::npos);
}

}  // namespace
}  // namespace sorun
