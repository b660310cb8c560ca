// Writing an injection's output (ELF header, program headers, the new tables, the dynamic section,
// section headers) and checking it with the ELF reader.
#include "packer/elf_blob_injector_state.h"

#include <cstring>
#include <string>
#include <vector>

namespace sorun {
namespace blob_injection {

StatusOr<std::string> Injector::Write() const {
  std::string out;
  out.resize(static_cast<size_t>(total_), '\0');
  std::memcpy(&out[0], in_.data(), in_.size());
  const auto& sections = image_.sections();
  auto copy_section = [&](uint32_t index, uint64_t to) {
    const ElfSection& s = sections[index];
    std::memcpy(&out[to], in_.data() + s.offset, static_cast<size_t>(s.size));
  };
  auto put_symbol = [&](uint64_t at, uint32_t name, uint8_t info, uint8_t other, uint16_t shndx, uint64_t value,
                        uint64_t size) {
    Put32(&out, at, name);
    Put8(&out, at + 4, info);
    Put8(&out, at + 5, other);
    Put16(&out, at + 6, shndx);
    Put64(&out, at + 8, value);
    Put64(&out, at + 16, size);
  };
  const uint8_t global_object = static_cast<uint8_t>((kStbGlobal << 4) | kSttObject);

  // ELF header.
  Put64(&out, kEhPhoff, phdr_off_);
  Put16(&out, kEhPhnum, static_cast<uint16_t>(phnum_ + 1));
  Put64(&out, kEhShoff, shdr_off_);
  Put16(&out, kEhShnum, static_cast<uint16_t>(new_shnum_));
  Put16(&out, kEhShstrndx, static_cast<uint16_t>(Renumber(shstrndx_)));
  // Section indices in a symbol entry copied to `entry`.
  auto renumber_symbol = [&](uint64_t entry, uint16_t shndx) {
    if (shndx != elf::kSymbolUndefined && shndx < elf::kSymbolReservedLow) {
      Put16(&out, entry + 6, static_cast<uint16_t>(Renumber(shndx)));
    }
  };

  // Program headers: the old ones (PT_PHDR moved), plus the new PT_LOAD after the last PT_LOAD.
  uint64_t at = phdr_off_;
  const uint64_t phdr_bytes = (phnum_ + 1ull) * elf::kProgramHeaderSize;
  auto put_phdr = [&](const ProgramHeader& p) {
    Put32(&out, at, p.type);
    Put32(&out, at + 4, p.flags);
    Put64(&out, at + 8, p.offset);
    Put64(&out, at + 16, p.vaddr);
    Put64(&out, at + 24, p.paddr);
    Put64(&out, at + 32, p.filesz);
    Put64(&out, at + 40, p.memsz);
    Put64(&out, at + 48, p.align);
    at += elf::kProgramHeaderSize;
  };
  // Notes moved out of the way of the grown table: their bytes, and every segment inside them.
  for (const MovedRange& m : moved_) std::memcpy(&out[m.new_offset], in_.data() + m.old_offset, m.size);
  auto moved_range_of = [&](uint64_t offset, uint64_t size) -> const MovedRange* {
    for (const MovedRange& m : moved_) {
      if (offset >= m.old_offset && size <= m.size && offset - m.old_offset <= m.size - size) return &m;
    }
    return nullptr;
  };
  for (size_t i = 0; i < phdrs_.size(); ++i) {
    ProgramHeader p = phdrs_[i];
    if (p.type == kPtPhdr) {
      if (!phdrs_in_place_) {
        p.offset = phdr_off_;
        p.vaddr = p.paddr = Address(phdr_off_);
      }
      p.filesz = p.memsz = phdr_bytes;
    } else if (p.type != kPtLoad && p.filesz != 0) {
      if (const MovedRange* m = moved_range_of(p.offset, p.filesz)) {
        const uint64_t new_offset = m->new_offset + (p.offset - m->old_offset);
        p.vaddr = Address(new_offset);
        p.paddr = p.vaddr;
        p.offset = new_offset;
      }
    }
    put_phdr(p);
    if (i == last_load_) {
      ProgramHeader load;
      load.type = kPtLoad;
      load.flags = kPfR;
      load.offset = seg_offset_;
      load.vaddr = load.paddr = seg_vaddr_;
      load.filesz = load.memsz = seg_size_;
      load.align = load_align_;
      put_phdr(load);
    }
  }

  // .dynsym: the old entries at their indices (retargeted ones patched), then the new ones.
  copy_section(dynsym_index_, dynsym_off_);
  for (const ElfSymbol& sym : image_.dynamic_symbols()) {
    renumber_symbol(dynsym_off_ + static_cast<uint64_t>(sym.index) * elf::kSymbolSize, sym.shndx);
  }
  for (const PlannedSymbol& p : symbols_) {
    if (p.dynamic_index >= 0) {
      const uint64_t e = dynsym_off_ + static_cast<uint64_t>(p.dynamic_index) * elf::kSymbolSize;
      // st_name stays; the entry becomes a defined GLOBAL OBJECT in the new section.
      Put8(&out, e + 4, global_object);
      Put8(&out, e + 5, kStvDefault);
      Put16(&out, e + 6, static_cast<uint16_t>(p.section));
      Put64(&out, e + 8, p.address);
      Put64(&out, e + 16, p.size);
    }
  }
  uint64_t next = dynsym_count_;
  for (const PlannedSymbol& p : symbols_) {
    if (p.dynamic_index < 0) {
      put_symbol(dynsym_off_ + next * elf::kSymbolSize, p.dynstr_offset, global_object, kStvDefault,
                 static_cast<uint16_t>(p.section), p.address, p.size);
      ++next;
    }
  }
  // .dynstr: old bytes + new names.
  copy_section(dynstr_index_, dynstr_off_);
  std::memcpy(&out[dynstr_off_ + dynstr_add_.base], dynstr_add_.added.data(), dynstr_add_.added.size());

  // DT_HASH over every symbol: nbucket, nchain, buckets, chains (each chain links to the previous
  // symbol of its bucket; order within a chain does not matter to the loader).
  const uint64_t total_symbols = dynsym_count_ + appended_;
  std::vector<uint32_t> buckets(nbucket_, 0), chains(static_cast<size_t>(total_symbols), 0);
  std::vector<std::string_view> names;
  names.reserve(static_cast<size_t>(total_symbols));
  for (const ElfSymbol& s : image_.dynamic_symbols()) names.push_back(s.name);
  for (const PlannedSymbol& p : symbols_) {
    if (p.dynamic_index < 0) names.push_back(p.name);
  }
  for (uint32_t i = 1; i < total_symbols; ++i) {
    const uint32_t b = SysvHash(names[i]) % nbucket_;
    chains[i] = buckets[b];
    buckets[b] = i;
  }
  Put32(&out, hash_off_, nbucket_);
  Put32(&out, hash_off_ + 4, static_cast<uint32_t>(total_symbols));
  for (uint32_t i = 0; i < nbucket_; ++i) Put32(&out, hash_off_ + 8 + 4ull * i, buckets[i]);
  for (uint64_t i = 0; i < total_symbols; ++i) Put32(&out, hash_off_ + 8 + 4ull * nbucket_ + 4 * i, chains[i]);

  // .gnu.version: old indices + VER_NDX_GLOBAL for the new (and retargeted) symbols.
  if (has_versym_) {
    copy_section(versym_index_, versym_off_);
    for (const PlannedSymbol& p : symbols_) {
      if (p.dynamic_index >= 0) Put16(&out, versym_off_ + 2 * static_cast<uint64_t>(p.dynamic_index), kVerNdxGlobal);
    }
    for (uint64_t i = dynsym_count_; i < total_symbols; ++i) Put16(&out, versym_off_ + 2 * i, kVerNdxGlobal);
  }

  if (!checksum_.empty()) std::memcpy(&out[checksum_off_], checksum_.data(), checksum_.size());
  std::memcpy(&out[blob_off_], blob_.data(), blob_.size());

  // The dynamic section, in place: retarget the tables; DT_GNU_HASH becomes DT_HASH or is removed
  // (later entries move up one slot and the freed slot becomes DT_NULL).
  {
    std::vector<DynamicEntry> rewritten;
    for (const DynamicEntry& e : dyn_) {
      DynamicEntry n = e;
      switch (e.tag) {
        case kDtSymtab: n.value = Address(dynsym_off_); break;
        case kDtStrtab: n.value = Address(dynstr_off_); break;
        case kDtStrsz: n.value = dynstr_size_; break;
        case kDtVersym: n.value = Address(versym_off_); break;
        case kDtHash: n.value = Address(hash_off_); break;
        case kDtGnuHash:
          if (has_hash_) continue;
          n.tag = kDtHash;
          n.value = Address(hash_off_);
          break;
        default: break;
      }
      rewritten.push_back(n);
    }
    while (rewritten.size() < dyn_.size()) rewritten.push_back(DynamicEntry{});
    for (size_t i = 0; i < rewritten.size(); ++i) {
      Put64(&out, dynamic_->offset + i * kDynEntrySize, static_cast<uint64_t>(rewritten[i].tag));
      Put64(&out, dynamic_->offset + i * kDynEntrySize + 8, rewritten[i].value);
    }
  }

  // Non-allocated tables: section names, then .strtab / .symtab copies with the new symbols.
  copy_section(shstrndx_, shstrtab_off_);
  std::memcpy(&out[shstrtab_off_ + shstrtab_add_.base], shstrtab_add_.added.data(), shstrtab_add_.added.size());
  if (symtab_index_ != 0) {
    if (strtab_index_ != shstrndx_) {
      copy_section(strtab_index_, strtab_off_);
      std::memcpy(&out[strtab_off_ + strtab_add_.base], strtab_add_.added.data(), strtab_add_.added.size());
    }
    copy_section(symtab_index_, symtab_off_);
    for (const ElfSymbol& sym : image_.static_symbols()) {
      renumber_symbol(symtab_off_ + static_cast<uint64_t>(sym.index) * elf::kSymbolSize, sym.shndx);
    }
    uint64_t index = sections[symtab_index_].size / elf::kSymbolSize;
    for (const PlannedSymbol& p : symbols_) {
      for (uint32_t i : p.static_indices) {
        const uint64_t e = symtab_off_ + static_cast<uint64_t>(i) * elf::kSymbolSize;
        Put16(&out, e + 6, static_cast<uint16_t>(p.section));
        Put64(&out, e + 8, p.address);
        Put64(&out, e + 16, p.size);
      }
      if (p.static_indices.empty()) {
        put_symbol(symtab_off_ + index * elf::kSymbolSize, p.strtab_offset, global_object, kStvDefault,
                   static_cast<uint16_t>(p.section), p.address, p.size);
        ++index;
      }
    }
  }

  // Section headers: the old ones (renumbered from insert_at_ on, links and info indices adjusted),
  // the live tables' headers retargeted, and the new sections at insert_at_.
  auto new_shdr = [&](uint32_t new_index, size_t field) {
    return shdr_off_ + static_cast<uint64_t>(new_index) * elf::kSectionHeaderSize + field;
  };
  auto shdr = [&](uint32_t old_index, size_t field) { return new_shdr(Renumber(old_index), field); };
  for (const ElfSection& s : sections) {
    std::memcpy(&out[shdr(s.index, 0)], in_.data() + s.header_offset, elf::kSectionHeaderSize);
    if (s.link != 0) Put32(&out, shdr(s.index, kShLink), Renumber(s.link));
    if (s.info != 0 && (s.type == kShtRela || s.type == kShtRel || (s.flags & kShfInfoLink))) {
      Put32(&out, shdr(s.index, kShInfo), Renumber(s.info));
    }
  }
  auto retarget = [&](uint32_t index, uint64_t offset, uint64_t size, bool allocated) {
    Put64(&out, shdr(index, kShOffset), offset);
    Put64(&out, shdr(index, kShSize), size);
    if (allocated) Put64(&out, shdr(index, kShAddr), Address(offset));
  };
  retarget(dynsym_index_, dynsym_off_, dynsym_size_, true);
  retarget(dynstr_index_, dynstr_off_, dynstr_size_, true);
  if (has_versym_) retarget(versym_index_, versym_off_, versym_size_, true);
  if (has_hash_) {
    retarget(hash_index_, hash_off_, hash_size_, true);
    // An unused .gnu.hash header (its bytes may now hold program headers) became .sorun_blob below.
  } else {  // the .gnu.hash header becomes the .hash header
    Put32(&out, shdr(gnu_hash_index_, kShName), hash_name_);
    Put32(&out, shdr(gnu_hash_index_, kShType), kShtHash);
    Put32(&out, shdr(gnu_hash_index_, kShLink), Renumber(dynsym_index_));
    Put32(&out, shdr(gnu_hash_index_, kShInfo), 0);
    Put64(&out, shdr(gnu_hash_index_, kShAddralign), 8);
    Put64(&out, shdr(gnu_hash_index_, kShEntsize), 4);
    retarget(gnu_hash_index_, hash_off_, hash_size_, true);
  }
  for (const ElfSection& s : sections) {
    if (s.type != kShtNote) continue;
    if (const MovedRange* m = moved_range_of(s.offset, s.size)) {
      const uint64_t new_offset = m->new_offset + (s.offset - m->old_offset);
      Put64(&out, shdr(s.index, kShOffset), new_offset);
      Put64(&out, shdr(s.index, kShAddr), Address(new_offset));
    }
  }
  retarget(shstrndx_, shstrtab_off_, shstrtab_size_, false);
  if (symtab_index_ != 0) {
    retarget(symtab_index_, symtab_off_, symtab_size_, false);
    if (strtab_index_ != shstrndx_) retarget(strtab_index_, strtab_off_, strtab_size_, false);
  }
  auto new_section = [&](uint32_t index, uint32_t name, uint64_t offset, uint64_t size, uint64_t align) {
    std::memset(&out[new_shdr(index, 0)], 0, elf::kSectionHeaderSize);
    Put32(&out, new_shdr(index, kShName), name);
    Put32(&out, new_shdr(index, kShType), elf::kSectionProgBits);
    Put64(&out, new_shdr(index, kShFlags), kShfAlloc);
    Put64(&out, new_shdr(index, kShAddr), Address(offset));
    Put64(&out, new_shdr(index, kShOffset), offset);
    Put64(&out, new_shdr(index, kShSize), size);
    Put64(&out, new_shdr(index, kShAddralign), align);
  };
  new_section(blob_section_, blob_name_, blob_off_, blob_.size(), kBlobAlignment);
  if (!checksum_.empty()) new_section(checksum_section_, checksum_name_, checksum_off_, checksum_.size(), 8);
  return out;
}

Status Injector::VerifyOutput(const std::string& out) const {
  // A structural self-check with the same reader the loader side uses: a failure here is a bug.
  auto image = ElfImage::Parse(reinterpret_cast<const uint8_t*>(out.data()), out.size(), name_ + " (injected)");
  if (!image.ok()) return Internal("the injected image does not parse: " + image.status().message());
  for (const PlannedSymbol& p : symbols_) {
    auto data = image->FindSymbolData(p.name);
    const uint64_t expected = p.is_checksum ? checksum_off_ : blob_off_;
    if (!data.ok()) return Internal("the injected image lost " + p.name + ": " + data.status().message());
    const ElfSymbol* sym = image->FindDefinedSymbol(p.name);
    if (data->file_offset != expected || data->size != p.size || sym == nullptr ||
        sym->table != Renumber(dynsym_index_) || sym->shndx != p.section) {
      return Internal("the injected image maps " + p.name + " to file offset " + std::to_string(data->file_offset) +
                      " (" + std::to_string(data->size) + " bytes, " + data->table + "), expected " +
                      std::to_string(expected));
    }
  }
  return Status::Ok();
}

}  // namespace blob_injection
}  // namespace sorun
