// Helpers of the public-API tests (tests/api): zoo model paths through runfiles, .npy files as
// sorun::NDArray, and output comparison against the zoo's expected values.
#ifndef SORUN_TESTS_API_API_TEST_UTIL_H_
#define SORUN_TESTS_API_API_TEST_UTIL_H_

#include <string>

#include "api/sorun.h"

namespace sorun {
namespace testing {

// Absolute path of testdata/models/<file> (in the test's `data`).
std::string ZooFile(const std::string& file);
// The .npy file at `path` as a CPU NDArray (a test failure, and an undefined array, if it cannot be read).
NDArray ReadNpyArray(const std::string& path);
// The same for testdata/models/<file>.
NDArray ReadZooNpy(const std::string& file);
// The bytes of testdata/models/<file>.
std::string ReadZooBytes(const std::string& file);
// max |actual - expected| / max(1, |expected|) over two float32 CPU arrays; infinity when their
// shapes or dtypes differ.
double MaxRelativeError(const NDArray& actual, const NDArray& expected);
// The zoo's tolerance (float32 kernels against the double-precision reference).
inline constexpr double kZooTolerance = 1e-4;

}  // namespace testing
}  // namespace sorun

#endif  // SORUN_TESTS_API_API_TEST_UTIL_H_
