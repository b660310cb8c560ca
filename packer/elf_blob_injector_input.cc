// Reading and checking the input of an injection: the arguments, the ELF header, the program headers,
// the dynamic section, and the section headers of the live symbol, string, version and hash tables.
#include "packer/elf_blob_injector_state.h"

#include <algorithm>
#include <string>
#include <vector>

#include "format/binary_reader.h"
#include "serialization/blob_checksum.h"

namespace sorun {
namespace blob_injection {

Status Injector::CheckArguments() const {
  const std::string& symbol = options_.blob_symbol;
  if (symbol != keys::kSymbolDevMblob && symbol != keys::kSymbolFfiLibraryBin &&
      symbol != keys::kSymbolFfiLibraryBinV22) {
    return InvalidArgument("blob symbol '" + symbol + "' is none of " + keys::kSymbolDevMblob + ", " +
                           keys::kSymbolFfiLibraryBin + " and " + keys::kSymbolFfiLibraryBinV22);
  }
  if (blob_.size() < 8) {
    return InvalidArgument("blob of " + std::to_string(blob_.size()) + " bytes: a " + symbol +
                           " needs at least its 8-byte length prefix");
  }
  uint64_t prefix = 0;
  for (int i = 7; i >= 0; --i) prefix = (prefix << 8) | static_cast<uint8_t>(blob_[i]);
  if (prefix != blob_.size() - 8) {
    return InvalidArgument("blob length prefix says " + std::to_string(prefix) + " payload bytes but " +
                           std::to_string(blob_.size() - 8) + " follow it");
  }
  if (!checksum_.empty()) {
    if (checksum_.size() != kBlobChecksumRecordBytes) {
      return InvalidArgument("checksum record of " + std::to_string(checksum_.size()) + " bytes (expected " +
                             std::to_string(kBlobChecksumRecordBytes) + " or none)");
    }
    Status s = VerifyBlobChecksum(reinterpret_cast<const uint8_t*>(blob_.data()), blob_.size(), checksum_.data(),
                                  checksum_.size());
    if (!s.ok()) {
      return InvalidArgument("the checksum record does not describe this blob: " + s.message());
    }
  }
  return Status::Ok();
}

Status Injector::ReadHeader() {
  if (image_.type() != ET_DYN) {
    const uint16_t t = image_.type();
    const std::string kind = t == ET_EXEC   ? " (ET_EXEC, an executable)"
                             : t == ET_REL  ? " (ET_REL, an object file)"
                             : t == ET_CORE ? " (ET_CORE, a core dump)"
                                            : "";
    return InvalidArgument(name_ + ": e_type " + std::to_string(t) + kind +
                           " is not a shared library (ET_DYN); only shared libraries can be packed");
  }
  const uint16_t m = image_.machine();
  if (m != EM_X86_64 && m != EM_AARCH64 && m != EM_RISCV) {
    return Unsupported("e_machine " + std::to_string(m) + " (" + image_.MachineName() +
                       "): only x86-64, AArch64 and RISC-V libraries are supported");
  }
  const Elf64_Ehdr& eh = image_.header();  // read and checked by ElfImage::Parse
  phoff_ = eh.e_phoff;
  shoff_ = eh.e_shoff;
  phnum_ = eh.e_phnum;
  shnum_ = eh.e_shnum;
  shstrndx_ = eh.e_shstrndx;
  const uint16_t phentsize = eh.e_phentsize;
  if (phnum_ == 0) return InvalidArgument(name_ + ": no program headers: not a loadable shared library");
  if (phnum_ == PN_XNUM) return Unsupported("extended program header numbering (e_phnum PN_XNUM)");
  if (phentsize != sizeof(Elf64_Phdr)) {
    return Unsupported("e_phentsize " + std::to_string(phentsize) + " (expected 56)");
  }
  if (phoff_ < sizeof(Elf64_Ehdr)) {
    return Unsupported("e_phoff " + std::to_string(phoff_) + ": the program header table overlaps the ELF header");
  }
  if (shoff_ == 0 || image_.sections().empty()) {
    return Unsupported("the file has no section header table (sstrip'ed?); it is needed to find the symbol tables");
  }
  if (shnum_ == 0 || shstrndx_ == SHN_XINDEX) {
    return Unsupported("extended section numbering (e_shnum 0 or e_shstrndx SHN_XINDEX)");
  }
  if (shstrndx_ == 0) return Unsupported("the file has no section-name table (e_shstrndx 0)");
  return Status::Ok();
}

Status Injector::ReadProgramHeaders() {
  // ElfImage::Parse read the table (ReadElfDynamicFacts); e_phentsize is 56 (ReadHeader).
  phdrs_ = image_.program_headers();
  const ElfProgramHeader* previous_load = nullptr;
  load_align_ = kMinPageSize;
  for (uint16_t i = 0; i < phnum_; ++i) {
    const ElfProgramHeader& p = phdrs_[i];
    const uint64_t at = p.header_offset;
    const std::string label = "program header " + std::to_string(i);
    if (p.memsz > UINT64_MAX - p.vaddr)
      return Malformed(at + offsetof(Elf64_Phdr, p_vaddr), label, "p_vaddr + p_memsz overflows");
    if (p.type == PT_INTERP) {
      return InvalidArgument(name_ + ": " + label + " is PT_INTERP: this is an executable, not a shared library");
    }
    if (p.type == PT_LOAD) {
      if (p.filesz > p.memsz)
        return Malformed(at + offsetof(Elf64_Phdr, p_filesz), label, "PT_LOAD p_filesz exceeds p_memsz");
      if (!ElfRangeFits(p.offset, p.filesz, in_.size())) {
        return Malformed(at + offsetof(Elf64_Phdr, p_offset), label,
                         "PT_LOAD file range [" + std::to_string(p.offset) + ", +" + std::to_string(p.filesz) +
                             ") extends past the end of the file (" + std::to_string(in_.size()) + " bytes)");
      }
      if (p.align > 1 && !IsPowerOfTwo(p.align)) {
        return Malformed(at + offsetof(Elf64_Phdr, p_align), label,
                         "PT_LOAD p_align " + std::to_string(p.align) + " is not a power of two");
      }
      if (previous_load != nullptr && p.vaddr < previous_load->vaddr + previous_load->memsz) {
        return Unsupported(label + ": PT_LOAD segments overlap or are not sorted by address");
      }
      load_align_ = std::max(load_align_, p.align);
      previous_load = &p;
      last_load_ = i;
    } else if (p.type == PT_DYNAMIC) {
      if (dynamic_ != nullptr) return Unsupported("more than one PT_DYNAMIC");
      dynamic_ = &p;
    }
    vaddr_end_ = std::max(vaddr_end_, p.vaddr + p.memsz);
  }
  if (previous_load == nullptr) return InvalidArgument(name_ + ": no PT_LOAD segment: nothing is loadable");
  if (dynamic_ == nullptr) {
    return InvalidArgument(name_ + ": no PT_DYNAMIC segment: not a dynamically loadable shared library");
  }
  if (load_align_ > kMaxLoadAlignment) {
    return Unsupported("PT_LOAD alignment " + HexString(load_align_) + " (more than 1 GiB)");
  }
  // The end of the file bytes that a loader with pages up to load_align_ maps for the segments.
  for (const ElfProgramHeader& p : phdrs_) {
    if (p.type != PT_LOAD) continue;
    uint64_t end_in_memory = 0;
    if (!AlignUp(p.vaddr + p.filesz, load_align_, &end_in_memory)) {
      return Malformed(phoff_, "program header table", "PT_LOAD end overflows when page-aligned");
    }
    file_map_end_ = std::max(file_map_end_, p.offset + p.filesz + (end_in_memory - (p.vaddr + p.filesz)));
  }
  // vaddr_end_ covers every segment, PT_GNU_RELRO (lld pads it to a page) and PT_TLS included, so the
  // new segment lies above anything the loader maps, protects or reserves for the input.
  return Status::Ok();
}

bool Injector::FileOffsetOf(uint64_t vaddr, uint64_t size, uint64_t* offset) const {
  for (const ElfProgramHeader& p : phdrs_) {
    if (p.type == PT_LOAD && vaddr >= p.vaddr && size <= p.filesz && vaddr - p.vaddr <= p.filesz - size) {
      *offset = p.offset + (vaddr - p.vaddr);
      return true;
    }
  }
  return false;
}

Status Injector::ReadDynamicSection() {
  const ElfProgramHeader& d = *dynamic_;
  const std::string label = "PT_DYNAMIC";
  uint64_t mapped = 0;
  if (!FileOffsetOf(d.vaddr, d.filesz, &mapped) || mapped != d.offset) {
    return Unsupported("PT_DYNAMIC (file offset " + std::to_string(d.offset) + ", address " + HexString(d.vaddr) +
                       ") is not file-backed at that address by a PT_LOAD");
  }
  if (d.filesz % sizeof(Elf64_Dyn) != 0) {
    return Malformed(d.offset, label, "p_filesz " + std::to_string(d.filesz) + " is not a multiple of 16");
  }
  dyn_slots_ = static_cast<size_t>(d.filesz / sizeof(Elf64_Dyn));
  // ElfImage read the entries of the first (here: only) PT_DYNAMIC, up to DT_NULL.
  dyn_ = image_.dynamic_entries();
  const bool terminated = image_.dynamic_terminated();
  int seen_symtab = 0, seen_strtab = 0, seen_strsz = 0, seen_hash = 0, seen_gnu_hash = 0, seen_versym = 0;
  for (size_t i = 0; i < dyn_.size(); ++i) {
    const int64_t tag = dyn_[i].d_tag;
    const uint64_t value = dyn_[i].d_un.d_val;
    const uint64_t at = d.offset + i * sizeof(Elf64_Dyn);
    const std::string entry = "dynamic entry " + std::to_string(i);
    switch (tag) {
      case DT_NULL: break;
      case DT_SYMTAB:
        dt_symtab_ = value;
        ++seen_symtab;
        break;
      case DT_STRTAB:
        dt_strtab_ = value;
        ++seen_strtab;
        break;
      case DT_STRSZ:
        dt_strsz_ = value;
        ++seen_strsz;
        break;
      case DT_HASH:
        dt_hash_ = value;
        has_hash_ = true;
        ++seen_hash;
        break;
      case DT_GNU_HASH:
        dt_gnu_hash_ = value;
        has_gnu_hash_ = true;
        ++seen_gnu_hash;
        break;
      case DT_VERSYM:
        dt_versym_ = value;
        has_versym_ = true;
        ++seen_versym;
        break;
      case DT_SYMENT:
        if (value != sizeof(Elf64_Sym)) {
          return Malformed(at + offsetof(Elf64_Dyn, d_un), entry,
                           "DT_SYMENT " + std::to_string(value) + " (expected 24)");
        }
        break;
      case DT_SYMTAB_SHNDX: return Unsupported(entry + " is DT_SYMTAB_SHNDX (extended symbol section indices)");
      case DT_GNU_PRELINKED:
      case DT_CHECKSUM:
      case DT_GNU_CONFLICT:
      case DT_GNU_LIBLIST:
        return Unsupported(entry + " (tag " + HexString(static_cast<uint64_t>(tag)) +
                           ") marks a prelinked library; undo it first (prelink -u)");
      case DT_FLAGS_1:
        if (value & DF_1_PIE) {
          return InvalidArgument(name_ + ": " + entry + " has DF_1_PIE: this is an executable, not a shared library");
        }
        break;
      default: break;
    }
  }
  if (!terminated) return Malformed(d.offset, label, "no DT_NULL terminates the dynamic section");
  if (seen_symtab != 1 || seen_strtab != 1 || seen_strsz != 1) {
    return Unsupported("the dynamic section must have exactly one DT_SYMTAB, DT_STRTAB and DT_STRSZ (found " +
                       std::to_string(seen_symtab) + ", " + std::to_string(seen_strtab) + ", " +
                       std::to_string(seen_strsz) + ")");
  }
  if (seen_hash > 1 || seen_gnu_hash > 1 || seen_versym > 1) {
    return Unsupported("the dynamic section repeats DT_HASH, DT_GNU_HASH or DT_VERSYM");
  }
  if (!has_hash_ && !has_gnu_hash_) {
    return Unsupported("the dynamic section has neither DT_HASH nor DT_GNU_HASH (no symbol hash table)");
  }
  return Status::Ok();
}

StatusOr<uint32_t> Injector::SectionAt(uint64_t address, uint32_t type, const char* tag) const {
  int64_t found = -1;
  for (const ElfSection& s : image_.sections()) {
    if (s.type != type) continue;
    if (found >= 0) {
      return Unsupported("more than one section of the type " + std::string(tag) + " points at (sections " +
                         std::to_string(found) + " and " + std::to_string(s.index) + ")");
    }
    found = s.index;
  }
  if (found < 0) return Unsupported(std::string(tag) + " " + HexString(address) + " has no section header");
  const ElfSection& s = image_.sections()[static_cast<size_t>(found)];
  if (s.addr != address) {
    return Unsupported(std::string(tag) + " is " + HexString(address) + " but " + SectionLabel(s.index) + " is at " +
                       HexString(s.addr));
  }
  uint64_t offset = 0;
  if ((s.flags & SHF_ALLOC) == 0 || !FileOffsetOf(s.addr, s.size, &offset) || offset != s.offset) {
    return Unsupported(SectionLabel(s.index) + " (file offset " + std::to_string(s.offset) + ", address " +
                       HexString(s.addr) + ") is not what a PT_LOAD maps at that address");
  }
  return static_cast<uint32_t>(found);
}

Status Injector::FindTables() {
  SORUN_ASSIGN_OR_RETURN(dynsym_index_, SectionAt(dt_symtab_, SHT_DYNSYM, "DT_SYMTAB"));
  const ElfSection& dynsym = image_.sections()[dynsym_index_];
  dynsym_count_ = image_.dynamic_symbols().size();  // ElfImage read the first (here: only) SHT_DYNSYM
  if (dynsym_count_ == 0) return Unsupported(SectionLabel(dynsym_index_) + " is empty (not even the null symbol)");
  if (dynsym.info > dynsym_count_) {
    return Malformed(
        dynsym.header_offset + offsetof(Elf64_Shdr, sh_info), "section header " + std::to_string(dynsym_index_),
        "sh_info " + std::to_string(dynsym.info) + " exceeds the symbol count " + std::to_string(dynsym_count_));
  }
  dynstr_index_ = dynsym.link;  // ElfImage checked it is a SHT_STRTAB section
  const ElfSection& dynstr = image_.sections()[dynstr_index_];
  uint64_t offset = 0;
  if (dynstr.addr != dt_strtab_ || dynstr.size != dt_strsz_ || (dynstr.flags & SHF_ALLOC) == 0 ||
      !FileOffsetOf(dynstr.addr, dynstr.size, &offset) || offset != dynstr.offset) {
    return Unsupported("DT_STRTAB " + HexString(dt_strtab_) + " / DT_STRSZ " + std::to_string(dt_strsz_) +
                       " do not match " + SectionLabel(dynstr_index_) + " (the .dynsym string table, at " +
                       HexString(dynstr.addr) + ", " + std::to_string(dynstr.size) + " bytes, file offset " +
                       std::to_string(dynstr.offset) + ")");
  }
  if (has_hash_) {
    SORUN_ASSIGN_OR_RETURN(hash_index_, SectionAt(dt_hash_, SHT_HASH, "DT_HASH"));
  }
  if (has_gnu_hash_) {
    SORUN_ASSIGN_OR_RETURN(gnu_hash_index_, SectionAt(dt_gnu_hash_, SHT_GNU_HASH, "DT_GNU_HASH"));
  }
  bool versym_section = false, extra_dynsym = false, extra_symtab = false, have_symtab = false;
  for (const ElfSection& s : image_.sections()) {
    if (s.type == SHT_GNU_versym) versym_section = true;
    if (s.type == SHT_DYNSYM && s.index != dynsym_index_) extra_dynsym = true;
    if (s.type == SHT_SYMTAB) {
      if (have_symtab) extra_symtab = true;
      have_symtab = true;
      symtab_index_ = s.index;
      strtab_index_ = s.link;
    }
    if ((s.type == SHT_HASH && !has_hash_) || (s.type == SHT_GNU_HASH && !has_gnu_hash_)) {
      return Unsupported(SectionLabel(s.index) + " is a hash table that the dynamic section does not use");
    }
  }
  if (extra_dynsym) return Unsupported("more than one SHT_DYNSYM section");
  if (extra_symtab) return Unsupported("more than one SHT_SYMTAB section");
  if (symtab_index_ != 0 && strtab_index_ == dynstr_index_) {
    return Unsupported(".symtab names its symbols in .dynstr");
  }
  if (has_versym_) {
    SORUN_ASSIGN_OR_RETURN(versym_index_, SectionAt(dt_versym_, SHT_GNU_versym, "DT_VERSYM"));
    const ElfSection& v = image_.sections()[versym_index_];
    if (v.size != dynsym_count_ * 2 || v.link != dynsym_index_) {
      return Unsupported(SectionLabel(versym_index_) + " (" + std::to_string(v.size) + " bytes, sh_link " +
                         std::to_string(v.link) + ") does not hold one version index per .dynsym symbol (" +
                         std::to_string(dynsym_count_) + ")");
    }
  } else if (versym_section) {
    return Unsupported("a SHT_GNU_versym section exists but the dynamic section has no DT_VERSYM");
  }
  return Status::Ok();
}

Status Injector::CheckHashTables() const {
  // The hash tables must agree with the .dynsym section's symbol count: it is the count we copy.
  if (has_hash_) {
    const ElfSection& s = image_.sections()[hash_index_];
    BinaryReader r(bytes() + s.offset, static_cast<size_t>(s.size), name_ + ": " + SectionLabel(hash_index_), s.offset);
    uint32_t nbucket = 0, nchain = 0;
    SORUN_RETURN_IF_ERROR(r.ReadU32(&nbucket));
    SORUN_RETURN_IF_ERROR(r.ReadU32(&nchain));
    if (nchain != dynsym_count_) {
      return Malformed(s.offset + 4, SectionLabel(hash_index_),
                       "DT_HASH nchain " + std::to_string(nchain) + " differs from the .dynsym symbol count " +
                           std::to_string(dynsym_count_));
    }
    if ((static_cast<uint64_t>(nbucket) + nchain) * 4 > r.remaining()) {
      return Malformed(s.offset, SectionLabel(hash_index_),
                       "DT_HASH table of " + std::to_string(nbucket) + " buckets and " + std::to_string(nchain) +
                           " chains does not fit its " + std::to_string(s.size) + " bytes");
    }
  }
  if (has_gnu_hash_) {
    const ElfSection& s = image_.sections()[gnu_hash_index_];
    const std::string label = SectionLabel(gnu_hash_index_);
    BinaryReader r(bytes() + s.offset, static_cast<size_t>(s.size), name_ + ": " + label, s.offset);
    uint32_t nbuckets = 0, symoffset = 0, bloom_size = 0, bloom_shift = 0;
    SORUN_RETURN_IF_ERROR(r.ReadU32(&nbuckets));
    SORUN_RETURN_IF_ERROR(r.ReadU32(&symoffset));
    SORUN_RETURN_IF_ERROR(r.ReadU32(&bloom_size));
    SORUN_RETURN_IF_ERROR(r.ReadU32(&bloom_shift));
    if (static_cast<uint64_t>(bloom_size) * 8 + static_cast<uint64_t>(nbuckets) * 4 > r.remaining()) {
      return Malformed(s.offset, label, "DT_GNU_HASH bloom filter and buckets do not fit the section");
    }
    SORUN_RETURN_IF_ERROR(r.Skip(static_cast<size_t>(bloom_size) * 8, "bloom filter"));
    std::vector<uint32_t> buckets(nbuckets);
    for (uint32_t& b : buckets) SORUN_RETURN_IF_ERROR(r.ReadU32(&b));
    const uint64_t chain_base = r.offset();
    const uint64_t chains = r.remaining() / 4;
    if (symoffset > dynsym_count_) {
      return Malformed(s.offset + 4, label,
                       "DT_GNU_HASH symoffset " + std::to_string(symoffset) + " exceeds the .dynsym symbol count " +
                           std::to_string(dynsym_count_));
    }
    // Every chain must end inside .dynsym: a symbol the hash table reaches past the section's end would
    // be one our copy loses.
    for (uint32_t b : buckets) {
      if (b == 0) continue;
      if (b < symoffset) {
        return Malformed(s.offset, label,
                         "DT_GNU_HASH bucket starts at symbol " + std::to_string(b) + ", below symoffset " +
                             std::to_string(symoffset));
      }
      for (uint64_t index = b;; ++index) {
        if (index >= dynsym_count_ || index - symoffset >= chains) {
          return Malformed(chain_base, label,
                           "DT_GNU_HASH chain runs past the " + std::to_string(dynsym_count_) + " symbols of .dynsym");
        }
        const uint8_t* word = bytes() + chain_base + 4 * (index - symoffset);  // inside the section (checked)
        if (word[0] & 1) break;  // little-endian: bit 0 of the word is in its first byte
      }
    }
  }
  return Status::Ok();
}

}  // namespace blob_injection
}  // namespace sorun
