#include "format/elf_preflight.h"

#include <elf.h>

#include <cstring>
#include <vector>

#include "base/file_util.h"
#include "format/elf_struct.h"

namespace sorun {
namespace {

Status Bad(const std::string& path, const std::string& why) {
  return DataLoss(path + ": not a loadable shared library: " + why);
}

}  // namespace

std::string ElfMachineName(uint16_t machine) {
  switch (machine) {
    case EM_386: return "x86";
    case EM_ARM: return "arm";
    case EM_X86_64: return "x86_64";
    case EM_AARCH64: return "aarch64";
    case EM_RISCV: return "riscv";
    default: return "ELF machine " + std::to_string(machine);
  }
}

uint16_t HostElfMachine() {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#else
  return 0;
#endif
}

Status PreflightSharedLibraryBytes(const uint8_t* data, size_t size, const std::string& path, uint16_t machine) {
  if (size < SELFMAG || std::memcmp(data, ELFMAG, SELFMAG) != 0) {
    return DataLoss(path + ": not an ELF file (no \\x7fELF magic at byte 0)");
  }
  if (size < sizeof(Elf64_Ehdr)) {
    return Bad(path, "the file has " + std::to_string(size) + " bytes, fewer than an ELF header (truncated?)");
  }
  if (data[EI_CLASS] != ELFCLASS64) return Bad(path, "not a 64-bit ELF file");
  if (data[EI_DATA] != ELFDATA2LSB) return Bad(path, "not a little-endian ELF file");
  Elf64_Ehdr eh;
  CopyElfStruct(data, size, 0, &eh);  // fits: checked above
  if (eh.e_type != ET_DYN)
    return Bad(path, "ELF type " + std::to_string(eh.e_type) + " is not a shared object (ET_DYN)");
  if (machine != 0 && eh.e_machine != machine) {
    return Bad(path, "built for " + ElfMachineName(eh.e_machine) + ", this machine is " + ElfMachineName(machine));
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
  Elf64_Ehdr eh;
  if (!CopyElfStruct(data, size, 0, &eh)) return Bad(path, "the file is shorter than an ELF header");
  const uint64_t phoff = eh.e_phoff;
  const uint16_t phentsize = eh.e_phentsize;
  const uint16_t phnum = eh.e_phnum;
  if (phnum == 0) return facts;
  if (phentsize < sizeof(Elf64_Phdr)) {
    return Bad(path, "e_phentsize " + std::to_string(phentsize) + " is smaller than an Elf64_Phdr (56 bytes)");
  }
  if (phoff > size || phnum > (size - phoff) / phentsize) {
    return Bad(path, "program header table (byte " + std::to_string(phoff) + ", " + std::to_string(phnum) +
                         " entries) lies past the end of the " + std::to_string(size) + "-byte file (truncated?)");
  }
  size_t dynamic = 0;
  bool found_dynamic = false;
  facts.headers.reserve(phnum);
  for (uint32_t i = 0; i < phnum; ++i) {
    const uint64_t at = phoff + static_cast<uint64_t>(i) * phentsize;
    Elf64_Phdr h;
    CopyElfStruct(data, size, at, &h);  // inside the table, checked above
    const ElfProgramHeader p = ElfProgramHeader::FromElf64(h, i, at);
    facts.headers.push_back(p);
    if (p.type != PT_LOAD && p.type != PT_DYNAMIC) continue;
    if (!ElfRangeFits(p.offset, p.filesz, size)) {
      return Bad(path, std::string(p.type == PT_LOAD ? "segment" : "dynamic section") + " " + std::to_string(i) +
                           " (program header at byte " + std::to_string(at) + ") needs file bytes " +
                           std::to_string(p.offset) + " + " + std::to_string(p.filesz) + " but the file has " +
                           std::to_string(size) + " (truncated?)");
    }
    if (p.type == PT_LOAD && p.filesz > p.memsz) {
      return Bad(path, "segment " + std::to_string(i) + " has p_filesz > p_memsz");
    }
    if (p.type == PT_DYNAMIC && !found_dynamic) {
      found_dynamic = true;
      dynamic = facts.headers.size() - 1;
    }
  }
  if (!found_dynamic) return facts;
  facts.has_dynamic = true;
  // Addresses the loader dereferences must be backed by file bytes of a loaded segment.
  const uint64_t dyn_offset = facts.headers[dynamic].offset;
  const size_t count = static_cast<size_t>(facts.headers[dynamic].filesz / sizeof(Elf64_Dyn));
  for (size_t i = 0; i < count; ++i) {
    const uint64_t at = dyn_offset + i * sizeof(Elf64_Dyn);
    Elf64_Dyn d;
    CopyElfStruct(data, size, at, &d);  // inside the PT_DYNAMIC range, checked above
    facts.dynamic_entries.push_back(d);
    const int64_t tag = d.d_tag;
    const uint64_t value = d.d_un.d_val;
    if (tag == DT_NULL) {
      facts.dynamic_terminated = true;
      break;
    }
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
                               std::to_string(at) + ") points outside the file's loaded segments");
        }
        break;
      default: break;
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
