// gzip-compressed tar archives (TVM writes `tar -czf`): inflation, its limits, bombs.
#include "format/tar_archive.h"
#include "packer/tar_writer.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/format/tar_test_util.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using ::sorun::testing::MakeTempDir;
using ::sorun::testing::WriteFileOrDie;

using ::sorun::testing::Contains;

using namespace ::sorun::tar_test;  // NOLINT: the tar test vocabulary

// One gzip member holding `data` (zlib's deflate with the gzip wrapper).
std::string Gzip(const std::string& data, int level = 6) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  EXPECT_EQ(deflateInit2(&zs, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, data.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(&out[0]);
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

StatusOr<std::string> Gunzip(const std::string& gz, uint64_t max_output = uint64_t{1} << 40) {
  std::unique_ptr<uint8_t[]> keep(new uint8_t[gz.empty() ? 1 : gz.size()]);
  std::memcpy(keep.get(), gz.data(), gz.size());
  return GunzipBytes(keep.get(), gz.size(), "lib.tar", max_output);
}

TEST(TarArchiveGzipTest, TarFileReadsPlainAndGzipCompressedArchives) {
  const std::string dir = MakeTempDir("tar_gzip");
  TarWriter w;
  for (const auto& f : SampleFiles()) ASSERT_TRUE(w.AddFile(f.first, f.second).ok());
  const std::string plain = w.Finish();
  WriteFileOrDie(dir + "/plain.tar", plain);
  WriteFileOrDie(dir + "/tvm.tar", Gzip(plain));
  for (const char* name : {"plain.tar", "tvm.tar"}) {
    auto tar = TarFile::Open(dir + "/" + name);
    ASSERT_TRUE(tar.ok()) << tar.status().ToString();
    EXPECT_EQ((*tar)->gzip_compressed(), std::string(name) == "tvm.tar");
    ASSERT_EQ((*tar)->size(), plain.size());
    EXPECT_EQ(std::memcmp((*tar)->data(), plain.data(), plain.size()), 0);
    auto entries = ReadTarArchive((*tar)->data(), (*tar)->size(), name);
    ASSERT_TRUE(entries.ok()) << entries.status().ToString();
    ASSERT_EQ(entries->size(), SampleFiles().size());
    for (size_t i = 0; i < entries->size(); ++i) {
      EXPECT_EQ((*entries)[i].name, SampleFiles()[i].first);
      EXPECT_EQ(std::string(reinterpret_cast<const char*>((*entries)[i].data), (*entries)[i].size),
                SampleFiles()[i].second);
    }
  }
  EXPECT_ERROR(TarFile::Open(dir + "/missing.tar").status(), StatusCode::kNotFound, "missing.tar");
}

TEST(TarArchiveGzipTest, ReadsArchivesMadeBySystemTarCzf) {
  if (!HaveTar()) GTEST_SKIP() << "no tar tool on PATH";
  const std::string dir = MakeTempDir("tar_gzip");
  WriteFileOrDie(dir + "/lib0.o", RandomBytes(70000, 3));
  WriteFileOrDie(dir + "/devc.o", std::string(5000, 'b'));
  int rc = 0;
  // Exactly what TVM's tvm.contrib.tar.tar runs.
  std::string log = RunOutput("tar -czf '" + dir + "/lib.tar' -C '" + dir + "' lib0.o devc.o 2>&1", &rc);
  ASSERT_EQ(rc, 0) << log;
  auto tar = TarFile::Open(dir + "/lib.tar");
  ASSERT_TRUE(tar.ok()) << tar.status().ToString();
  EXPECT_TRUE((*tar)->gzip_compressed());
  auto entries = ReadTarArchive((*tar)->data(), (*tar)->size(), "lib.tar");
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].name, "lib0.o");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>((*entries)[0].data), (*entries)[0].size), RandomBytes(70000, 3));
  EXPECT_EQ((*entries)[1].size, 5000u);
}

TEST(TarArchiveGzipTest, GunzipLargeMultiMemberAndPaddedStreams) {
  const std::string big = RandomBytes(3 << 20, 5) + std::string(2 << 20, 'z');  // grows the buffer many times
  auto out = Gunzip(Gzip(big, 1));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, big);
  auto two = Gunzip(Gzip("first half, ") + Gzip("second half"));
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(*two, "first half, second half");
  auto padded = Gunzip(Gzip("x") + std::string(512, '\0'));  // tape-style zero padding
  ASSERT_TRUE(padded.ok()) << padded.status().ToString();
  EXPECT_EQ(*padded, "x");
  auto empty = Gunzip(Gzip(""));
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(*empty, "");
}

