// sorun's tar reader and writer against libarchive (bsdtar's library) as an independent oracle:
// archives written by TarWriter read back the same through libarchive, and archives written by the
// system's GNU tar (GNU long names, pax, ustar, gzip) read the same through ReadTarArchive/TarFile
// as through libarchive. libarchive is a test-only dependency (third_party/libarchive).
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "format/tar_archive.h"
#include "packer/tar_writer.h"
#include "tests/format/tar_test_util.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using ::sorun::testing::MakeTempDir;
using ::sorun::testing::ReadFileOrDie;
using ::sorun::testing::WriteFileOrDie;

// What both readers report of a regular file.
struct FileFacts {
  uint64_t size = 0;
  uint32_t mode = 0;
  std::string data;
  bool operator==(const FileFacts& o) const { return size == o.size && mode == o.mode && data == o.data; }
};
using Listing = std::map<std::string, FileFacts>;

std::string Describe(const Listing& l) {
  std::string s;
  for (const auto& [name, f] : l)
    s += name + " (" + std::to_string(f.size) + " bytes, mode " + std::to_string(f.mode) + ")\n";
  return s;
}

// The regular files of an archive (plain or gzip-compressed) as libarchive reads them.
Listing ReadWithLibarchive(const std::string& bytes) {
  Listing out;
  archive* a = archive_read_new();
  archive_read_support_format_tar(a);
  archive_read_support_format_gnutar(a);
  archive_read_support_filter_gzip(a);
  EXPECT_EQ(archive_read_open_memory(a, bytes.data(), bytes.size()), ARCHIVE_OK) << archive_error_string(a);
  archive_entry* entry = nullptr;
  int r;
  while ((r = archive_read_next_header(a, &entry)) == ARCHIVE_OK) {
    if (archive_entry_filetype(entry) != AE_IFREG) continue;
    FileFacts f;
    f.size = static_cast<uint64_t>(archive_entry_size(entry));
    f.mode = static_cast<uint32_t>(archive_entry_perm(entry));
    f.data.resize(static_cast<size_t>(f.size));
    EXPECT_EQ(archive_read_data(a, f.data.data(), f.data.size()), static_cast<la_ssize_t>(f.size));
    out[archive_entry_pathname(entry)] = std::move(f);
  }
  EXPECT_EQ(r, ARCHIVE_EOF) << archive_error_string(a);
  archive_read_free(a);
  return out;
}

Listing ListingOf(const std::vector<TarEntry>& entries) {
  Listing out;
  for (const TarEntry& e : entries) {
    out[e.name] = FileFacts{e.size, e.mode, std::string(reinterpret_cast<const char*>(e.data), e.size)};
  }
  return out;
}

// The regular files as sorun reads the archive file at `path` (TarFile: gzip inflated in memory).
Listing ReadWithSorun(const std::string& path) {
  auto file = TarFile::Open(path);
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  if (!file.ok()) return {};
  auto entries = ReadTarArchive((*file)->data(), (*file)->size(), path);
  EXPECT_TRUE(entries.ok()) << entries.status().ToString();
  return entries.ok() ? ListingOf(*entries) : Listing{};
}

TEST(TarLibarchiveTest, LibarchiveReadsWhatTarWriterWrites) {
  TarWriter w;
  Listing expected;
  const std::string long_name = tar_test::kLongDir + "/" + tar_test::kLongFile + ".o";  // split across prefix/name
  const std::vector<std::pair<std::string, std::string>> files = {{"empty.o", ""},
                                                                  {"lib0.o", std::string(511, 'a')},
                                                                  {"dir/lib1.o", std::string(513, '\x7f')},
                                                                  {long_name, std::string(4096, '\0') + "end"}};
  uint32_t mode = 0600;
  for (const auto& [name, contents] : files) {
    ASSERT_TRUE(w.AddFile(name, contents, mode).ok()) << name;
    expected[name] = FileFacts{contents.size(), mode, contents};
    mode = mode == 0600 ? 0755 : 0600;
  }
  const std::string archive = w.Finish();
  EXPECT_EQ(ReadWithLibarchive(archive), expected) << Describe(ReadWithLibarchive(archive));
}

TEST(TarLibarchiveTest, SorunReadsSystemTarArchivesLikeLibarchive) {
  if (!tar_test::HaveTar()) GTEST_SKIP() << "no tar on this machine";
  const std::string dir = MakeTempDir("tar_libarchive");
  const std::string src = dir + "/src";
  const std::string long_dir = tar_test::kLongDir + "/" + tar_test::kLongDir;  // > 100 bytes with the file
  ASSERT_EQ(std::system(("mkdir -p '" + src + "/" + long_dir + "'").c_str()), 0);
  WriteFileOrDie(src + "/lib0.o", std::string(1000, 'x'));
  WriteFileOrDie(src + "/" + long_dir + "/" + tar_test::kLongFile + ".o", std::string(70000, 'y'));
  WriteFileOrDie(src + "/devc.o", "");
  const std::vector<std::pair<std::string, std::string>> formats = {
      {"gnu.tar", "--format=gnu -cf"},      // ././@LongLink names
      {"pax.tar", "--format=pax -cf"},      // pax path records
      {"ustar.tar", "--format=ustar -cf"},  // prefix + name
      {"gzip.tar", "-czf"},                 // TVM's export_library("x.tar")
  };
  for (const auto& [file, flags] : formats) {
    SCOPED_TRACE(file);
    int rc = 0;
    const std::string log = tar_test::RunOutput(
        "tar " + flags + " '" + dir + "/" + file + "' -C '" + src + "' lib0.o devc.o '" + long_dir + "' 2>&1", &rc);
    ASSERT_EQ(rc, 0) << log;
    const Listing ours = ReadWithSorun(dir + "/" + file);
    const Listing theirs = ReadWithLibarchive(ReadFileOrDie(dir + "/" + file));
    EXPECT_EQ(ours.size(), 3u) << Describe(ours);
    EXPECT_EQ(ours, theirs) << "sorun:\n" << Describe(ours) << "libarchive:\n" << Describe(theirs);
  }
}

}  // namespace
}  // namespace sorun
