#include "base/xxhash64.h"

// xxHash in header-only mode: every function is compiled into this file with internal linkage, so
// no libxxhash.so is linked at build or run time.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <new>

namespace sorun {
namespace {

XXH64_state_t* StateAt(unsigned char* storage) { return std::launder(reinterpret_cast<XXH64_state_t*>(storage)); }
const XXH64_state_t* StateAt(const unsigned char* storage) {
  return std::launder(reinterpret_cast<const XXH64_state_t*>(storage));
}

}  // namespace

uint64_t Xxh64(const void* data, size_t size, uint64_t seed) { return XXH64(size == 0 ? "" : data, size, seed); }

void Xxh64Stream::Reset(uint64_t seed) {
  static_assert(sizeof(XXH64_state_t) <= sizeof(state_), "Xxh64Stream::state_ is too small for XXH64_state_t");
  static_assert(alignof(XXH64_state_t) <= 8, "Xxh64Stream::state_ is alignas(8)");
  XXH64_state_t* state = new (state_) XXH64_state_t;
  XXH64_reset(state, seed);  // cannot fail for a valid state
  total_length_ = 0;
}

void Xxh64Stream::Update(const void* data, size_t size) {
  if (size == 0) return;
  XXH64_update(StateAt(state_), data, size);  // cannot fail for non-null input
  total_length_ += size;
}

uint64_t Xxh64Stream::Digest() const { return XXH64_digest(StateAt(state_)); }

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
