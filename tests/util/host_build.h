// Tests on a machine of another architecture (docs/embedded.md, "Tests under emulation"): the checked-in
// TVM exports are compiled code for one architecture, and under --config=aarch64 every test runs under
// qemu-aarch64. These helpers pick the build of a fixture for this machine, say why a compiled file cannot
// run here, and say whether the test runs under an emulator. Test-only; stateless, so thread-safe.
#ifndef SORUN_TESTS_UTIL_HOST_BUILD_H_
#define SORUN_TESTS_UTIL_HOST_BUILD_H_

#include <string>

namespace sorun {
namespace testing {

// The workspace-relative path of the build of `workspace_relative` ("testdata/relax/mlp.so") for this
// machine: off x86-64, "<dir>/<machine>/<file>" ("testdata/relax/aarch64/mlp.so", written by
// testdata/relax/make_relax_fixtures.py --aarch64) when the test's data holds one; else the path given.
std::string HostBuild(const std::string& workspace_relative);

// Whether outputs of the build HostBuild(workspace_relative) picks are the recorded ones bit for bit:
// true where it is the file TVM ran to record them (x86-64), false for another architecture's build of the
// same model (other instructions, other rounding: compare within a tolerance).
bool RecordedBitForBit(const std::string& workspace_relative);

// Why the compiled file at `path` cannot be loaded on this machine, in the loader's words ("<path>: not a
// loadable shared library: built for x86_64, this machine is aarch64"), or "" when it can (or is no
// shared library at all: the test then reports what the loader says).
std::string ForeignBuildReason(const std::string& path);

// The emulator the test runs under (SORUN_TEST_EMULATOR, exported by toolchains/aarch64/qemu_run.sh:
// "qemu-aarch64"), or "" when it runs natively.
std::string TestEmulator();

// The shell words that start `program` (a program of this build) from a shell command: "<emulator>
// <program>" under an emulator (there is no binfmt_misc here to start it otherwise), else `program`.
std::string ShellCommandFor(const std::string& program);

}  // namespace testing
}  // namespace sorun

// Skips the test (GTEST_SKIP, with the reason) when the compiled file at `path` is for another
// architecture, e.g. the x86-64-only fixtures (TVM 0.16 exports, CUDA and OpenCL exports) under qemu.
#define SORUN_SKIP_IF_FOREIGN_BUILD(path)                                                                   \
  do {                                                                                                      \
    const std::string sorun_foreign_reason_ = ::sorun::testing::ForeignBuildReason(path);                   \
    if (!sorun_foreign_reason_.empty()) GTEST_SKIP() << sorun_foreign_reason_ << " (no build for it here)"; \
  } while (0)

// Skips the test when it runs under an emulator, naming the emulator and `why` (what emulation measures
// wrongly: resident memory of qemu's own translation cache, page residency).
#define SORUN_SKIP_UNDER_EMULATION(why)                                                         \
  do {                                                                                          \
    const std::string sorun_emulator_ = ::sorun::testing::TestEmulator();                       \
    if (!sorun_emulator_.empty()) GTEST_SKIP() << "under " << sorun_emulator_ << ": " << (why); \
  } while (0)

#endif  // SORUN_TESTS_UTIL_HOST_BUILD_H_
