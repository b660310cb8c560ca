// PreflightSharedLibrary: checks, before dlopen, that a file is a loadable ELF shared library whose
// program headers stay inside the file. glibc's loader maps segments without checking them against
// the file size and dies with SIGBUS on a truncated library (and may read wild addresses from a
// corrupt dynamic section); this check turns those into errors naming the file and the cause.
// Checks: ELF magic, 64-bit little-endian, ET_DYN, this machine's architecture, the program header
// table, every PT_LOAD and PT_DYNAMIC range within the file, and the dynamic section's string,
// symbol and hash tables inside a loaded segment. Pure function of the file; thread-safe.
//
// ReadElfDynamicFacts is the one reader of the program headers and the dynamic section: the
// preflight uses it, and so does packer/elf_reader (ElfImage) to find the dynamic symbol table
// of a library whose section headers were stripped, exactly as the dynamic loader finds it.
#ifndef SORUN_FORMAT_ELF_PREFLIGHT_H_
#define SORUN_FORMAT_ELF_PREFLIGHT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace sorun {

// One program header (Elf64_Phdr) as stored.
struct ElfProgramHeader {
  uint32_t index = 0;          // position in the program header table
  uint64_t header_offset = 0;  // file offset of the header
  uint32_t type = 0;           // p_type (PT_LOAD = 1, PT_DYNAMIC = 2, ...)
  uint32_t flags = 0;          // p_flags (PF_R = 4, PF_W = 2, PF_X = 1)
  uint64_t offset = 0;         // p_offset
  uint64_t vaddr = 0;          // p_vaddr
  uint64_t filesz = 0;         // p_filesz
  uint64_t memsz = 0;          // p_memsz
};

// The program headers of an ELF64 little-endian image and the dynamic-section entries the loader
// follows, validated by ReadElfDynamicFacts: every PT_LOAD and PT_DYNAMIC lies inside the file, a
// PT_LOAD has p_filesz <= p_memsz, and every address-valued entry listed below points into the
// file-backed part of a PT_LOAD. Plain data; thread-compatible.
struct ElfDynamicFacts {
  std::vector<ElfProgramHeader> headers;  // every program header, in table order
  bool has_dynamic = false;               // a PT_DYNAMIC header exists
  // d_val / d_ptr of the first DT_STRTAB, DT_STRSZ, DT_SYMTAB, DT_SYMENT, DT_HASH, DT_GNU_HASH; 0
  // when the tag is absent.
  uint64_t strtab = 0, strsz = 0, symtab = 0, syment = 0, hash = 0, gnu_hash = 0;

  // The file offset of [vaddr, vaddr + length) when it lies inside the file-backed part
  // [p_vaddr, p_vaddr + p_filesz) of one PT_LOAD; nullopt otherwise. Overflow-safe.
  std::optional<uint64_t> FileOffset(uint64_t vaddr, uint64_t length) const;
};

// Reads the program header table described by the ELF header of [data, data + size) (a complete
// 64-byte ELF64 little-endian header the caller has checked) and the PT_DYNAMIC entries. DataLoss
// "<path>: not a loadable shared library: <what>" naming the header index and the bytes at fault.
// An image without program headers (a relocatable object) gives empty facts.
StatusOr<ElfDynamicFacts> ReadElfDynamicFacts(const uint8_t* data, size_t size, const std::string& path);

Status PreflightSharedLibrary(const std::string& path);
// The same on bytes in memory (tests, fuzzing). `path` names the file in messages.
Status PreflightSharedLibraryBytes(const uint8_t* data, size_t size, const std::string& path);

}  // namespace sorun

#endif  // SORUN_FORMAT_ELF_PREFLIGHT_H_
