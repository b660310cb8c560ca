// Hand-made tar and gzip inputs for the tar tests (tar_archive_test, tar_archive_gzip_test,
// tar_writer_test, the bad-input catalogue): ustar headers built byte by byte (independent of
// TarWriter), pax records, sample files, gzip streams of repeated pieces (bombs without holding them
// in memory), and a popen helper for the system tar. Test-only; not thread-safe where it says so
// (none of it keeps state).
#ifndef SORUN_TESTS_FORMAT_TAR_TEST_UTIL_H_
#define SORUN_TESTS_FORMAT_TAR_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "format/tar_archive.h"
#include "packer/tar_writer.h"

namespace sorun {
namespace tar_test {

inline const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// Reads a heap copy of exactly the archive's size, so AddressSanitizer sees reads past the end.
inline StatusOr<std::vector<TarEntry>> Read(const std::string& archive, std::unique_ptr<uint8_t[]>* keep,
                                            const std::string& name = "test.tar") {
  keep->reset(new uint8_t[archive.empty() ? 1 : archive.size()]);
  std::memcpy(keep->get(), archive.data(), archive.size());
  return ReadTarArchive(keep->get(), archive.size(), name);
}

inline Status ReadStatus(const std::string& archive, const std::string& name = "test.tar") {
  std::unique_ptr<uint8_t[]> keep;
  return Read(archive, &keep, name).status();
}

inline std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

inline std::string Padded(std::string s) {
  s.append((512 - s.size() % 512) % 512, '\0');
  return s;
}

// A hand-made ustar header (independent of TarWriter), with a correct checksum unless told otherwise.
struct HeaderSpec {
  std::string name;
  uint64_t size = 0;
  char type = '0';
  std::string size_field;  // overrides the octal size when set (12 bytes)
  std::string prefix;
  std::string magic = std::string(
      "ustar\0"
      "00",
      8);
  std::string mode_field = std::string("0000644\0", 8);
};

inline void PutField(std::string* h, size_t offset, const std::string& value) {
  h->replace(offset, value.size(), value);
}

inline void Resum(std::string* h) {
  h->replace(148, 8, "        ");
  unsigned sum = 0;
  for (unsigned char c : *h) sum += c;
  char field[8];
  std::snprintf(field, sizeof(field), "%06o", sum);
  h->replace(148, 7, std::string(field, 7));  // 6 digits + NUL, then the space stays
}

inline std::string Header(const HeaderSpec& spec) {
  std::string h(512, '\0');
  PutField(&h, 0, spec.name.substr(0, 100));
  PutField(&h, 100, spec.mode_field);
  PutField(&h, 108, std::string("0000000\0", 8));
  PutField(&h, 116, std::string("0000000\0", 8));
  char size[13];
  std::snprintf(size, sizeof(size), "%011llo", static_cast<unsigned long long>(spec.size));
  PutField(&h, 124, spec.size_field.empty() ? std::string(size, 12) : spec.size_field);
  PutField(&h, 136, std::string("00000000000\0", 12));
  h[156] = spec.type;
  PutField(&h, 257, spec.magic);
  PutField(&h, 345, spec.prefix);
  Resum(&h);
  return h;
}

inline std::string Entry(const HeaderSpec& spec, const std::string& contents) {
  return Header(spec) + Padded(contents);
}
inline std::string End() { return std::string(1024, '\0'); }

// A pax record "<length> <body>\n" whose length counts itself.
inline std::string Pax(const std::string& body) {
  for (size_t digits = 1;; ++digits) {
    const std::string length = std::to_string(digits + 1 + body.size() + 1);
    if (length.size() == digits) return length + " " + body + "\n";
  }
}

inline bool HaveTar() { return std::system("tar --version >/dev/null 2>&1") == 0; }

inline std::string RunOutput(const std::string& command, int* exit_code) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    *exit_code = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  *exit_code = pclose(pipe);
  return out;
}

inline const std::string kLongDir(60, 'd');
inline const std::string kLongFile(80, 'f');
inline const std::string kLongName = kLongDir + "/" + kLongFile;  // 141 bytes: needs the ustar prefix

// The files most tests write: sizes around the block boundary, nested and long names, modes.
inline std::vector<std::pair<std::string, std::string>> SampleFiles() {
  return {{"empty.o", ""},
          {"one.o", "x"},
          {"block_minus_one.o", RandomBytes(511, 1)},
          {"block.o", RandomBytes(512, 2)},
          {"block_plus_one.o", RandomBytes(513, 3)},
          {"lib/nested/devc.o", RandomBytes(10000, 4)},
          {std::string(100, 'n'), "exactly one hundred byte name"},
          {kLongName, RandomBytes(777, 5)}};
}

inline std::string SampleArchive() {
  TarWriter w;
  for (const auto& f : SampleFiles()) {
    Status s = w.AddFile(f.first, f.second, f.first == "one.o" ? 0755 : 0644);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  return w.Finish();
}

// ---------------------------------------------------------------------------------------------------
// Writer + reader round trips.

// gzip of the concatenation of `pieces` ({bytes, times}), deflated as a stream: a 256 MiB bomb is
// never held in memory by the test.
inline std::string GzipRepeated(const std::vector<std::pair<std::string, uint64_t>>& pieces) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out;
  char buf[1 << 16];
  auto pump = [&](const std::string* piece, int flush) {
    zs.next_in = piece ? reinterpret_cast<Bytef*>(const_cast<char*>(piece->data())) : nullptr;
    zs.avail_in = piece ? static_cast<uInt>(piece->size()) : 0;
    do {
      zs.next_out = reinterpret_cast<Bytef*>(buf);
      zs.avail_out = sizeof(buf);
      deflate(&zs, flush);
      out.append(buf, sizeof(buf) - zs.avail_out);
    } while (zs.avail_out == 0 || (flush == Z_FINISH && zs.avail_in > 0));
  };
  for (const auto& piece : pieces) {
    for (uint64_t i = 0; i < piece.second; ++i) pump(&piece.first, Z_NO_FLUSH);
  }
  pump(nullptr, Z_FINISH);
  deflateEnd(&zs);
  return out;
}

}  // namespace tar_test
}  // namespace sorun

#endif  // SORUN_TESTS_FORMAT_TAR_TEST_UTIL_H_
