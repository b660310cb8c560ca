// Reading the ELF64 structs of glibc's <elf.h> (Elf64_Ehdr, Elf64_Phdr, Elf64_Shdr, Elf64_Sym,
// Elf64_Dyn) out of untrusted bytes: every read is range-checked and copied with memcpy, never by
// casting a pointer into the file (which may be unaligned). sorun reads little-endian ELF files on
// little-endian hosts only (x86-64, AArch64, RISC-V), so the copied fields need no byte swapping;
// the static_assert below keeps a big-endian build from compiling. Header-only; stateless.
#ifndef SORUN_FORMAT_ELF_STRUCT_H_
#define SORUN_FORMAT_ELF_STRUCT_H_

#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace sorun {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "sorun reads little-endian ELF structs with memcpy: a big-endian host would need byte swapping");

// True when [offset, offset + length) lies inside [0, size). Overflow-safe.
inline bool ElfRangeFits(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

// Copies the T at byte `offset` of [data, data + size) into *out; false (and *out untouched) when it
// does not lie inside the bytes.
template <typename T>
bool CopyElfStruct(const uint8_t* data, size_t size, uint64_t offset, T* out) {
  static_assert(std::is_trivially_copyable_v<T>, "ELF structs are plain data");
  if (!ElfRangeFits(offset, sizeof(T), size)) return false;
  std::memcpy(out, data + offset, sizeof(T));
  return true;
}

}  // namespace sorun

#endif  // SORUN_FORMAT_ELF_STRUCT_H_
