// The OpenCL backend where the ICD loader is installed but no platform loads (its one ICD names a
// library that is not there: an arm64 loader beside an x86-64 PoCL, a driver removed): discovery says
// so, and a tensor that claims to be on opencl:0 is refused naming the device before any OpenCL call
// reads its handle (the loader would call through it). Its own binary: OCL_ICD_VENDORS must be set
// before the loader's first call in the process.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "backends/opencl/opencl_devices.h"
#include "runtime/data_type.h"
#include "runtime/device_api.h"
#include "tests/opencl/opencl_test_util.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

// An ICD directory whose one entry names a library that does not exist.
void PointTheLoaderAtAMissingIcd() {
  static const bool done = [] {
    const std::string dir = testing::MakeTempDir("missing_icd");
    std::ofstream(dir + "/missing.icd") << "libsorun_no_such_icd.so.1\n";
    ::setenv("OCL_ICD_VENDORS", dir.c_str(), 1);
    return true;
  }();
  (void)done;
}

DLTensor HostBytesClaimingOpencl(std::vector<float>* host, int64_t* shape) {
  DLTensor t{};
  t.data = host->data();
  t.device = DLDevice{kDLOpenCL, 0};
  t.ndim = 1;
  t.dtype = Float32();
  t.shape = shape;
  return t;
}

TEST(OpenclNoPlatformTest, DiscoverySaysNoPlatform) {
  PointTheLoaderAtAMissingIcd();
  std::string why;
  EXPECT_EQ(testing::OpenclDeviceCount(&why), 0);
  EXPECT_NE(why.find("no OpenCL platform"), std::string::npos) << why;
}

TEST(OpenclNoPlatformTest, CopiesNameTheAbsentDeviceBeforeReadingAHandle) {
  PointTheLoaderAtAMissingIcd();
  testing::SetUpOpenclTestEnvironment();
  auto api = GetDeviceApi(kDLOpenCL);
  ASSERT_TRUE(api.ok()) << api.status().ToString();
  std::vector<float> a(4, 1.0f), b(4, 0.0f);
  int64_t shape[1] = {4};
  DLTensor claimed = HostBytesClaimingOpencl(&a, shape);  // a host pointer, not a cl_mem
  DLTensor host{};
  host.data = b.data();
  host.device = DLDevice{kDLCPU, 0};
  host.ndim = 1;
  host.dtype = Float32();
  host.shape = shape;
  EXPECT_ERROR((*api)->Copy(claimed, host, nullptr), StatusCode::kUnavailable, "opencl:0 does not exist",
               "no OpenCL platform");
  EXPECT_ERROR((*api)->Copy(host, claimed, nullptr), StatusCode::kUnavailable, "opencl:0 does not exist");
  EXPECT_ERROR((*api)->Copy(claimed, claimed, nullptr), StatusCode::kUnavailable, "opencl:0 does not exist");
  EXPECT_EQ(b, std::vector<float>(4, 0.0f));
}

}  // namespace
}  // namespace sorun
