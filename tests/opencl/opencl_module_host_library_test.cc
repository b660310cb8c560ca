// Section 8.2 end to end: a kernel library written in C (testdata/opencl/opencl_host_kernels.c, built
// by Bazel) imports an "opencl" module; its exported host functions call __tvm_set_device(4, id),
// find the kernels with TVMBackendGetFuncFromEnv(__tvm_module_ctx, ...) and launch them with
// TVMFuncCall on cl_mem handles, using an OpenCL workspace buffer in between.
#include <gtest/gtest.h>

#include <vector>

#include "backends/opencl/opencl_module.h"
#include "runtime/data_type.h"
#include "runtime/library_module.h"
#include "tests/opencl/opencl_test_util.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using testing::DeviceFloats;
using testing::DeviceZeros;
using testing::HostFloats;
using testing::MakeFunctionInfo;

const char kLibrary[] = "testdata/opencl/libopencl_host_kernels.so";

DeviceModulePayload KernelPayload() {
  DeviceModulePayload p;
  p.fmt = "cl";
  p.functions = {
      {"scale", MakeFunctionInfo({"handle", "handle", "float32", "int32"}, {"blockIdx.x", "threadIdx.x"})},
      {"vadd", MakeFunctionInfo({"handle", "handle", "handle", "int32"}, {"blockIdx.x", "threadIdx.x"})},
  };
  p.data =
      "// Function: vadd\n"
      "__kernel void vadd(__global const float* restrict a, __global const float* restrict b,\n"
      "                   __global float* restrict c, int n) {\n"
      "  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);\n"
      "  if (i < n) c[i] = a[i] + b[i];\n"
      "}\n"
      "// Function: scale\n"
      "__kernel void scale(__global const float* restrict x, __global float* restrict y, float alpha, int n) {\n"
      "  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);\n"
      "  if (i < n) y[i] = alpha * x[i];\n"
      "}\n";
  return p;
}

class HostLibraryTest : public ::testing::Test {
 protected:
  // One library module for the whole suite: the host code caches function handles in statics.
  static void SetUpTestSuite() {
    std::string why;
    if (testing::OpenclDeviceCount(&why) == 0) return;
    auto opened = LibraryModuleNode::Open(testing::Runfile(kLibrary));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    lib_ = new Module(ObjectPtr<ModuleNode>(opened->module));
    if (!opened->reused) {
      auto cl = CreateOpenclModule(KernelPayload());
      ASSERT_TRUE(cl.ok()) << cl.status().ToString();
      ASSERT_TRUE(lib_->Import(*cl).ok());
    }
  }
  static void TearDownTestSuite() {
    delete lib_;
    lib_ = nullptr;
  }
  void SetUp() override {
    SORUN_REQUIRE_OPENCL();
    ASSERT_NE(lib_, nullptr);
  }

  static Module* lib_;
};

Module* HostLibraryTest::lib_ = nullptr;

std::vector<float> Ramp(int n, float start, float step) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = start + step * i;
  return v;
}

TEST_F(HostLibraryTest, HostFunctionLaunchesTheImportedKernel) {
  const int n = 1000;
  std::vector<float> a = Ramp(n, 0.0f, 1.0f), b = Ramp(n, 5.0f, -0.5f);
  auto ta = Tensor::Empty({n}, Float32(), DLDevice{kDLOpenCL, 0});
  ASSERT_TRUE(ta.ok()) << ta.status().ToString();
  ASSERT_TRUE(ta->CopyFrom(*DeviceFloats(a).dl()).ok());
  Tensor tb = DeviceFloats(b), tc = DeviceZeros(n);
  PackedFunc vadd_host = lib_->GetFunction("vadd_host");
  ASSERT_TRUE(vadd_host.defined());
  auto r = vadd_host(*ta, tb, tc);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<float> c = HostFloats(tc);
  for (int i = 0; i < n; ++i) EXPECT_EQ(c[i], a[i] + b[i]) << i;
  // Borrowed DLTensor* (type code 7) the same way.
  Tensor td = DeviceZeros(n);
  r = vadd_host(ta->dl(), tb.dl(), td.dl());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(HostFloats(td), c);
}

TEST_F(HostLibraryTest, HostFunctionUsesAnOpenclWorkspace) {
  const int n = 4099;  // not a multiple of the block size
  std::vector<float> a = Ramp(n, 1.0f, 0.25f), b = Ramp(n, -2.0f, 1.0f);
  Tensor ta = DeviceFloats(a), tb = DeviceFloats(b), tc = DeviceZeros(n);
  for (int iter = 0; iter < 3; ++iter) {  // the workspace buffer is reused from the pool
    auto r = lib_->GetFunction("add_scale_host")(ta, tb, tc);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  std::vector<float> c = HostFloats(tc);
  for (int i = 0; i < n; ++i) EXPECT_EQ(c[i], 2.0f * (a[i] + b[i])) << i;
}

TEST_F(HostLibraryTest, ErrorsComeBackThroughTheCBoundary) {
  // Host tensors where the host code expects OpenCL ones: the host code's own message.
  auto host = Tensor::Empty({4}, Float32(), CpuDevice());
  auto r = lib_->GetFunction("vadd_host")(*host, *host, *host);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Expect tensors on an OpenCL device"), std::string::npos) << r.status().message();
  // A kernel that is neither imported nor global.
  r = lib_->GetFunction("missing_kernel_host")();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no_such_kernel"), std::string::npos) << r.status().message();
  // A device that does not exist: __tvm_set_device fails inside the host code.
  auto opened = LibraryModuleNode::Open(testing::Runfile(kLibrary));
  ASSERT_TRUE(opened.ok());
  EXPECT_TRUE(opened->reused);
}

}  // namespace
}  // namespace sorun
