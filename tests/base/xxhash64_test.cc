#include "base/xxhash64.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace sorun {
namespace {

// Expected values were computed with the reference implementation (python-xxhash 4.1.0, which wraps
// xxHash's own C code) and agree with the sanity table of the xxHash repository.
constexpr uint64_t kPrime32 = 2654435761u;
constexpr uint64_t kPrime64 = 11400714785074694797ull;

// xxHash's sanity-check buffer: byte i is the top byte of an LCG seeded with PRIME32.
std::vector<uint8_t> SanityBuffer(size_t n) {
  std::vector<uint8_t> buf(n);
  uint64_t gen = kPrime32;
  for (size_t i = 0; i < n; ++i) {
    buf[i] = static_cast<uint8_t>(gen >> 56);
    gen *= kPrime64;
  }
  return buf;
}

struct Vector {
  size_t length;
  uint64_t seed0;
  uint64_t seed_prime32;
  uint64_t seed_all_ones;
};

const Vector kVectors[] = {
    {0, 0xEF46DB3751D8E999ull, 0xAC75FDA2929B17EFull, 0x298F4C84B24F5380ull},
    {1, 0xE934A84ADB052768ull, 0x5014607643A9B4C3ull, 0x8BA3328805E37C90ull},
    {2, 0x5D48CD60A77E23FFull, 0x9E93152232D54A39ull, 0xB717B1919A269B1Eull},
    {3, 0xFF7E1959CB50794Aull, 0xAA8584E83660F7D1ull, 0xD98FF19E5346B786ull},
    {4, 0x9136A0DCA57457EEull, 0xCAAB286BD8E9FDB5ull, 0x159FBDB3FC3FC1D6ull},
    {5, 0x9B046FB1397F09A5ull, 0x2AF5249930F984ECull, 0xBEB995D7AE545217ull},
    {7, 0x6C83909A9F01ED25ull, 0xF98D03B1AD6F9293ull, 0x73BDE04667CA6BF4ull},
    {8, 0xCDBCF538E71D1348ull, 0xFE0C047A5353CDACull, 0x568E81B1596E8283ull},
    {9, 0x554B1AE991EDA6B6ull, 0x7908265248F6D73Full, 0x82763E2471C59DEDull},
    {11, 0x6345D5746F35DA70ull, 0xEAA08A8C8BE3CCCFull, 0x7D997DF67EA39EF0ull},
    {12, 0x0723BF50086EAD9Aull, 0x8252819F4E506951ull, 0x3076E05B0AB6ECE0ull},
    {13, 0xC2E5013E3C40BCF7ull, 0x4DF437A291CB1039ull, 0xE6918F231CE546F9ull},
    {14, 0x8282DCC4994E35C8ull, 0xC3BD6BF63DEB6DF0ull, 0x8523C9EE6F9548EDull},
    {15, 0x180719316D622D84ull, 0xD61105C20E91F99Full, 0xABA497CF6BECE3A5ull},
    {16, 0x98C90B57FDFCB55Cull, 0xC900AD2D536B607Eull, 0x2A361A78823233FEull},
    {17, 0x0D39A2D051A30C2Cull, 0x495CD68A647C7A22ull, 0x29CB6DD1A6236E81ull},
    {23, 0xD2460ECC840B74DDull, 0x4B44E8DE7A396773ull, 0x5F0615E4624B7B5Aull},
    {24, 0xF75A6DEA42DC5BF4ull, 0x8B7C67EB59778E22ull, 0xD373A914C9BD3051ull},
    {28, 0x64CD9E8C96A9E2DDull, 0x8160FB8C20B48287ull, 0xC612A9831F4A2971ull},
    {31, 0x299B39A290E6D783ull, 0xDA673D5FEB5C1D79ull, 0x6ED1061F61C686E5ull},
    {32, 0x18B216492BB44B70ull, 0xB3F33BDF93ADE409ull, 0x3A793D9020113C2Aull},
    {33, 0x55C8DC3E578F5B59ull, 0xE92C292F64BC3071ull, 0x3E29B6E70F2543DAull},
    {35, 0xCB0AA8E2A7A29707ull, 0xECE3515C236504C7ull, 0xB1CD15559E8D9E94ull},
    {36, 0x0AE67584084DC6A4ull, 0x57C73F9E3A6FC2C6ull, 0xA042F6AAC0F76EACull},
    {40, 0x23B3810D7D8B1731ull, 0x5A57F246772BC540ull, 0x5F341658CA9B0367ull},
    {47, 0x84A42E167CBD1FEFull, 0xA474B31A5132A541ull, 0x2D10E7F21AE126BEull},
    {48, 0xFD0FEEAC7A939933ull, 0x6FFE2F43A24C2302ull, 0x6A5F9E480313A87Bull},
    {63, 0xA9EFBE0FA0F3F4E7ull, 0x6C911FADB05B6FC2ull, 0x93B7C9E8CE6DE24Cull},
    {64, 0xEF558F8ACAC2B5CDull, 0xB5EEBA99264CC44Full, 0xD48294C0C6D5D9FDull},
    {65, 0xDE0F20DC2631AF7Aull, 0xD3F6FF3941E310CAull, 0xD3366084A3FD665Bull},
    {95, 0xFF9F46BDCC644624ull, 0x72E75A560EF624A3ull, 0xD72722F9207F0AD7ull},
    {96, 0x105064E743EDD1D9ull, 0x8FF0B4ABEE6F03CCull, 0xE88686775216D7F4ull},
    {97, 0x097B16E4E9B0A2E3ull, 0x9704E5147FDCC4F4ull, 0xC9E6DF68A6919DF6ull},
    {100, 0x4BFE019CD91D9EA4ull, 0x4853706DC9625CAEull, 0x2FE1B1460F4666C4ull},
    {127, 0x3C7A21119AA662B0ull, 0xB0D6DC189C06CEEDull, 0xED1EB4453B50315Cull},
    {128, 0x90CA021457D96DC5ull, 0xED9340A202BCD1CFull, 0x7CFA3DE32F898699ull},
    {129, 0x41C280132D697ABAull, 0x1668B87489935FF5ull, 0xEA7578780F72BA05ull},
    {222, 0xB641AE8CB691C174ull, 0x20CB8AB7AE10C14Aull, 0x61920BEF9B9A65CAull},
    {1000, 0x52BD1358F22E9EF7ull, 0x72751A2408017E26ull, 0xF681D3B0E9E495AEull},
    {4096, 0xAB77F4AF85F4E70Bull, 0xCB8B60CBA513125Dull, 0x59C4456E9749EF15ull},
    {4099, 0xF5D6AEE1D10D6BFDull, 0x3526D4FD3184E7FCull, 0xF6F79CD322B0EF9Dull},
};

TEST(Xxh64Test, EmptyInputIsTheSpecValue) {
  EXPECT_EQ(Xxh64(nullptr, 0), 0xEF46DB3751D8E999ull);
  EXPECT_EQ(Xxh64("", 0, 0), 0xEF46DB3751D8E999ull);
  Xxh64Stream s;
  EXPECT_EQ(s.Digest(), 0xEF46DB3751D8E999ull);
  s.Update(nullptr, 0);
  EXPECT_EQ(s.Digest(), 0xEF46DB3751D8E999ull);
}

TEST(Xxh64Test, KnownStrings) {
  auto h = [](const std::string& s) { return Xxh64(s.data(), s.size()); };
  EXPECT_EQ(h("a"), 0xD24EC4F1A98C6E5Bull);
  EXPECT_EQ(h("abc"), 0x44BC2CF5AD770999ull);
  EXPECT_EQ(h("xxhash"), 0x32DD38952C4BC720ull);
  EXPECT_EQ(h("Nobody inspects the spammish repetition"), 0xFBCEA83C8A378BF1ull);
  EXPECT_EQ(h("The quick brown fox jumps over the lazy dog"), 0x0B242D361FDA71BCull);
}

TEST(Xxh64Test, SanityBufferAtEveryTailLengthAndSeed) {
  std::vector<uint8_t> buf = SanityBuffer(4099);
  for (const Vector& v : kVectors) {
    SCOPED_TRACE("length " + std::to_string(v.length));
    EXPECT_EQ(Xxh64(buf.data(), v.length, 0), v.seed0);
    EXPECT_EQ(Xxh64(buf.data(), v.length, kPrime32), v.seed_prime32);
    EXPECT_EQ(Xxh64(buf.data(), v.length, ~0ull), v.seed_all_ones);
  }
}

TEST(Xxh64Test, UnalignedInputGivesTheSameHash) {
  std::vector<uint8_t> buf = SanityBuffer(4099);
  std::vector<uint8_t> shifted(buf.size() + 7);
  for (size_t shift = 1; shift < 8; ++shift) {
    std::memcpy(shifted.data() + shift, buf.data(), buf.size());
    EXPECT_EQ(Xxh64(shifted.data() + shift, 1000, 0), 0x52BD1358F22E9EF7ull) << "shift " << shift;
  }
}

TEST(Xxh64Test, OneMebibyteOfZeros) {
  std::vector<uint8_t> zeros(1 << 20, 0);
  EXPECT_EQ(Xxh64(zeros.data(), zeros.size()), 0x87D2A1B6E1163EF1ull);
}

TEST(Xxh64Test, StreamingMatchesOneShotForEveryVector) {
  std::vector<uint8_t> buf = SanityBuffer(4099);
  for (const Vector& v : kVectors) {
    for (size_t chunk : {1u, 3u, 7u, 31u, 32u, 33u, 64u, 1000u}) {
      Xxh64Stream s(kPrime32);
      for (size_t pos = 0; pos < v.length; pos += chunk) {
        s.Update(buf.data() + pos, std::min(chunk, v.length - pos));
      }
      EXPECT_EQ(s.Digest(), v.seed_prime32) << "length " << v.length << " chunk " << chunk;
      EXPECT_EQ(s.total_length(), v.length);
    }
  }
}

TEST(Xxh64Test, StreamingWithRandomSplitsMatchesOneShot) {
  std::mt19937_64 rng(1234);
  std::vector<uint8_t> data(200000);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  const uint64_t expected = Xxh64(data.data(), data.size(), 42);
  for (int trial = 0; trial < 50; ++trial) {
    Xxh64Stream s(42);
    size_t pos = 0;
    while (pos < data.size()) {
      size_t n = std::min<size_t>(rng() % 5000, data.size() - pos);
      s.Update(data.data() + pos, n);  // includes zero-length updates
      pos += n;
    }
    ASSERT_EQ(s.Digest(), expected) << "trial " << trial;
  }
}

TEST(Xxh64Test, DigestDoesNotDisturbTheStateAndResetStartsOver) {
  std::vector<uint8_t> buf = SanityBuffer(222);
  Xxh64Stream s;
  s.Update(buf.data(), 100);
  EXPECT_EQ(s.Digest(), 0x4BFE019CD91D9EA4ull);
  EXPECT_EQ(s.Digest(), 0x4BFE019CD91D9EA4ull);
  s.Update(buf.data() + 100, 122);
  EXPECT_EQ(s.Digest(), 0xB641AE8CB691C174ull);
  s.Reset(~0ull);
  EXPECT_EQ(s.total_length(), 0u);
  s.Update(buf.data(), 5);
  EXPECT_EQ(s.Digest(), 0xBEB995D7AE545217ull);
}

TEST(Xxh64Test, HexIsSixteenLowerCaseDigits) {
  EXPECT_EQ(Xxh64ToHex(0xEF46DB3751D8E999ull), "ef46db3751d8e999");
  EXPECT_EQ(Xxh64ToHex(0), "0000000000000000");
  EXPECT_EQ(Xxh64ToHex(0x0B242D361FDA71BCull), "0b242d361fda71bc");
}

// Values from the reference implementation (libxxhash 0.8.1).
TEST(Xxh64ReferenceTest, MatchesLibxxhash) {
  EXPECT_EQ(Xxh64("abc"), 0x44BC2CF5AD770999ULL);
  const std::string nobody = "Nobody inspects the spammish repetition";  // 39 bytes: stripes + tail
  EXPECT_EQ(Xxh64(nobody), 0xFBCEA83C8A378BF1ULL);
  EXPECT_EQ(Xxh64(nobody, 20141025), 0xCE06936136852706ULL);
  std::string bytes;
  for (int r = 0; r < 4; ++r) {
    for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  }
  EXPECT_EQ(Xxh64(bytes), 0x6F3914F18FE4DF57ULL);
  EXPECT_EQ(Xxh64(bytes.data(), 101, 7), 0xE878E9791DBC64FAULL);
}

}  // namespace
}  // namespace sorun
