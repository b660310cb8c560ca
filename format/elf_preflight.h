// PreflightSharedLibrary: checks, before dlopen, that a file is a loadable ELF shared library whose
// program headers stay inside the file. glibc's loader maps segments without checking them against
// the file size and dies with SIGBUS on a truncated library (and may read wild addresses from a
// corrupt dynamic section); this check turns those into errors naming the file and the cause.
// Checks: ELF magic, 64-bit little-endian, ET_DYN, this machine's architecture, the program header
// table, every PT_LOAD and PT_DYNAMIC range within the file, and the dynamic section's string,
// symbol and hash tables inside a loaded segment. Pure function of the file; thread-safe.
//
// ReadElfDynamicFacts is the one reader of the program headers and the dynamic section: the
// preflight uses it, and so does inspect/elf_reader (ElfImage) to find the dynamic symbol table
// of a library whose section headers were stripped, exactly as the dynamic loader finds it.
#ifndef SORUN_FORMAT_ELF_PREFLIGHT_H_
#define SORUN_FORMAT_ELF_PREFLIGHT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "format/elf_struct.h"

namespace sorun {

// One program header (an <elf.h> Elf64_Phdr) as stored, with where it is.
struct ElfProgramHeader {
  uint32_t index = 0;          // position in the program header table
  uint64_t header_offset = 0;  // file offset of the header
  uint32_t type = 0;           // p_type (PT_LOAD, PT_DYNAMIC, ...)
  uint32_t flags = 0;          // p_flags (PF_R, PF_W, PF_X)
  uint64_t offset = 0;         // p_offset
  uint64_t vaddr = 0;          // p_vaddr
  uint64_t paddr = 0;          // p_paddr
  uint64_t filesz = 0;         // p_filesz
  uint64_t memsz = 0;          // p_memsz
  uint64_t align = 0;          // p_align

  // From the header as stored, and back (the blob injector writes headers).
  static ElfProgramHeader FromElf64(const Elf64_Phdr& h, uint32_t index, uint64_t header_offset) {
    return ElfProgramHeader{index,     header_offset, h.p_type,   h.p_flags, h.p_offset,
                            h.p_vaddr, h.p_paddr,     h.p_filesz, h.p_memsz, h.p_align};
  }
  Elf64_Phdr ToElf64() const { return Elf64_Phdr{type, flags, offset, vaddr, paddr, filesz, memsz, align}; }
};

// The program headers of an ELF64 little-endian image and the dynamic-section entries the loader
// follows, validated by ReadElfDynamicFacts: every PT_LOAD and PT_DYNAMIC lies inside the file, a
// PT_LOAD has p_filesz <= p_memsz, and every address-valued entry listed below points into the
// file-backed part of a PT_LOAD. Plain data; thread-compatible.
struct ElfDynamicFacts {
  std::vector<ElfProgramHeader> headers;  // every program header, in table order
  bool has_dynamic = false;               // a PT_DYNAMIC header exists
  // The entries of the first PT_DYNAMIC, in order, up to and including the first DT_NULL (all of its
  // whole 16-byte slots when none terminates it: `dynamic_terminated` false).
  std::vector<Elf64_Dyn> dynamic_entries;
  bool dynamic_terminated = false;
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

// The architecture an ELF e_machine value stands for: "x86_64", "aarch64", "riscv", "arm", "x86"; "ELF
// machine N" for any other. The one table: the wrong-architecture refusal below ("built for aarch64, this
// machine is x86_64") and `sorun inspect`'s machine field (ElfImage::MachineName) both use it.
std::string ElfMachineName(uint16_t machine);
// The e_machine of the machine sorun was built for (EM_X86_64, EM_AARCH64); 0 on any other.
uint16_t HostElfMachine();

Status PreflightSharedLibrary(const std::string& path);
// The same on bytes in memory (tests, fuzzing). `path` names the file in messages; `machine` is the
// e_machine the file must have (this machine's by default; 0: any, for checks of a file's structure
// made on another architecture than its own).
Status PreflightSharedLibraryBytes(const uint8_t* data, size_t size, const std::string& path,
                                   uint16_t machine = HostElfMachine());

}  // namespace sorun

#endif  // SORUN_FORMAT_ELF_PREFLIGHT_H_
