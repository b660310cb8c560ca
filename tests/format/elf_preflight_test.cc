// The ELF pre-dlopen check's architecture handling (format/elf_preflight.h): ElfMachineName's names and
// the refusal of a real library built for the other 64-bit architecture (testdata/elf/foreign), which
// must name both architectures. Runs natively on x86-64 and under qemu-aarch64 (--config=aarch64).
#include "format/elf_preflight.h"

#include <elf.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/util/test_util.h"

namespace sorun {
namespace {

TEST(ElfMachineNameTest, NamesTheArchitecturesSorunMeets) {
  EXPECT_EQ(ElfMachineName(EM_X86_64), "x86_64");
  EXPECT_EQ(ElfMachineName(EM_AARCH64), "aarch64");
  EXPECT_EQ(ElfMachineName(EM_RISCV), "riscv");
  EXPECT_EQ(ElfMachineName(EM_ARM), "arm");
  EXPECT_EQ(ElfMachineName(EM_386), "x86");
  EXPECT_EQ(ElfMachineName(4242), "ELF machine 4242");
}

#if defined(__x86_64__) || defined(__aarch64__)
#if defined(__x86_64__)
constexpr const char* kForeign = "testdata/elf/foreign/answer_aarch64.so";
constexpr const char* kNative = "testdata/elf/foreign/answer_x86_64.so";
constexpr const char* kRefusal = "built for aarch64, this machine is x86_64";
#else
constexpr const char* kForeign = "testdata/elf/foreign/answer_x86_64.so";
constexpr const char* kNative = "testdata/elf/foreign/answer_aarch64.so";
constexpr const char* kRefusal = "built for x86_64, this machine is aarch64";
#endif

TEST(ElfPreflightTest, RefusesALibraryOfTheOtherArchitectureNamingBoth) {
  const std::string path = testing::Runfile(kForeign);
  Status s = PreflightSharedLibrary(path);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find(path + ": not a loadable shared library: " + kRefusal), std::string::npos)
      << s.ToString();
}

TEST(ElfPreflightTest, AcceptsTheSameLibraryBuiltForThisMachine) {
  Status s = PreflightSharedLibrary(testing::Runfile(kNative));
  EXPECT_TRUE(s.ok()) << s.ToString();
}
#endif

}  // namespace
}  // namespace sorun
