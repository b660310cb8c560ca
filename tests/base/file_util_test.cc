// MappedFile and the whole-file helpers: contents, errors, and that releasing a mapping gives back
// whole pages in a way ThreadSanitizer also understands (run by the tsan CI job: tag concurrency).
#include "base/file_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

TEST(MappedFileTest, MapsTheWholeFileAndNamesMissingOnes) {
  const std::string path = testing::MakeTempDir("file_util") + "/data.bin";
  ASSERT_TRUE(WriteFileBytes(path, std::string("abc\0def", 7)).ok());
  auto file = MappedFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ((*file)->bytes(), std::string("abc\0def", 7));
  EXPECT_EQ((*file)->path(), path);

  auto missing = MappedFile::Open(path + ".missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(path + ".missing"), std::string::npos);
}

// A file whose length is not a page multiple, mapped and released by one thread; a second thread,
// ordered after it only by raw system calls TSan does not see (as ld.so's mapping of a library is),
// maps fresh memory at the same address and reads the tail of that page. Under TSan the read was
// reported as racing with the first thread's mmap until MappedFile unmapped whole pages (a flaky
// report in ZooConcurrencyTest.ConcurrentLoadsOfDifferentFiles). Without TSan it checks that the
// whole page is free again after the last reference goes.
TEST(MappedFileTest, ReleaseGivesBackWholePagesTsanCanSee) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t length = page - page / 4 + 128;  // 3200 of a 4 KiB page: not a multiple of 1 KiB either
  const std::string path = testing::MakeTempDir("file_util") + "/tail.bin";
  ASSERT_TRUE(WriteFileBytes(path, std::string(length, 'x')).ok());

  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  bool mapped = false;
  std::thread unmapper([&] {
    uintptr_t addr = 0;
    {
      auto file = MappedFile::Open(path);
      if (file.ok()) addr = reinterpret_cast<uintptr_t>((*file)->data());
    }
    syscall(SYS_write, pipe_fds[1], &addr, sizeof addr);
  });
  std::thread reader([&] {
    uintptr_t addr = 0;
    if (syscall(SYS_read, pipe_fds[0], &addr, sizeof addr) != static_cast<long>(sizeof addr) || addr == 0) return;
    long fresh =
        syscall(SYS_mmap, addr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (fresh != static_cast<long>(addr)) return;
    volatile uint8_t tail = reinterpret_cast<const uint8_t*>(addr)[length - 8];
    EXPECT_EQ(tail, 0);
    mapped = true;
    syscall(SYS_munmap, addr, page);
  });
  unmapper.join();
  reader.join();
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  EXPECT_TRUE(mapped) << "the released page was not free for a fresh mapping";
}

}  // namespace
}  // namespace sorun
