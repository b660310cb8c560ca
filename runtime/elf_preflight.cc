#include "runtime/elf_preflight.h"

#include <elf.h>

#include <cstring>
#include <vector>

#include "runtime/binary_reader.h"
#include "runtime/file_util.h"

namespace sorun {
namespace {

struct Load {
  uint64_t vaddr, filesz, memsz;
};

Status Bad(const std::string& path, const std::string& why) {
  return DataLoss(path + ": not a loadable shared library: " + why);
}

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
  uint64_t ph_end = eh.e_phoff + static_cast<uint64_t>(eh.e_phnum) * sizeof(Elf64_Phdr);
  if (eh.e_phoff > size || ph_end > size || ph_end < eh.e_phoff) {
    return Bad(path, "program header table (byte " + std::to_string(eh.e_phoff) + ", " + std::to_string(eh.e_phnum) +
                         " entries) lies past the end of the " + std::to_string(size) + "-byte file (truncated?)");
  }
  std::vector<Load> loads;
  const Elf64_Phdr* dynamic = nullptr;
  std::vector<Elf64_Phdr> phdrs(eh.e_phnum);
  std::memcpy(phdrs.data(), data + eh.e_phoff, eh.e_phnum * sizeof(Elf64_Phdr));
  for (size_t i = 0; i < phdrs.size(); ++i) {
    const Elf64_Phdr& p = phdrs[i];
    if (p.p_type != PT_LOAD && p.p_type != PT_DYNAMIC) continue;
    uint64_t end = p.p_offset + p.p_filesz;
    if (end < p.p_offset || end > size) {
      return Bad(path, std::string(p.p_type == PT_LOAD ? "segment" : "dynamic section") + " " + std::to_string(i) +
                           " needs file bytes " + std::to_string(p.p_offset) + ".." + std::to_string(end) +
                           " but the file has " + std::to_string(size) + " (truncated?)");
    }
    if (p.p_type == PT_LOAD) {
      if (p.p_filesz > p.p_memsz) return Bad(path, "segment " + std::to_string(i) + " has p_filesz > p_memsz");
      loads.push_back(Load{p.p_vaddr, p.p_filesz, p.p_memsz});
    } else {
      dynamic = &phdrs[i];
    }
  }
  if (loads.empty()) return Bad(path, "no loadable segment");
  if (dynamic == nullptr) return Bad(path, "no dynamic section");
  // Addresses the loader dereferences must be backed by file bytes of a loaded segment.
  auto mapped = [&](uint64_t vaddr) {
    for (const Load& l : loads) {
      if (vaddr >= l.vaddr && vaddr < l.vaddr + l.filesz) return true;
    }
    return false;
  };
  const size_t count = dynamic->p_filesz / sizeof(Elf64_Dyn);
  bool has_strtab = false, has_symtab = false;
  for (size_t i = 0; i < count; ++i) {
    Elf64_Dyn d;
    std::memcpy(&d, data + dynamic->p_offset + i * sizeof(Elf64_Dyn), sizeof(d));
    if (d.d_tag == DT_NULL) break;
    switch (d.d_tag) {
      case DT_STRTAB:
      case DT_SYMTAB:
      case DT_HASH:
      case DT_GNU_HASH:
      case DT_VERSYM:
      case DT_RELA:
      case DT_JMPREL:
        if (!mapped(d.d_un.d_ptr)) {
          return Bad(path, "dynamic entry " + std::to_string(i) + " (tag " + std::to_string(d.d_tag) +
                               ") points outside the file's loaded segments");
        }
        has_strtab = has_strtab || d.d_tag == DT_STRTAB;
        has_symtab = has_symtab || d.d_tag == DT_SYMTAB;
        break;
      default:
        break;
    }
  }
  if (!has_strtab || !has_symtab) return Bad(path, "the dynamic section has no symbol or string table");
  return Status::Ok();
}

Status PreflightSharedLibrary(const std::string& path) {
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<MappedFile> file, MappedFile::Open(path));
  return PreflightSharedLibraryBytes(file->data(), file->size(), path);
}

}  // namespace sorun
