// XXH64: Yann Collet's 64-bit non-cryptographic hash, written from the public algorithm description
// (https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md). Used by the OpenCL program cache
// for entry keys and payload checksums. Inputs are read as little-endian words (sorun only supports
// little-endian hosts, like TVM's formats).
//
// Internal to //runtime/opencl (and its tests). Pure functions; thread-safe.
#ifndef SORUN_RUNTIME_OPENCL_XXHASH64_H_
#define SORUN_RUNTIME_OPENCL_XXHASH64_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sorun {
namespace opencl {

// XXH64 of `size` bytes at `data` with `seed`.
uint64_t Xxh64(const void* data, size_t size, uint64_t seed = 0);
inline uint64_t Xxh64(std::string_view bytes, uint64_t seed = 0) { return Xxh64(bytes.data(), bytes.size(), seed); }

}  // namespace opencl
}  // namespace sorun

#endif  // SORUN_RUNTIME_OPENCL_XXHASH64_H_
