// XXH64 against reference values (computed with libxxhash 0.8.1, the reference implementation).
#include "runtime/opencl/xxhash64.h"

#include <gtest/gtest.h>

#include <string>

namespace sorun {
namespace opencl {
namespace {

TEST(Xxh64Test, MatchesTheReferenceImplementation) {
  EXPECT_EQ(Xxh64("", 0), 0xEF46DB3751D8E999ULL);
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

TEST(Xxh64Test, EveryByteMatters) {
  std::string a(100, 'x');
  uint64_t base = Xxh64(a);
  for (size_t i = 0; i < a.size(); ++i) {
    std::string b = a;
    b[i] = 'y';
    EXPECT_NE(Xxh64(b), base) << i;
  }
  EXPECT_NE(Xxh64(a, 1), base);
}

}  // namespace
}  // namespace opencl
}  // namespace sorun
