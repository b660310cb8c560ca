// XXH64: the 64-bit xxHash function, from the xxHash library (Debian libxxhash-dev) compiled
// header-only into xxhash64.cc (XXH_INLINE_ALL: no shared library is linked). This header keeps
// sorun's own small interface so callers never see <xxhash.h>. Used for the blob checksum and the
// OpenCL program-cache keys. Not a cryptographic hash.
//
// Xxh64() hashes one buffer; Xxh64Stream hashes input fed in chunks of any size and produces the same
// value as Xxh64() over the concatenation. Xxh64Stream owns only its fixed-size state (no heap) and
// borrows each input buffer for the duration of Update(). Pure functions are thread-safe; one
// Xxh64Stream must not be used from several threads at once. The output is the same on any host.
#ifndef SORUN_BASE_XXHASH64_H_
#define SORUN_BASE_XXHASH64_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sorun {

// XXH64 of [data, data + size) with `seed`. `data` may be null when size is 0.
uint64_t Xxh64(const void* data, size_t size, uint64_t seed = 0);
inline uint64_t Xxh64(std::string_view bytes, uint64_t seed = 0) { return Xxh64(bytes.data(), bytes.size(), seed); }

// Incremental XXH64.
class Xxh64Stream {
 public:
  explicit Xxh64Stream(uint64_t seed = 0) { Reset(seed); }

  // Starts over with `seed`, forgetting all input.
  void Reset(uint64_t seed = 0);
  // Appends [data, data + size). `data` may be null when size is 0.
  void Update(const void* data, size_t size);
  // XXH64 of all input so far. Does not change the state: more Update() calls may follow.
  uint64_t Digest() const;
  // Bytes consumed since the last Reset().
  uint64_t total_length() const { return total_length_; }

 private:
  // Storage for xxHash's XXH64_state_t (88 bytes in xxHash 0.8; checked in xxhash64.cc), kept opaque
  // so this header does not include <xxhash.h>.
  alignas(8) unsigned char state_[96];
  uint64_t total_length_;
};

// The canonical spelling of a hash: 16 lower-case hex digits, most significant first.
std::string Xxh64ToHex(uint64_t hash);

}  // namespace sorun

#endif  // SORUN_BASE_XXHASH64_H_
