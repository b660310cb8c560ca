#include "format/tar_archive.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "packer/tar_writer.h"
#include "tests/format/tar_test_util.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using ::sorun::testing::FileExists;
using ::sorun::testing::MakeTempDir;
using ::sorun::testing::ReadFileOrDie;
using ::sorun::testing::WriteFileOrDie;

using ::sorun::testing::Contains;

using namespace ::sorun::tar_test;  // NOLINT: the tar test vocabulary

TEST(TarArchiveTest, RoundTripsFilesOfEverySizeAndName) {
  const std::string archive = SampleArchive();
  std::unique_ptr<uint8_t[]> keep;
  auto entries = Read(archive, &keep);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  const auto files = SampleFiles();
  ASSERT_EQ(entries->size(), files.size());
  uint64_t expected_offset = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const TarEntry& e = (*entries)[i];
    SCOPED_TRACE(e.name);
    EXPECT_EQ(e.name, files[i].first);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(e.data), e.size), files[i].second);
    EXPECT_EQ(e.mode, files[i].first == "one.o" ? 0755u : 0644u);
    EXPECT_EQ(e.mtime, 0u);
    EXPECT_EQ(e.header_offset, expected_offset);
    EXPECT_EQ(e.data_offset, expected_offset + 512);
    EXPECT_EQ(e.data, keep.get() + e.data_offset);
    expected_offset += 512 + (e.size + 511) / 512 * 512;
  }
  EXPECT_EQ(archive.size(), expected_offset + 1024);  // two zero blocks
  EXPECT_EQ(archive.substr(expected_offset), End());
}

