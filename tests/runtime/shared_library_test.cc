// SharedLibrary on a real kernel library: what DescribeSymbol reports, and that two threads opening the
// same file are ordered in a way ThreadSanitizer also understands (run by the tsan CI job: tag
// concurrency).
#include "runtime/shared_library.h"

#include <elf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "base/file_util.h"
#include "gtest/gtest.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

const char kKernels[] = "testdata/kernels/libabi_test_kernels.so";

// A private copy of the kernel library: dlopen knows a file by path and inode, so the first Open of
// the copy is the one that makes ld.so create its link map.
std::string FreshCopyOfKernels(const std::string& name) {
  auto bytes = ReadFileToString(testing::Runfile(kKernels));
  if (!bytes.ok()) return "";
  const std::string path = testing::MakeTempDir("shared_library") + "/" + name;
  if (!WriteFileBytes(path, *bytes).ok()) return "";
  return path;
}

TEST(SharedLibraryTest, DescribeSymbolFindsAFunctionInTheLibrarysCode) {
  const std::string path = FreshCopyOfKernels("describe.so");
  ASSERT_FALSE(path.empty());
  auto lib = SharedLibrary::Open(path);
  ASSERT_TRUE(lib.ok()) << lib.status().ToString();
  SharedLibrary::SymbolInfo add_one = (*lib)->DescribeSymbol("add_one");
  EXPECT_NE(add_one.address, nullptr);
  EXPECT_TRUE(add_one.defined_here);
  EXPECT_TRUE(add_one.in_code);
  EXPECT_TRUE(add_one.has_entry);
  EXPECT_EQ(add_one.type, STT_FUNC);
  EXPECT_EQ(add_one.defined_in, path);

  SharedLibrary::SymbolInfo from_libc = (*lib)->DescribeSymbol("malloc");
  EXPECT_NE(from_libc.address, nullptr);
  EXPECT_FALSE(from_libc.defined_here);
  EXPECT_FALSE(from_libc.in_code);
  EXPECT_EQ((*lib)->DescribeSymbol("no_such_symbol_anywhere").address, nullptr);

  auto again = SharedLibrary::Open(path);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->handle(), (*lib)->handle());
}

// One thread opens a fresh library (ld.so allocates and fills its link map); a second thread, ordered
// after it only by raw system calls TSan does not see (as ld.so's own lock is), opens the same file
// and reads the link map through DescribeSymbol. Under TSan that read was reported as racing with the
// first thread's dlopen (a flaky report in ZooConcurrencyTest.ConcurrentLoadsOfDifferentFiles) until
// sorun held one lock of its own around dlopen and dlclose. Without TSan it checks that both opens
// share one handle and see the same symbol.
TEST(SharedLibraryTest, SecondOpenOfAFileIsOrderedAfterTheFirstForTsan) {
  const std::string path = FreshCopyOfKernels("ordered.so");
  ASSERT_FALSE(path.empty());
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  ObjectPtr<SharedLibrary> first;
  ObjectPtr<SharedLibrary> second;
  SharedLibrary::SymbolInfo seen;
  std::thread opener([&] {
    auto lib = SharedLibrary::Open(path);
    if (lib.ok()) first = *lib;
    const char done = 1;
    syscall(SYS_write, pipe_fds[1], &done, 1);
  });
  std::thread reader([&] {
    char done = 0;
    if (syscall(SYS_read, pipe_fds[0], &done, 1) != 1) return;
    auto lib = SharedLibrary::Open(path);
    if (!lib.ok()) return;
    second = *lib;
    seen = second->DescribeSymbol("add_one");
  });
  opener.join();
  reader.join();
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  ASSERT_NE(first.get(), nullptr);
  ASSERT_NE(second.get(), nullptr);
  EXPECT_EQ(first->handle(), second->handle());
  EXPECT_TRUE(seen.defined_here);
  EXPECT_TRUE(seen.in_code);
}

}  // namespace
}  // namespace sorun
