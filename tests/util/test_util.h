// Helpers shared by sorun's tests: runfile paths, temporary directories, file I/O.
#ifndef SORUN_TESTS_UTIL_TEST_UTIL_H_
#define SORUN_TESTS_UTIL_TEST_UTIL_H_

#include <string>

namespace sorun {
namespace testing {

// Absolute path of a file from the test's `data` (workspace-relative, e.g. "testdata/kernels/x.so").
std::string Runfile(const std::string& workspace_relative);
// A fresh empty directory under TEST_TMPDIR (or /tmp), unique per call.
std::string MakeTempDir(const std::string& prefix = "sorun_test");
std::string ReadFileOrDie(const std::string& path);
void WriteFileOrDie(const std::string& path, const std::string& bytes);
bool FileExists(const std::string& path);
// "-I<dir>" for compiling the test kernels (testdata/kernels/*.c): they include
// "runtime/c_runtime_api.h" relative to the workspace root. Needs //runtime:c_runtime_api.h in `data`.
std::string KernelIncludeFlag();
// Resident KiB of the mapping that contains `address` (/proc/self/smaps), or -1 when no mapping does.
long ResidentKibOfMappingAt(const void* address);

}  // namespace testing
}  // namespace sorun

#endif  // SORUN_TESTS_UTIL_TEST_UTIL_H_