TEST(TarArchiveTest, WriteToFileAndExtract) {
  const std::string dir = MakeTempDir("tar");
  TarWriter w;
  for (const auto& f : SampleFiles()) ASSERT_TRUE(w.AddFile(f.first, f.second, 0640).ok());
  ASSERT_TRUE(w.WriteToFile(dir + "/out.tar").ok());
  const std::string archive = ReadFileOrDie(dir + "/out.tar");
  ASSERT_EQ(archive.size(), SampleArchive().size());
  const std::string out = dir + "/extracted";
  ASSERT_EQ(mkdir(out.c_str(), 0755), 0);
  Status s = ExtractTarArchive(Bytes(archive), archive.size(), "out.tar", out);
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (const auto& f : SampleFiles()) {
    SCOPED_TRACE(f.first);
    EXPECT_EQ(ReadFileOrDie(out + "/" + f.first), f.second);
    struct stat st;
    ASSERT_EQ(stat((out + "/" + f.first).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0600, 0600u);
    EXPECT_EQ(st.st_mode & 0007, 0u);
  }
  // Extracting again replaces the files.
  EXPECT_TRUE(ExtractTarArchive(Bytes(archive), archive.size(), "out.tar", out).ok());
  EXPECT_ERROR(w.WriteToFile(dir + "/no/such/dir/x.tar"), StatusCode::kFailedPrecondition, "no/such/dir/x.tar");
}

TEST(TarArchiveTest, ExtractionRefusesSymlinksAndMissingDirectories) {
  const std::string dir = MakeTempDir("tar");
  TarWriter w;
  ASSERT_TRUE(w.AddFile("sub/a.o", "payload").ok());
  ASSERT_TRUE(w.AddFile("b.o", "payload").ok());
  const std::string archive = w.Finish();
  EXPECT_ERROR(ExtractTarArchive(Bytes(archive), archive.size(), "x.tar", dir + "/missing"), StatusCode::kNotFound,
               "missing");
  WriteFileOrDie(dir + "/file", "");
  EXPECT_ERROR(ExtractTarArchive(Bytes(archive), archive.size(), "x.tar", dir + "/file"),
               StatusCode::kFailedPrecondition, "not a directory");
  // A symbolic link on the way (directory component) or at the file itself is never followed.
  const std::string out = dir + "/out";
  const std::string victim = dir + "/victim";
  ASSERT_EQ(mkdir(out.c_str(), 0755), 0);
  ASSERT_EQ(mkdir(victim.c_str(), 0755), 0);
  ASSERT_EQ(symlink(victim.c_str(), (out + "/sub").c_str()), 0);
  EXPECT_ERROR(ExtractTarArchive(Bytes(archive), archive.size(), "x.tar", out), StatusCode::kFailedPrecondition,
               "symbolic link");
  EXPECT_FALSE(FileExists(victim + "/a.o"));
  ASSERT_EQ(unlink((out + "/sub").c_str()), 0);
  ASSERT_EQ(symlink((victim + "/b.o").c_str(), (out + "/b.o").c_str()), 0);
  EXPECT_ERROR(ExtractTarArchive(Bytes(archive), archive.size(), "x.tar", out), StatusCode::kFailedPrecondition,
               "symbolic link");
  EXPECT_FALSE(FileExists(victim + "/b.o"));
  // Nothing is written from an invalid archive.
  const std::string bad = archive.substr(0, 512 + 511);
  const std::string clean = dir + "/clean";
  ASSERT_EQ(mkdir(clean.c_str(), 0755), 0);
  EXPECT_FALSE(ExtractTarArchive(Bytes(bad), bad.size(), "x.tar", clean).ok());
  EXPECT_FALSE(FileExists(clean + "/sub"));
}

// ---------------------------------------------------------------------------------------------------
// Compatibility with the system tar tool.

TEST(TarArchiveTest, ReadsArchivesMadeBySystemTarInEveryFormat) {
  if (!HaveTar()) GTEST_SKIP() << "no tar tool on PATH";
  const std::string dir = MakeTempDir("tar");
  const std::string src = dir + "/src";
  ASSERT_EQ(mkdir(src.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((src + "/lib").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((src + "/lib/nested").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((src + "/" + kLongDir).c_str(), 0755), 0);
  // A name longer than 255 bytes only fits GNU long names and pax.
  const std::string very_long_dir = src + "/" + kLongDir + "/" + std::string(120, 'e');
  ASSERT_EQ(mkdir(very_long_dir.c_str(), 0755), 0);
  const std::string very_long = kLongDir + "/" + std::string(120, 'e') + "/" + std::string(90, 'g');
  std::vector<std::pair<std::string, std::string>> files = {
      {"a.o", RandomBytes(1000, 7)}, {"lib/nested/b.o", ""}, {"lib/c.o", RandomBytes(4096, 8)}, {kLongName, "long"}};
  for (const auto& f : files) WriteFileOrDie(src + "/" + f.first, f.second);
  WriteFileOrDie(src + "/" + very_long, "very long");

  for (const std::string format : {"gnu", "ustar", "posix", "oldgnu"}) {
    SCOPED_TRACE(format);
    const std::string tar = dir + "/" + format + ".tar";
    // ustar cannot hold the 276-byte name (nor its 181-byte directory); leave them out there.
    const std::string exclude = format == "ustar" ? " --exclude='" + std::string(120, 'e') + "'" : "";
    int rc = 0;
    std::string log = RunOutput("tar --format=" + format + exclude + " -cf '" + tar + "' -C '" + src + "' . 2>&1", &rc);
    ASSERT_EQ(rc, 0) << log;
    const std::string archive = ReadFileOrDie(tar);
    std::unique_ptr<uint8_t[]> keep;
    auto entries = Read(archive, &keep, format + ".tar");
    ASSERT_TRUE(entries.ok()) << entries.status().ToString();
    std::set<std::string> names;
    for (const TarEntry& e : *entries) {
      names.insert(e.name);
      struct stat st;
      ASSERT_EQ(stat((src + "/" + e.name).c_str(), &st), 0) << e.name;
      EXPECT_EQ(e.mode, st.st_mode & 07777) << e.name;
      EXPECT_EQ(e.mtime, static_cast<uint64_t>(st.st_mtime)) << e.name;
    }
    std::set<std::string> expected;
    for (const auto& f : files) expected.insert(f.first);
    if (exclude.empty()) expected.insert(very_long);
    EXPECT_EQ(names, expected);
    for (const TarEntry& e : *entries) {
      std::string contents(reinterpret_cast<const char*>(e.data), e.size);
      if (e.name == very_long) {
        EXPECT_EQ(contents, "very long");
        continue;
      }
      for (const auto& f : files) {
        if (f.first == e.name) {
          EXPECT_EQ(contents, f.second) << e.name;
        }
      }
    }
  }
}

TEST(TarArchiveTest, SystemTarSymlinksAreRejected) {
  if (!HaveTar()) GTEST_SKIP() << "no tar tool on PATH";
  const std::string dir = MakeTempDir("tar");
  const std::string src = dir + "/src";
  ASSERT_EQ(mkdir(src.c_str(), 0755), 0);
  WriteFileOrDie(src + "/a.o", "a");
  ASSERT_EQ(symlink("/etc/passwd", (src + "/link").c_str()), 0);
  int rc = 0;
  std::string log = RunOutput("tar -cf '" + dir + "/l.tar' -C '" + src + "' a.o link 2>&1", &rc);
  ASSERT_EQ(rc, 0) << log;
  EXPECT_ERROR(ReadStatus(ReadFileOrDie(dir + "/l.tar"), "l.tar"), StatusCode::kUnimplemented, "l.tar byte 1024",
               "entry 1 ('link')", "symbolic link");
}

// ---------------------------------------------------------------------------------------------------
// Hand-made and malformed archives.

TEST(TarArchiveTest, ReadsHandMadeEntriesAndSkipsDirectories) {
  std::string a = Entry({"dir/", 0, '5'}, "") + Entry({"./dir/x.o", 3, '0'}, "abc") + Entry({"y.o", 2, '\0'}, "yy") +
                  Entry({"z.o", 1, '7'}, "z") + End();
  std::unique_ptr<uint8_t[]> keep;
  auto entries = Read(a, &keep);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].name, "dir/x.o");  // normalised
  EXPECT_EQ((*entries)[1].name, "y.o");      // old-style regular file type '\0'
  EXPECT_EQ((*entries)[2].name, "z.o");      // contiguous file
  HeaderSpec gnu{"g.o", 1};
  gnu.magic = std::string("ustar  \0", 8);
  gnu.prefix = "ignored";  // GNU headers keep other fields there
  entries = Read(Entry(gnu, "g") + End(), &keep);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  EXPECT_EQ((*entries)[0].name, "g.o");
}

TEST(TarArchiveTest, EmptyArchiveHasNoEntries) {
  std::unique_ptr<uint8_t[]> keep;
  auto entries = Read(End(), &keep);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  EXPECT_TRUE(entries->empty());
  TarWriter w;
  const std::string a = w.Finish();
  EXPECT_EQ(a, End());
}

TEST(TarArchiveTest, TruncatedArchives) {
  EXPECT_ERROR(ReadStatus(""), StatusCode::kDataLoss, "test.tar byte 0", "without the end-of-archive");
  EXPECT_ERROR(ReadStatus(std::string(100, '\0')), StatusCode::kDataLoss, "test.tar byte 0",
               "header block needs 512 bytes but only 100 remain");
  const std::string a = Entry({"a.o", 600}, std::string(600, 'a'));
  EXPECT_ERROR(ReadStatus(a), StatusCode::kDataLoss, "test.tar byte 1536", "without the end-of-archive");
  EXPECT_ERROR(ReadStatus(a.substr(0, 1000)), StatusCode::kDataLoss, "test.tar byte 124", "entry 0 ('a.o')",
               "600 bytes of contents", "488 bytes left");
  // Every proper prefix of a valid archive is an error, except those that keep the first zero block.
  const std::string archive = SampleArchive();
  for (size_t n = 0; n + 1024 <= archive.size(); n += (n % 512 == 0 ? 1 : 97)) {
    Status s = ReadStatus(archive.substr(0, n));
    ASSERT_FALSE(s.ok()) << n;
    ASSERT_EQ(s.code(), StatusCode::kDataLoss) << s.ToString();
    ASSERT_TRUE(Contains(s.message(), "test.tar byte ")) << s.message();
  }
  // A lone zero block at the very end is accepted.
  EXPECT_TRUE(ReadStatus(archive.substr(0, archive.size() - 512)).ok());
  EXPECT_ERROR(ReadStatus(archive.substr(0, archive.size() - 100)), StatusCode::kDataLoss, "partial block");
}

TEST(TarArchiveTest, DataAfterALoneZeroBlockIsRejected) {
  const std::string a = Entry({"a.o", 1}, "a") + std::string(512, '\0') + Entry({"b.o", 1}, "b") + End();
  EXPECT_ERROR(ReadStatus(a), StatusCode::kDataLoss, "test.tar byte 1536", "zero block at byte 1024");
  // Trailing zero padding (tar pads to 10 KiB records) is fine.
  EXPECT_TRUE(ReadStatus(Entry({"a.o", 1}, "a") + std::string(10240, '\0')).ok());
}

TEST(TarArchiveTest, ChecksumMismatch) {
  std::string a = Entry({"a.o", 1}, "a") + End();
  a[3] = 'X';  // corrupt the name after the checksum was computed
  EXPECT_ERROR(ReadStatus(a), StatusCode::kDataLoss, "test.tar byte 148", "checksum mismatch", "stored ");
  std::string b = Entry({"a.o", 1}, "a") + End();
  b.replace(148, 8, "12x4567 ");
  EXPECT_ERROR(ReadStatus(b), StatusCode::kDataLoss, "test.tar byte 150", "invalid octal digit in checksum field");
  EXPECT_ERROR(ReadStatus(std::string(512, 'A') + End()), StatusCode::kDataLoss, "test.tar byte 148", "checksum");
  // Signed-char checksums from historical writers are accepted.
  std::string c = Entry({"\xe9t\xe9.o", 1}, "a") + End();
  int signed_sum = 0;
  c.replace(148, 8, "        ");
  for (int i = 0; i < 512; ++i) signed_sum += static_cast<signed char>(c[i]);
  char field[8];
  std::snprintf(field, sizeof(field), "%06o", signed_sum);
  c.replace(148, 7, std::string(field, 7));
  EXPECT_TRUE(ReadStatus(c).ok());
}

TEST(TarArchiveTest, BadMagic) {
  HeaderSpec spec{"a.o", 1};
  spec.magic = std::string("\0\0\0\0\0\0\0\0", 8);  // a pre-POSIX v7 header
  EXPECT_ERROR(ReadStatus(Entry(spec, "a") + End()), StatusCode::kDataLoss, "test.tar byte 257", "not a ustar header");
}

TEST(TarArchiveTest, BadNumericFields) {
  HeaderSpec spec{"a.o", 1};
  spec.size_field = std::string("0000000001x\0", 12);
  EXPECT_ERROR(ReadStatus(Entry(spec, "a") + End()), StatusCode::kDataLoss, "test.tar byte 134", "entry 0 ('a.o')",
               "invalid octal digit in size field", "\"0000000001x\\x00\"");
  spec.size_field = std::string("\0\0\0\0\0\0\0\0\0\0\0\0", 12);
  EXPECT_ERROR(ReadStatus(Entry(spec, "a") + End()), StatusCode::kDataLoss, "test.tar byte 124",
               "no octal digits in size field");
  spec.size_field = std::string("00000000009\0", 12);
  EXPECT_ERROR(ReadStatus(Entry(spec, "a") + End()), StatusCode::kDataLoss, "invalid octal digit in size field");
  spec.size_field = "777777777777";  // 64 GiB: far past the end
  EXPECT_ERROR(ReadStatus(Entry(spec, "a") + End()), StatusCode::kDataLoss, "test.tar byte 124", "68719476735 bytes");
  spec.size_field = std::string("   1 \0\0\0\0\0\0\0", 12);  // leading spaces are fine
  EXPECT_TRUE(ReadStatus(Entry(spec, "a") + End()).ok());
  HeaderSpec mode{"a.o", 1};
  mode.mode_field = std::string("06-4\0\0\0\0", 8);
  EXPECT_ERROR(ReadStatus(Entry(mode, "a") + End()), StatusCode::kDataLoss, "test.tar byte 102", "mode field");
}

TEST(TarArchiveTest, Base256Sizes) {
  HeaderSpec spec{"a.o", 0};
  spec.size_field = std::string("\x80\0\0\0\0\0\0\0\0\0\0\x05", 12);
  std::unique_ptr<uint8_t[]> keep;
  auto entries = Read(Entry(spec, "hello") + End(), &keep);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  EXPECT_EQ((*entries)[0].size, 5u);
  spec.size_field = std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xfb", 12);
  EXPECT_ERROR(ReadStatus(Entry(spec, "hello") + End()), StatusCode::kDataLoss, "test.tar byte 124",
               "negative base-256");
  spec.size_field = std::string("\x80\0\0\x01\0\0\0\0\0\0\0\0", 12);
  EXPECT_ERROR(ReadStatus(Entry(spec, "hello") + End()), StatusCode::kDataLoss, "exceeds 64 bits");
  spec.size_field = std::string("\x80\0\0\0\xff\xff\xff\xff\xff\xff\xff\xff", 12);
  EXPECT_ERROR(ReadStatus(Entry(spec, "hello") + End()), StatusCode::kDataLoss, "18446744073709551615 bytes");
}

TEST(TarArchiveTest, PathTraversalAndAbsoluteNames) {
  for (const std::string name : {"../evil.o", "a/../../evil.o", "..", "ok/..", "./../x.o"}) {
    EXPECT_ERROR(ReadStatus(Entry({"a.o", 1}, "a") + Entry({name, 1}, "x") + End()), StatusCode::kDataLoss,
                 "test.tar byte 1024", "entry 1 ('" + name + "')", "path traversal");
  }
  EXPECT_ERROR(ReadStatus(Entry({"/etc/passwd", 1}, "x") + End()), StatusCode::kDataLoss, "test.tar byte 0",
               "absolute path");
  HeaderSpec prefixed{"passwd", 1};
  prefixed.prefix = "/etc";
  EXPECT_ERROR(ReadStatus(Entry(prefixed, "x") + End()), StatusCode::kDataLoss, "'/etc/passwd'", "absolute path");
  prefixed.prefix = "../..";
  EXPECT_ERROR(ReadStatus(Entry(prefixed, "x") + End()), StatusCode::kDataLoss, "path traversal");
  EXPECT_ERROR(ReadStatus(Entry({"../d/", 0, '5'}, "") + End()), StatusCode::kDataLoss, "path traversal");
  EXPECT_ERROR(ReadStatus(Entry({"./", 1, '0'}, "x") + End()), StatusCode::kDataLoss, "empty file name");
}

TEST(TarArchiveTest, NonRegularEntriesAreRejected) {
  const std::vector<std::pair<char, std::string>> types = {
      {'1', "hard link"}, {'2', "symbolic link"},        {'3', "character device"},    {'4', "block device"},
      {'6', "FIFO"},      {'S', "unsupported type 'S'"}, {'V', "unsupported type 'V'"}};
  for (const auto& t : types) {
    EXPECT_ERROR(ReadStatus(Entry({"a.o", 1}, "a") + Entry({"x", 0, t.first}, "") + End()), StatusCode::kUnimplemented,
                 "test.tar byte 1024", "entry 1 ('x')", t.second);
  }
}

TEST(TarArchiveTest, DuplicateNames) {
  EXPECT_ERROR(ReadStatus(Entry({"a.o", 1}, "a") + Entry({"./a.o", 1}, "b") + End()), StatusCode::kDataLoss,
               "test.tar byte 1024", "duplicate name 'a.o' (first at byte 0)");
}

TEST(TarArchiveTest, GnuLongNames) {
  const std::string name = std::string(300, 'L') + ".o";
  std::string a = Entry({"././@LongLink", name.size() + 1, 'L'}, name + std::string(1, '\0')) +
                  Entry({name.substr(0, 100), 4}, "data") + End();
  std::unique_ptr<uint8_t[]> keep;
  auto entries = Read(a, &keep);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].name, name);
  EXPECT_EQ((*entries)[0].header_offset, 1024u);
  // A long name that is not followed by an entry.
  EXPECT_ERROR(ReadStatus(Entry({"././@LongLink", 5, 'L'}, "x.o\0\0") + End()), StatusCode::kDataLoss,
               "test.tar byte 0", "not followed by an entry");
  // A traversal hidden in the long name.
  std::string evil = Entry({"././@LongLink", 10, 'L'}, "../evil.o") + Entry({"evil.o", 1}, "x") + End();
  EXPECT_ERROR(ReadStatus(evil), StatusCode::kDataLoss, "'../evil.o'", "path traversal");
  EXPECT_ERROR(ReadStatus(Entry({"././@LongLink", 2u << 20, 'L'}, std::string(2u << 20, 'a')) + End()),
               StatusCode::kDataLoss, "too large");
}