TEST(TarArchiveGzipTest, CorruptTruncatedAndOversizedStreams) {
  const std::string data = RandomBytes(100000, 7);
  const std::string gz = Gzip(data);
  EXPECT_ERROR(Gunzip("not gzip").status(), StatusCode::kDataLoss, "lib.tar byte 0: gzip: not a gzip stream");
  EXPECT_ERROR(Gunzip(gz.substr(0, gz.size() / 2)).status(), StatusCode::kDataLoss, "lib.tar byte ", "truncated");
  EXPECT_ERROR(Gunzip(gz.substr(0, gz.size() - 4)).status(), StatusCode::kDataLoss, "truncated");
  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 6] ^= 0x55;  // the CRC-32 of the trailer
  EXPECT_ERROR(Gunzip(bad_crc).status(), StatusCode::kDataLoss, "gzip: incorrect data check");
  std::string bad_method = gz;
  bad_method[2] = 9;  // compression method must be 8 (deflate)
  EXPECT_ERROR(Gunzip(bad_method).status(), StatusCode::kDataLoss, "gzip: ");
  EXPECT_ERROR(Gunzip(gz + "trailing junk").status(), StatusCode::kDataLoss, "trailing bytes");
  EXPECT_ERROR(Gunzip(gz, 4096).status(), StatusCode::kResourceExhausted, "more than 4096 bytes");
  auto exact = Gunzip(gz, data.size());
  ASSERT_TRUE(exact.ok()) << exact.status().ToString();
  EXPECT_EQ(*exact, data);
  // Random corruption: an error or (rarely) some output, never a crash or a read past the input.
  std::mt19937_64 rng(11);
  for (int i = 0; i < 300; ++i) {
    std::string b = gz;
    for (int f = 0; f < 3; ++f) b[10 + rng() % (b.size() - 10)] = static_cast<char>(rng());
    if (rng() % 4 == 0) b.resize(2 + rng() % (b.size() - 2));
    auto r = Gunzip(b);
    if (!r.ok()) {
      EXPECT_TRUE(Contains(r.status().message(), "lib.tar")) << r.status().message();
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Gzip bombs (issue 13 class 6): inflation is bounded by the archive's own headers and by a limit
// relative to the compressed size.

const std::string kMiBOfZeros(1 << 20, '\0');

TEST(TarArchiveGzipTest, InflateLimitIsRelativeToTheCompressedSizeAndCapped) {
  EXPECT_EQ(TarGzipInflateLimit(0), kTarGzipMinInflateAllowance);
  EXPECT_EQ(TarGzipInflateLimit(1000), kTarGzipMinInflateAllowance);
  EXPECT_EQ(TarGzipInflateLimit(uint64_t{1} << 20), kTarGzipMaxRatio << 20);
  EXPECT_EQ(TarGzipInflateLimit(uint64_t{1} << 40), kTarGzipMaxInflatedBytes);
  EXPECT_EQ(TarGzipInflateLimit(UINT64_MAX), kTarGzipMaxInflatedBytes);
}

// The reported bomb: a member whose header claims 256 MiB of zeros, in a ~254 KiB file. It stops at
// 128 x the file's size (about 32 MiB), with an error naming the file and the limit.
TEST(TarArchiveGzipTest, BombWithAHugeMemberStopsAtTheRatioLimit) {
  const std::string dir = MakeTempDir("tar_bomb");
  const std::string gz = GzipRepeated({{Header({"lib0.o", uint64_t{256} << 20}), 1}, {kMiBOfZeros, 256}, {End(), 1}});
  ASSERT_LT(gz.size(), 300u << 10);
  WriteFileOrDie(dir + "/bomb.tar", gz);
  Status s = TarFile::Open(dir + "/bomb.tar").status();
  EXPECT_ERROR(s, StatusCode::kResourceExhausted,
               dir + "/bomb.tar: gzip: the archive inflates to more than " +
                   std::to_string(TarGzipInflateLimit(gz.size())) + " bytes");
  EXPECT_TRUE(Contains(s.message(), "128 times its size")) << s.message();
  EXPECT_LT(TarGzipInflateLimit(gz.size()), uint64_t{40} << 20);
}

// A stream of zeros is an empty archive followed by padding: inflation stops at the end-of-archive
// marker plus the padding allowance, long before 256 MiB.
TEST(TarArchiveGzipTest, BombOfZerosStopsAtTheEndOfArchiveMarker) {
  const std::string dir = MakeTempDir("tar_bomb");
  WriteFileOrDie(dir + "/zeros.tar", GzipRepeated({{kMiBOfZeros, 256}}));
  EXPECT_ERROR(TarFile::Open(dir + "/zeros.tar").status(), StatusCode::kDataLoss,
               "zeros.tar: gzip: the stream continues past the archive's end-of-archive marker (ending at archive byte "
               "1024) with more than 1048576 bytes of zero padding");
}

TEST(TarArchiveGzipTest, DataPastTheEndOfArchiveIsRefused) {
  const std::string dir = MakeTempDir("tar_bomb");
  const std::string archive = Entry({"lib0.o", 5}, "hello") + End();
  WriteFileOrDie(dir + "/junk.tar", Gzip(archive + std::string(4096, '\0') + "hidden payload"));
  EXPECT_ERROR(
      TarFile::Open(dir + "/junk.tar").status(), StatusCode::kDataLoss,
      "junk.tar: gzip: the stream continues past the archive's end-of-archive marker (ending at archive byte " +
          std::to_string(archive.size()) + ") with non-zero data");
}

// Headers are checked as they arrive: a forged header stops inflation at once.
TEST(TarArchiveGzipTest, ForgedHeaderIsRefusedBeforeItsContentsAreInflated) {
  const std::string dir = MakeTempDir("tar_bomb");
  std::string forged = Header({"lib0.o", uint64_t{1} << 33});
  forged[148] = '7';  // checksum no longer matches
  WriteFileOrDie(dir + "/forged.tar", GzipRepeated({{forged, 1}, {kMiBOfZeros, 64}}));
  EXPECT_ERROR(TarFile::Open(dir + "/forged.tar").status(), StatusCode::kDataLoss,
               "forged.tar byte 148: entry 0: header checksum mismatch");
  WriteFileOrDie(dir + "/notar.gz", Gzip(RandomBytes(4096, 9)));
  EXPECT_ERROR(TarFile::Open(dir + "/notar.gz").status(), StatusCode::kDataLoss, "notar.gz byte ", "entry 0");
}

// Legitimate archives still load: tar's record padding, pax size records, highly compressible members
// under the minimum allowance, and multi-member streams.
TEST(TarArchiveGzipTest, LegitimateCompressedArchivesStillLoad) {
  const std::string dir = MakeTempDir("tar_gzip");
  const std::string zeros(10 << 20, '\0');  // compresses ~1000:1, under the 16 MiB allowance
  const std::string archive = Entry({"weights.o", zeros.size()}, zeros) + Entry({"lib0.o", 3}, "abc") + End();
  const std::string padded = archive + std::string(20 * 512 - archive.size() % (20 * 512), '\0');  // tar -b 20
  const std::string pax = Entry({"PaxHeaders/x", Pax("size=7").size(), 'x'}, Pax("size=7")) + Entry({"big.o", 0}, "") +
                          Padded("1234567") + End();
  const std::string halves = Gzip(archive.substr(0, 4096)) + Gzip(archive.substr(4096));
  for (const auto& [name, gz, want] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"padded.tar", Gzip(padded), archive}, {"pax.tar", Gzip(pax), pax}, {"halves.tar", halves, archive}}) {
    SCOPED_TRACE(name);
    WriteFileOrDie(dir + "/" + name, gz);
    auto tar = TarFile::Open(dir + "/" + name);
    ASSERT_TRUE(tar.ok()) << tar.status().ToString();
    ASSERT_EQ((*tar)->size(), want.size());
    EXPECT_EQ(std::memcmp((*tar)->data(), want.data(), want.size()), 0);
    auto entries = ReadTarArchive((*tar)->data(), (*tar)->size(), name);
    ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  }
}

}  // namespace
}  // namespace sorun
