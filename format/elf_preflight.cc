#include "format/elf_preflight.h"

#include <elf.h>

#include <cstring>
#include <vector>

#include "format/binary_reader.h"
#include "base/file_util.h"

namespace sorun {
namespace {

Status Bad(const std::string& path, const std::string& why) {
  return DataLoss(path + ": not a loadable shared library: " + why);
}

uint16_t U16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t U32(const uint8_t* p) { return static_cast<uint32_t>(U16(p)) | (static_cast<uint32_t>(U16(p + 2)) << 16); }
uint64_t U64(const uint8_t* p) { return static_cast<uint64_t>(U32(p)) | (static_cast<uint64_t>(U32(p + 4)) << 32); }

}  // namespace

Status PreflightSharedLibraryBytes(const uint8_t* data, size_t size, const std::string& path) {
  if (size < SELFMAG || std::memcmp(data, ELFMAG, SELFMAG) != 0) {
    return DataLoss(path + ": not an ELF file (no \\x7fELF magic at byte 0)");
  }
  if (size < sizeof(Elf64_Ehdr)) {
    return Bad(path, "the file has " + std::to_string(size) + " bytes, fewer than an ELF header (truncated?)");
  }
  if (data[EI_CLASS] != ELFCLASS64) return Bad(path, "not a 64-bit ELF file");
  if (data[EI_DATA] != ELFDATA2LSB) return Bad(path, "not a little-endian ELF file");
  Elf64_Ehdr eh;
  std::memcpy(&eh, data, sizeof(eh));
  if (eh.e_type != ET_DYN) return Bad(path, "ELF type " + std::to_string(eh.e_type) + " is not a shared object (ET_DYN)");
#if defined(__x86_64__)
  const uint16_t machine = EM_X86_64;
#elif defined(__aarch64__)
  const uint16_t machine = EM_AARCH64;
#else
  const uint16_t machine = eh.e_machine;
#endif
  if (eh.e_machine != machine) {
    return Bad(path, "built for ELF machine " + std::to_string(eh.e_machine) + ", this machine is " + std::to_string(machine));
  }
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0) return Bad(path, "bad program header table");
  SORUN_ASSIGN_OR_RETURN(ElfDynamicFacts facts, ReadElfDynamicFacts(data, size, path));
  bool has_load = false;
  for (const ElfProgramHeader& p : facts.headers) has_load = has_load || p.type == PT_LOAD;
  if (!has_load) return Bad(path, "no loadable segment");
  if (!facts.has_dynamic) return Bad(path, "no dynamic section");
  if (facts.strtab == 0 || facts.symtab == 0) return Bad(path, "the dynamic section has no symbol or string table");
  return Status::Ok();
}

std::optional<uint64_t> ElfDynamicFacts::FileOffset(uint64_t vaddr, uint64_t length) const {
  for (const ElfProgramHeader& p : headers) {
    if (p.type != PT_LOAD || vaddr < p.vaddr) continue;
    const uint64_t delta = vaddr - p.vaddr;
    if (delta < p.filesz && length <= p.filesz - delta) return p.offset + delta;
  }
  return std::nullopt;
}

StatusOr<ElfDynamicFacts> ReadElfDynamicFacts(const uint8_t* data, size_t size, const std::string& path) {
  ElfDynamicFacts facts;
  if (size < sizeof(Elf64_Ehdr)) return Bad(path, "the file is shorter than an ELF header");
  const uint64_t phoff = U64(data + 32);
  const uint16_t phentsize = U16(data + 54);
  const uint16_t phnum = U16(data + 56);
  if (phnum == 0) return facts;
  if (phentsize < sizeof(Elf64_Phdr)) {
    return Bad(path, "e_phentsize " + std::to_string(phentsize) + " is smaller than an Elf64_Phdr (56 bytes)");
  }
  if (phoff > size || phnum > (size - phoff) / phentsize) {
    return Bad(path, "program header table (byte " + std::to_string(phoff) + ", " + std::to_string(phnum) +
                         " entries) lies past the end of the " + std::to_string(size) + "-byte file (truncated?)");
  }
  const ElfProgramHeader* dynamic = nullptr;
  facts.headers.reserve(phnum);
  for (uint32_t i = 0; i < phnum; ++i) {
    const uint64_t at = phoff + static_cast<uint64_t>(i) * phentsize;
    const uint8_t* h = data + at;
    ElfProgramHeader p;
    p.index = i;
    p.header_offset = at;
    p.type = U32(h);
    p.flags = U32(h + 4);
    p.offset = U64(h + 8);
    p.vaddr = U64(h + 16);
    p.filesz = U64(h + 32);
    p.memsz = U64(h + 40);
    facts.headers.push_back(p);
    if (p.type != PT_LOAD && p.type != PT_DYNAMIC) continue;
    if (p.offset > size || p.filesz > size - p.offset) {
      return Bad(path, std::string(p.type == PT_LOAD ? "segment" : "dynamic section") + " " + std::to_string(i) +
                           " (program header at byte " + std::to_string(at) + ") needs file bytes " +
                           std::to_string(p.offset) + " + " + std::to_string(p.filesz) + " but the file has " +
                           std::to_string(size) + " (truncated?)");
    }
    if (p.type == PT_LOAD && p.filesz > p.memsz) {
      return Bad(path, "segment " + std::to_string(i) + " has p_filesz > p_memsz");
    }
    if (p.type == PT_DYNAMIC && dynamic == nullptr) dynamic = &facts.headers.back();
  }
  if (dynamic == nullptr) return facts;
  facts.has_dynamic = true;
  // Addresses the loader dereferences must be backed by file bytes of a loaded segment.
  const uint64_t dyn_offset = dynamic->offset;
  const size_t count = static_cast<size_t>(dynamic->filesz / sizeof(Elf64_Dyn));
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* d = data + dyn_offset + i * sizeof(Elf64_Dyn);
    const int64_t tag = static_cast<int64_t>(U64(d));
    const uint64_t value = U64(d + 8);
    if (tag == DT_NULL) break;
    uint64_t* field = nullptr;
    switch (tag) {
      case DT_STRTAB: field = &facts.strtab; break;
      case DT_SYMTAB: field = &facts.symtab; break;
      case DT_HASH: field = &facts.hash; break;
      case DT_GNU_HASH: field = &facts.gnu_hash; break;
      case DT_STRSZ: field = &facts.strsz; break;
      case DT_SYMENT: field = &facts.syment; break;
      default: break;
    }
    switch (tag) {
      case DT_STRTAB:
      case DT_SYMTAB:
      case DT_HASH:
      case DT_GNU_HASH:
      case DT_VERSYM:
      case DT_RELA:
      case DT_JMPREL:
        if (!facts.FileOffset(value, 1)) {
          return Bad(path, "dynamic entry " + std::to_string(i) + " (tag " + std::to_string(tag) + ", byte " +
                               std::to_string(dyn_offset + i * sizeof(Elf64_Dyn)) +
                               ") points outside the file's loaded segments");
        }
        break;
      default:
        break;
    }
    if (field != nullptr && *field == 0) *field = value;
  }
  return facts;
}

Status PreflightSharedLibrary(const std::string& path) {
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<MappedFile> file, MappedFile::Open(path));
  return PreflightSharedLibraryBytes(file->data(), file->size(), path);
}

}  // namespace sorun
