// Planning an injection: the symbols to add or retarget, their names and section indices, whether the
// program header table can grow in place, and the layout of the new segment and the file after it.
#include "packer/elf_blob_injector_state.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "runtime/registry_keys.h"

namespace sorun {
namespace blob_injection {

Status Injector::PlanSymbols() {
  std::vector<std::pair<std::string, bool>> wanted = {{options_.blob_symbol, false}};
  if (!checksum_.empty()) wanted.push_back({keys::kSymbolBlobChecksum, true});
  // Whatever the input already defines under these names.
  for (const std::string& name : {options_.blob_symbol, std::string(keys::kSymbolBlobChecksum)}) {
    std::vector<const ElfSymbol*> dynamic, statics;
    for (const ElfSymbol& s : image_.dynamic_symbols()) {
      if (s.name == name) dynamic.push_back(&s);
    }
    for (const ElfSymbol& s : image_.static_symbols()) {
      if (s.name == name && s.defined()) statics.push_back(&s);
    }
    if (dynamic.empty() && statics.empty()) continue;
    const ElfSymbol& first = dynamic.empty() ? *statics[0] : *dynamic[0];
    const std::string where =
        std::string(image_.sections()[first.table].name) + " symbol " + std::to_string(first.index) + " '" + name + "'";
    if (dynamic.size() > 1)
      return Unsupported(".dynsym has " + std::to_string(dynamic.size()) + " entries named '" + name + "'");
    if (!dynamic.empty() && !dynamic[0]->defined()) {
      return Unsupported(where + " is an undefined reference; the library expects another object to provide it");
    }
    if (!options_.replace_existing) {
      return AlreadyExists(name_ + ": already packed: " + where + " is defined (address " + HexString(first.value) +
                           ", " + std::to_string(first.size) +
                           " bytes); inject into the kernel library without a blob, or replace it "
                           "(BlobInjectionOptions::replace_existing)");
    }
    const bool is_checksum = name == keys::kSymbolBlobChecksum;
    if (is_checksum && checksum_.empty()) {
      return InvalidArgument(name_ + ": " + where +
                             " exists and would no longer match the new blob; give a "
                             "checksum record to replace it");
    }
  }
  for (const auto& [name, is_checksum] : wanted) {
    PlannedSymbol p;
    p.name = name;
    p.is_checksum = is_checksum;
    p.size = is_checksum ? checksum_.size() : blob_.size();
    for (const ElfSymbol& s : image_.dynamic_symbols()) {
      if (s.name == name) p.dynamic_index = s.index;
    }
    for (const ElfSymbol& s : image_.static_symbols()) {
      if (s.name == name && s.defined()) p.static_indices.push_back(s.index);
    }
    symbols_.push_back(std::move(p));
  }

  // Names and section indices.
  dynstr_add_.base = image_.sections()[dynstr_index_].size;
  if (symtab_index_ != 0) strtab_add_.base = image_.sections()[strtab_index_].size;
  shstrtab_add_.base = image_.sections()[shstrndx_].size;
  const bool strtab_is_shstrtab = symtab_index_ != 0 && strtab_index_ == shstrndx_;
  StringAppender& symbol_names = strtab_is_shstrtab ? shstrtab_add_ : strtab_add_;
  insert_at_ = 1;
  for (const ElfSection& s : image_.sections()) {
    if (s.type == SHT_GROUP || s.type == SHT_SYMTAB_SHNDX) {
      return Unsupported(SectionLabel(s.index) +
                         " is a SHT_GROUP / SHT_SYMTAB_SHNDX section (not expected in a "
                         "linked library)");
    }
    if (s.flags & SHF_ALLOC) insert_at_ = std::max(insert_at_, s.index + 1);
  }
  // The blob takes the unused .gnu.hash header when there is one; the checksum record precedes the
  // blob (address order) when both are inserted.
  const bool reuse_gnu_hash = has_hash_ && has_gnu_hash_;
  added_sections_ = (reuse_gnu_hash ? 0 : 1) + (checksum_.empty() ? 0 : 1);
  checksum_section_ = checksum_.empty() ? 0 : insert_at_;
  blob_section_ = reuse_gnu_hash ? gnu_hash_index_ : insert_at_ + (checksum_.empty() ? 0 : 1);
  new_shnum_ = shnum_ + added_sections_;
  if (new_shnum_ >= SHN_LORESERVE) {
    return Unsupported("the file has " + std::to_string(shnum_) + " sections; adding " +
                       std::to_string(added_sections_) + " would need extended section numbering");
  }
  const char* kNameTooLong = "string table would exceed 4 GiB";
  for (PlannedSymbol& p : symbols_) {
    p.section = p.is_checksum ? checksum_section_ : blob_section_;
    if (p.dynamic_index < 0) {
      if (!dynstr_add_.Add(p.name, &p.dynstr_offset)) return Unsupported(std::string(".dynstr ") + kNameTooLong);
      ++appended_;
    }
    if (symtab_index_ != 0 && p.static_indices.empty()) {
      if (!symbol_names.Add(p.name, &p.strtab_offset)) return Unsupported(std::string(".strtab ") + kNameTooLong);
    }
  }
  if (!shstrtab_add_.Add(kBlobSection, &blob_name_) ||
      (!checksum_.empty() && !shstrtab_add_.Add(kChecksumSection, &checksum_name_)) ||
      (!has_hash_ && !shstrtab_add_.Add(kHashSection, &hash_name_))) {
    return Unsupported(std::string(".shstrtab ") + kNameTooLong);
  }
  const uint64_t total_symbols = dynsym_count_ + appended_;
  if (total_symbols > UINT32_MAX) return Unsupported("more than 2^32 dynamic symbols");
  nbucket_ = SysvBucketCount(2 * total_symbols);  // load factor 0.5 to 1
  return Status::Ok();
}

bool Injector::PlanInPlaceProgramHeaders() {
  const uint64_t old_end = phoff_ + static_cast<uint64_t>(phnum_) * sizeof(Elf64_Phdr);
  const uint64_t new_end = old_end + sizeof(Elf64_Phdr);
  auto overlaps = [&](uint64_t offset, uint64_t size) {
    return size != 0 && offset < new_end && old_end < offset + size;
  };
  auto contains = [](uint64_t outer, uint64_t outer_size, uint64_t inner, uint64_t inner_size) {
    return inner >= outer && inner_size <= outer_size && inner - outer <= outer_size - inner_size;
  };
  auto refuse = [&](std::string why) {
    phdrs_moved_reason_ = std::move(why);
    moved_.clear();
    return false;
  };
  // The PT_LOAD that maps the table must map the grown table too (the loader finds it there).
  const ElfProgramHeader* holder = nullptr;
  for (const ElfProgramHeader& p : phdrs_) {
    if (p.type == PT_LOAD && contains(p.offset, p.filesz, phoff_, new_end - phoff_)) holder = &p;
  }
  if (holder == nullptr) return refuse("no PT_LOAD maps the bytes after the program header table");
  // Every section in the way must be a table this injection replaces (its bytes are dead) or a note
  // that moves with its PT_NOTE into the new segment.
  std::vector<size_t> notes;  // phdr indices of PT_NOTEs to move
  for (const ElfSection& s : image_.sections()) {
    if (s.type == SHT_NULL || s.type == SHT_NOBITS || !overlaps(s.offset, s.size)) continue;
    const bool replaced = s.index == dynsym_index_ || s.index == dynstr_index_ ||
                          (has_hash_ && s.index == hash_index_) || (has_gnu_hash_ && s.index == gnu_hash_index_) ||
                          (has_versym_ && s.index == versym_index_);
    if (replaced) continue;
    bool movable = false;
    if (s.type == SHT_NOTE) {
      for (size_t i = 0; i < phdrs_.size(); ++i) {
        const ElfProgramHeader& p = phdrs_[i];
        if (p.type == PT_NOTE && contains(p.offset, p.filesz, s.offset, s.size)) {
          if (std::find(notes.begin(), notes.end(), i) == notes.end()) notes.push_back(i);
          movable = true;
          break;
        }
      }
    }
    if (!movable) return refuse(SectionLabel(s.index) + " follows the program header table");
  }
  for (size_t i : notes) {
    const ElfProgramHeader& n = phdrs_[i];
    if (!ElfRangeFits(n.offset, n.filesz, in_.size())) return refuse("a PT_NOTE extends past the end of the file");
    // A note is file bytes only: its memory size is its file size (a larger p_memsz would be carried to
    // the note's new, higher address, where p_vaddr + p_memsz may overflow).
    if (n.memsz != n.filesz) return refuse("a PT_NOTE whose p_memsz differs from its p_filesz would have to move");
    for (const ElfSection& s : image_.sections()) {  // a moved note range must hold whole notes only
      if (s.type == SHT_NULL || s.type == SHT_NOBITS || s.size == 0) continue;
      const bool touches = s.offset < n.offset + n.filesz && n.offset < s.offset + s.size;
      if (touches && (s.type != SHT_NOTE || !contains(n.offset, n.filesz, s.offset, s.size))) {
        return refuse(SectionLabel(s.index) + " shares bytes with a PT_NOTE that would have to move");
      }
    }
    MovedRange m;
    m.phdr = i;
    m.old_offset = n.offset;
    m.size = n.filesz;
    m.alignment = std::max<uint64_t>(8, IsPowerOfTwo(n.align) ? n.align : 8);
    moved_.push_back(m);
  }
  // Other segments in the way (PT_GNU_PROPERTY, ...) must lie inside a moved note range.
  for (size_t i = 0; i < phdrs_.size(); ++i) {
    const ElfProgramHeader& p = phdrs_[i];
    if (p.type == PT_LOAD || p.type == PT_PHDR || !overlaps(p.offset, p.filesz)) continue;
    bool inside = false;
    for (const MovedRange& m : moved_) inside = inside || contains(m.old_offset, m.size, p.offset, p.filesz);
    if (!inside) return refuse("program header " + std::to_string(i) + " covers the bytes after the table");
  }
  // Nothing the dynamic section points at (other than the tables being replaced) may live there.
  const uint64_t lo = holder->vaddr + (old_end - holder->offset), hi = lo + sizeof(Elf64_Phdr);
  for (const Elf64_Dyn& e : dyn_) {
    switch (e.d_tag) {
      case DT_SYMTAB:
      case DT_STRTAB:
      case DT_HASH:
      case DT_GNU_HASH:
      case DT_VERSYM: continue;
      default: break;
    }
    const int64_t tag = e.d_tag;
    const bool pointer = tag == DT_PLTGOT || tag == DT_RELA || tag == DT_INIT || tag == DT_FINI || tag == DT_REL ||
                         tag == DT_JMPREL || tag == DT_INIT_ARRAY || tag == DT_FINI_ARRAY || tag == DT_PREINIT_ARRAY ||
                         tag == DT_RELR || (tag >= DT_ADDRRNGLO && tag <= DT_ADDRRNGHI) || tag == DT_VERDEF ||
                         tag == DT_VERNEED;
    if (pointer && e.d_un.d_ptr >= lo && e.d_un.d_ptr < hi) {
      return refuse("dynamic tag " + HexString(static_cast<uint64_t>(tag)) + " points right after the table");
    }
  }
  return true;
}

Status Injector::Layout() {
  const char* kOverflow = "the output would exceed 2^64 bytes";
  // Program header table: grown in place when the bytes after it are free (or can be freed by moving
  // notes), which keeps e_phoff and lets BFD-based tools (strip, objcopy) rewrite the output, as they
  // always put the table right after the ELF header. Otherwise it moves to the start of the new
  // segment (loaders are fine with that; see the header comment).
  phdrs_in_place_ = PlanInPlaceProgramHeaders();
  // The new segment starts on a page past the input. A moved table must also lie past every byte the
  // loader maps for the existing segments: glibc takes the first PT_LOAD whose page mapping covers
  // e_phoff as the one holding the table.
  uint64_t start = 0;
  const uint64_t after = phdrs_in_place_ ? in_.size() : std::max<uint64_t>(in_.size(), file_map_end_);
  if (!AlignUp(after, kMinPageSize, &start)) return Unsupported(kOverflow);
  seg_offset_ = start;
  uint64_t high = 0;
  if (!AlignUp(vaddr_end_, load_align_, &high) || high > UINT64_MAX - load_align_) return Unsupported(kOverflow);
  seg_vaddr_ = high + (seg_offset_ & (load_align_ - 1));  // offset and address congruent modulo p_align
  const uint64_t total_symbols = dynsym_count_ + appended_;
  uint64_t at = seg_offset_;
  auto place = [&](uint64_t alignment, uint64_t size, uint64_t* offset) -> bool {
    if (!AlignUp(at, alignment, offset) || size > UINT64_MAX - *offset) return false;
    at = *offset + size;
    return true;
  };
  dynsym_size_ = total_symbols * sizeof(Elf64_Sym);
  dynstr_size_ = dynstr_add_.base + dynstr_add_.added.size();
  hash_size_ = 4 * (2 + static_cast<uint64_t>(nbucket_) + total_symbols);
  versym_size_ = has_versym_ ? 2 * total_symbols : 0;
  if (phdrs_in_place_) {
    phdr_off_ = phoff_;
    for (MovedRange& m : moved_) {  // same offset modulo the note alignment as before
      uint64_t base = 0;
      if (!AlignUp(at, m.alignment, &base)) return Unsupported(kOverflow);
      m.new_offset = base + (m.old_offset & (m.alignment - 1));
      if (m.new_offset < base || m.size > UINT64_MAX - m.new_offset) return Unsupported(kOverflow);
      at = m.new_offset + m.size;
    }
  } else if (!place(8, (phnum_ + 1ull) * sizeof(Elf64_Phdr), &phdr_off_)) {
    return Unsupported(kOverflow);
  }
  if (!place(8, dynsym_size_, &dynsym_off_) || !place(1, dynstr_size_, &dynstr_off_) ||
      !place(8, hash_size_, &hash_off_) || !place(2, versym_size_, &versym_off_) ||
      !place(8, checksum_.size(), &checksum_off_) || !place(kBlobAlignment, blob_.size(), &blob_off_)) {
    return Unsupported(kOverflow);
  }
  seg_size_ = at - seg_offset_;
  if (seg_size_ > UINT64_MAX - seg_vaddr_) return Unsupported(kOverflow);
  // Outside the segment: section names, the static symbol table and the section headers.
  shstrtab_size_ = shstrtab_add_.base + shstrtab_add_.added.size();
  if (symtab_index_ != 0) {
    strtab_size_ = strtab_add_.base + strtab_add_.added.size();
    uint64_t appended_static = 0;
    for (const PlannedSymbol& p : symbols_) appended_static += p.static_indices.empty() ? 1 : 0;
    symtab_size_ = image_.sections()[symtab_index_].size + appended_static * sizeof(Elf64_Sym);
  }
  const bool separate_strtab = symtab_index_ != 0 && strtab_index_ != shstrndx_;
  if (!place(1, shstrtab_size_, &shstrtab_off_) || !place(1, separate_strtab ? strtab_size_ : 0, &strtab_off_) ||
      !place(8, symtab_size_, &symtab_off_) ||
      !place(8, static_cast<uint64_t>(new_shnum_) * sizeof(Elf64_Shdr), &shdr_off_)) {
    return Unsupported(kOverflow);
  }
  total_ = at;
  if (total_ > SIZE_MAX / 2) return Unsupported(kOverflow);
  for (PlannedSymbol& p : symbols_) p.address = Address(p.is_checksum ? checksum_off_ : blob_off_);
  return Status::Ok();
}

}  // namespace blob_injection
}  // namespace sorun
