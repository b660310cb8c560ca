// TarWriter: ustar header fields, reproducible bytes, long names through the prefix field, the names,
// modes and duplicates it refuses, and archives the system tar tool lists and extracts. Reading is
// tested with the reader (tests/format/tar_archive_test.cc).
#include "packer/tar_writer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>

#include "format/tar_archive.h"
#include "tests/format/tar_test_util.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using namespace ::sorun::tar_test;  // NOLINT: the tar test vocabulary

TEST(TarWriterTest, HeaderFieldsAreUstarAndReproducible) {
  TarWriter w;
  ASSERT_TRUE(w.AddFile("lib0.o", "hello", 0644).ok());
  EXPECT_EQ(w.num_entries(), 1u);
  const std::string a = w.Finish();
  EXPECT_EQ(w.num_entries(), 0u);
  ASSERT_TRUE(w.AddFile("lib0.o", "hello", 0644).ok());  // Finish() reset the writer
  EXPECT_EQ(w.Finish(), a);                              // same inputs, same bytes
  ASSERT_EQ(a.size(), 512u * 4);
  EXPECT_EQ(a.substr(0, 7), std::string("lib0.o\0", 7));
  EXPECT_EQ(a.substr(100, 8), std::string("0000644\0", 8));
  EXPECT_EQ(a.substr(124, 12), std::string("00000000005\0", 12));
  EXPECT_EQ(a.substr(136, 12), std::string("00000000000\0", 12));  // mtime 0
  EXPECT_EQ(a[156], '0');
  EXPECT_EQ(a.substr(257, 8), std::string("ustar\0"
                                          "00",
                                          8));
  EXPECT_EQ(a.substr(512, 5), "hello");
  // Checksum: six octal digits, NUL, space; the unsigned sum with the field as spaces.
  std::string h = a.substr(0, 512);
  const std::string stored = h.substr(148, 8);
  Resum(&h);
  EXPECT_EQ(h.substr(148, 8), stored);
  EXPECT_EQ(stored[6], '\0');
  EXPECT_EQ(stored[7], ' ');
}

TEST(TarWriterTest, LongNamesUseThePrefixField) {
  TarWriter w;
  ASSERT_TRUE(w.AddFile(kLongName, "x").ok());
  const std::string a = w.Finish();
  EXPECT_EQ(a.substr(0, 80), kLongFile);
  EXPECT_EQ(a.substr(345, 60), kLongDir);
  // The longest possible: 155-byte prefix + '/' + 100-byte name.
  const std::string longest = std::string(155, 'p') + "/" + std::string(100, 'n');
  ASSERT_TRUE(w.AddFile(longest, "y").ok());
  std::string b = w.Finish();
  std::unique_ptr<uint8_t[]> keep;
  auto entries = Read(b, &keep);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  EXPECT_EQ((*entries)[0].name, longest);
}

TEST(TarWriterTest, WriterRejectsBadNamesModesAndDuplicates) {
  TarWriter w;
  EXPECT_ERROR(w.AddFile("", "x"), StatusCode::kInvalidArgument, "empty");
  EXPECT_ERROR(w.AddFile("../evil.o", "x"), StatusCode::kInvalidArgument, "'../evil.o'", "path traversal");
  EXPECT_ERROR(w.AddFile("a/../../evil.o", "x"), StatusCode::kInvalidArgument, "'..'");
  EXPECT_ERROR(w.AddFile("/etc/passwd", "x"), StatusCode::kInvalidArgument, "absolute path");
  EXPECT_ERROR(w.AddFile("a//b.o", "x"), StatusCode::kInvalidArgument, "not normalised");
  EXPECT_ERROR(w.AddFile("./a.o", "x"), StatusCode::kInvalidArgument, "not normalised");
  EXPECT_ERROR(w.AddFile("dir/", "x"), StatusCode::kInvalidArgument, "not normalised");
  EXPECT_ERROR(w.AddFile(std::string("a\0b", 3), "x"), StatusCode::kInvalidArgument, "NUL");
  EXPECT_ERROR(w.AddFile(std::string(256, 'a'), "x"), StatusCode::kInvalidArgument, "256 bytes");
  EXPECT_ERROR(w.AddFile(std::string(101, 'a'), "x"), StatusCode::kInvalidArgument, "cannot be split");
  EXPECT_ERROR(w.AddFile(std::string(160, 'p') + "/" + std::string(50, 'n'), "x"), StatusCode::kInvalidArgument,
               "cannot be split");
  EXPECT_ERROR(w.AddFile("a.o", "x", 010000), StatusCode::kInvalidArgument, "mode");
  ASSERT_TRUE(w.AddFile("a.o", "x").ok());
  EXPECT_ERROR(w.AddFile("a.o", "y"), StatusCode::kInvalidArgument, "already in the archive");
  EXPECT_EQ(w.num_entries(), 1u);
  // Failed calls left the archive alone.
  std::string a = w.Finish();
  EXPECT_EQ(a.size(), 512u * 4);
}

TEST(TarWriterTest, SystemTarListsAndExtractsOurArchives) {
  if (!HaveTar()) GTEST_SKIP() << "no tar tool on PATH";
  const std::string dir = testing::MakeTempDir("tar");
  TarWriter w;
  for (const auto& f : SampleFiles()) ASSERT_TRUE(w.AddFile(f.first, f.second).ok());
  ASSERT_TRUE(w.WriteToFile(dir + "/ours.tar").ok());
  int rc = 0;
  std::string listing = RunOutput("tar -tf '" + dir + "/ours.tar' 2>&1", &rc);
  ASSERT_EQ(rc, 0) << listing;
  std::string expected;
  for (const auto& f : SampleFiles()) expected += f.first + "\n";
  EXPECT_EQ(listing, expected);
  // Verbose listing shows the reproducible metadata.
  std::string verbose = RunOutput("tar --numeric-owner -tvf '" + dir + "/ours.tar' 2>&1", &rc);
  ASSERT_EQ(rc, 0) << verbose;
  EXPECT_TRUE(testing::Contains(verbose, "-rw-r--r-- 0/0")) << verbose;
  EXPECT_TRUE(testing::Contains(verbose, "1970-01-01")) << verbose;
  const std::string out = dir + "/out";
  ASSERT_EQ(mkdir(out.c_str(), 0755), 0);
  std::string log = RunOutput("tar -xf '" + dir + "/ours.tar' -C '" + out + "' 2>&1", &rc);
  ASSERT_EQ(rc, 0) << log;
  for (const auto& f : SampleFiles()) EXPECT_EQ(testing::ReadFileOrDie(out + "/" + f.first), f.second) << f.first;
}

}  // namespace
}  // namespace sorun
