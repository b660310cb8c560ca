#include "base/xxhash64.h"

#include <cstring>

namespace sorun {
namespace {

// The five primes of the specification.
constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kPrime2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kPrime3 = 0x165667B19E3779F9ull;
constexpr uint64_t kPrime4 = 0x85EBCA77C2B2AE63ull;
constexpr uint64_t kPrime5 = 0x27D4EB2F165667C5ull;

inline uint64_t RotateLeft(uint64_t x, int bits) { return (x << bits) | (x >> (64 - bits)); }

// Input lanes are little-endian regardless of the host.
inline uint64_t LoadLe64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

inline uint32_t LoadLe32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  return v;
}

// One lane of a stripe into one accumulator.
inline uint64_t Round(uint64_t acc, uint64_t lane) {
  acc += lane * kPrime2;
  acc = RotateLeft(acc, 31);
  return acc * kPrime1;
}

// Folds an accumulator into the converged value.
inline uint64_t MergeAccumulator(uint64_t acc, uint64_t acc_n) {
  acc ^= Round(0, acc_n);
  return acc * kPrime1 + kPrime4;
}

inline void InitAccumulators(uint64_t seed, uint64_t acc[4]) {
  acc[0] = seed + kPrime1 + kPrime2;
  acc[1] = seed + kPrime2;
  acc[2] = seed;
  acc[3] = seed - kPrime1;
}

// Consumes whole 32-byte stripes from `p`; returns the number of bytes consumed.
inline size_t ConsumeStripes(uint64_t acc[4], const uint8_t* p, size_t size) {
  uint64_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  size_t done = 0;
  while (size - done >= 32) {
    a0 = Round(a0, LoadLe64(p + done));
    a1 = Round(a1, LoadLe64(p + done + 8));
    a2 = Round(a2, LoadLe64(p + done + 16));
    a3 = Round(a3, LoadLe64(p + done + 24));
    done += 32;
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
  return done;
}

inline uint64_t ConvergeAccumulators(const uint64_t acc[4]) {
  uint64_t h = RotateLeft(acc[0], 1) + RotateLeft(acc[1], 7) + RotateLeft(acc[2], 12) + RotateLeft(acc[3], 18);
  h = MergeAccumulator(h, acc[0]);
  h = MergeAccumulator(h, acc[1]);
  h = MergeAccumulator(h, acc[2]);
  h = MergeAccumulator(h, acc[3]);
  return h;
}

// Adds the input length, the remaining (< 32) bytes and applies the final avalanche.
uint64_t Finish(uint64_t h, uint64_t total_length, const uint8_t* p, size_t size) {
  h += total_length;
  while (size >= 8) {
    h ^= Round(0, LoadLe64(p));
    h = RotateLeft(h, 27) * kPrime1 + kPrime4;
    p += 8;
    size -= 8;
  }
  if (size >= 4) {
    h ^= static_cast<uint64_t>(LoadLe32(p)) * kPrime1;
    h = RotateLeft(h, 23) * kPrime2 + kPrime3;
    p += 4;
    size -= 4;
  }
  while (size > 0) {
    h ^= static_cast<uint64_t>(*p) * kPrime5;
    h = RotateLeft(h, 11) * kPrime1;
    ++p;
    --size;
  }
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

}  // namespace

uint64_t Xxh64(const void* data, size_t size, uint64_t seed) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint64_t h;
  size_t done = 0;
  if (size >= 32) {
    uint64_t acc[4];
    InitAccumulators(seed, acc);
    done = ConsumeStripes(acc, p, size);
    h = ConvergeAccumulators(acc);
  } else {
    h = seed + kPrime5;
  }
  return Finish(h, size, p + done, size - done);
}

void Xxh64Stream::Reset(uint64_t seed) {
  InitAccumulators(seed, acc_);
  seed_ = seed;
  total_length_ = 0;
  buffered_ = 0;
}

void Xxh64Stream::Update(const void* data, size_t size) {
  if (size == 0) return;
  const uint8_t* p = static_cast<const uint8_t*>(data);
  total_length_ += size;
  if (buffered_ > 0) {
    size_t take = 32 - buffered_;
    if (take > size) take = size;
    std::memcpy(buffer_ + buffered_, p, take);
    buffered_ += take;
    p += take;
    size -= take;
    if (buffered_ < 32) return;
    ConsumeStripes(acc_, buffer_, 32);
    buffered_ = 0;
  }
  size_t done = ConsumeStripes(acc_, p, size);
  if (done < size) {
    std::memcpy(buffer_, p + done, size - done);
    buffered_ = size - done;
  }
}

uint64_t Xxh64Stream::Digest() const {
  uint64_t h = total_length_ >= 32 ? ConvergeAccumulators(acc_) : seed_ + kPrime5;
  return Finish(h, total_length_, buffer_, buffered_);
}

std::string Xxh64ToHex(uint64_t hash) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<size_t>(i)] = kDigits[hash & 0xF];
    hash >>= 4;
  }
  return out;
}

}  // namespace sorun