TEST(TarArchiveTest, PaxExtendedHeaders) {
  const std::string records = Pax("mtime=1700000000.123456789") + Pax("path=x.o") + Pax("size=3");
  ASSERT_EQ(records, "30 mtime=1700000000.123456789\n12 path=x.o\n9 size=3\n");
  std::string a = Entry({"PaxHeaders/x.o", records.size(), 'x'}, records) + Entry({"placeholder", 3}, "abc") + End();
  std::unique_ptr<uint8_t[]> keep;
  auto entries = Read(a, &keep);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].name, "x.o");
  EXPECT_EQ((*entries)[0].size, 3u);
  // Global headers are skipped.
  a = Entry({"global", 12, 'g'}, Pax("path=g.o")) + Entry({"y.o", 1}, "y") + End();
  entries = Read(a, &keep);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  EXPECT_EQ((*entries)[0].name, "y.o");
  // Malformed records name their offset (data starts at byte 512).
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"abc\n", "byte 512: entry 0 ('pax'): malformed pax record"},
      {"99 path=x\n", "pax record length 99 does not fit"},
      {"2 \n", "pax record length 2 is too short"},
      {"12 path=xx\n", "pax record length 12 does not fit the 11 bytes left"},
      {"10 path=xxx", "byte 521: entry 0 ('pax'): pax record does not end with a newline"},
      {Pax("noequal"), "without a key=value"},
      {Pax("=x"), "without a key=value"},
      {Pax("size=-1"), "invalid pax size '-1'"},
      {Pax("size="), "invalid pax size ''"},
      {Pax("path=../a"), "'../a'): name has a '..' component (path traversal)"},
      {Pax("path=ok.o") + "zz", "byte 525: entry 0 ('pax'): malformed pax record"},
  };
  for (const auto& b : bad) {
    SCOPED_TRACE(b.first);
    Status s = ReadStatus(Entry({"pax", b.first.size(), 'x'}, b.first) + Entry({"z.o", 1}, "z") + End());
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), StatusCode::kDataLoss);
    EXPECT_TRUE(Contains(s.message(), b.second)) << s.message();
  }
  // A pax size past the end of the archive.
  const std::string huge = Pax("size=99999999999999999");
  EXPECT_ERROR(ReadStatus(Entry({"pax", huge.size(), 'x'}, huge) + Entry({"z.o", 1}, "z") + End()),
               StatusCode::kDataLoss, "99999999999999999 bytes");
}

