// Helpers shared by the OpenCL tests: a sandbox-friendly environment (PoCL's kernel cache and sorun's
// program cache under TEST_TMPDIR), the backend registration, payload builders and host <-> device
// tensor helpers. Tests call SORUN_REQUIRE_OPENCL() first; it skips when there is no OpenCL device.
#ifndef SORUN_TESTS_OPENCL_OPENCL_TEST_UTIL_H_
#define SORUN_TESTS_OPENCL_OPENCL_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/device_module_payload.h"
#include "runtime/tensor.h"

namespace sorun {
namespace testing {

// Sets POCL_CACHE_DIR and SORUN_OPENCL_CACHE_DIR (unless already set) to directories under
// TEST_TMPDIR and registers the OpenCL backend. Idempotent; call before any OpenCL use.
void SetUpOpenclTestEnvironment();
// Number of OpenCL devices after SetUpOpenclTestEnvironment(); `why` gets the reason when 0.
int OpenclDeviceCount(std::string* why);

// Skips the current test when the machine has no OpenCL device.
#define SORUN_REQUIRE_OPENCL()                                   \
  do {                                                           \
    std::string sorun_why_;                                      \
    if (::sorun::testing::OpenclDeviceCount(&sorun_why_) == 0) { \
      GTEST_SKIP() << "no OpenCL platform: " << sorun_why_;      \
    }                                                            \
  } while (0)

// FunctionInfo from dtype strings ("handle", "int32", "float32") and launch tags.
FunctionInfo MakeFunctionInfo(const std::vector<std::string>& arg_types, const std::vector<std::string>& tags);

// A float32 tensor on opencl:`device_id` holding `values`.
Tensor DeviceFloats(const std::vector<float>& values, int device_id = 0);
// A float32 tensor of `n` elements on opencl:`device_id`, every byte zero.
Tensor DeviceZeros(int64_t n, int device_id = 0);
// The float32 contents of a device tensor (blocking read).
std::vector<float> HostFloats(const Tensor& device_tensor);

}  // namespace testing
}  // namespace sorun

#endif  // SORUN_TESTS_OPENCL_OPENCL_TEST_UTIL_H_