TEST(TarArchiveTest, RandomCorruptionNeverCrashes) {
  const std::string archive = Entry({"././@LongLink", 8, 'L'}, "long.o\0\0") + Entry({"x", 5}, "hello") +
                              Entry({"pax", 12, 'x'}, Pax("path=p.o")) + Entry({"p", 2}, "pp") + SampleArchive();
  ASSERT_TRUE(ReadStatus(archive).ok());
  std::mt19937_64 rng(99);
  int failures = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string b = archive;
    const int flips = 1 + static_cast<int>(rng() % 6);
    for (int f = 0; f < flips; ++f) {
      // Mostly header blocks, where the parser looks.
      size_t block = rng() % (b.size() / 512);
      size_t at = rng() % 2 ? block * 512 + rng() % 512 : block * 512 + 100 + rng() % 60;
      b[at] = static_cast<char>(rng() % 4 == 0 ? '0' + rng() % 10 : rng());
    }
    if (rng() % 8 == 0) b.resize(rng() % b.size());
    std::unique_ptr<uint8_t[]> keep;
    auto entries = Read(b, &keep);
    if (!entries.ok()) {
      ++failures;
      ASSERT_TRUE(Contains(entries.status().message(), "test.tar byte ")) << entries.status().message();
      continue;
    }
    for (const TarEntry& e : *entries) {
      ASSERT_GE(e.data, keep.get());
      ASSERT_LE(e.data + e.size, keep.get() + b.size());
      ASSERT_FALSE(Contains("/" + e.name + "/", "/../"));
      ASSERT_NE(e.name.front(), '/');
    }
  }
  EXPECT_GT(failures, 1000);
}

// ---------------------------------------------------------------------------------------------------
// gzip-compressed archives: TVM's export_library("x.tar") runs `tar -czf`.

}  // namespace
}  // namespace sorun
