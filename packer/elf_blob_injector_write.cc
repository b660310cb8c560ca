// Writing an injection's output (ELF header, program headers, the new tables, the dynamic section,
// section headers) and checking it with the ELF reader.
#include "packer/elf_blob_injector_state.h"

#include <cstddef>
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
  // A new symbol: a defined GLOBAL OBJECT of default visibility.
  auto put_symbol = [&](uint64_t at, uint32_t name, uint16_t shndx, uint64_t value, uint64_t size) {
    Elf64_Sym sym = {};
    sym.st_name = name;
    sym.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
    sym.st_other = STV_DEFAULT;
    sym.st_shndx = shndx;
    sym.st_value = value;
    sym.st_size = size;
    Store(&out, at, sym);
  };
  // An existing symbol retargeted to the new bytes (st_name stays).
  auto retarget_symbol = [&](uint64_t at, uint16_t shndx, uint64_t value, uint64_t size) {
    Put16(&out, at + offsetof(Elf64_Sym, st_shndx), shndx);
    Put64(&out, at + offsetof(Elf64_Sym, st_value), value);
    Put64(&out, at + offsetof(Elf64_Sym, st_size), size);
  };

  // ELF header.
  Put64(&out, offsetof(Elf64_Ehdr, e_phoff), phdr_off_);
  Put16(&out, offsetof(Elf64_Ehdr, e_phnum), static_cast<uint16_t>(phnum_ + 1));
  Put64(&out, offsetof(Elf64_Ehdr, e_shoff), shdr_off_);
  Put16(&out, offsetof(Elf64_Ehdr, e_shnum), static_cast<uint16_t>(new_shnum_));
  Put16(&out, offsetof(Elf64_Ehdr, e_shstrndx), static_cast<uint16_t>(Renumber(shstrndx_)));
  // Section indices in a symbol entry copied to `entry`.
  auto renumber_symbol = [&](uint64_t entry, uint16_t shndx) {
    if (shndx != SHN_UNDEF && shndx < SHN_LORESERVE) {
      Put16(&out, entry + offsetof(Elf64_Sym, st_shndx), static_cast<uint16_t>(Renumber(shndx)));
    }
  };

  // Program headers: the old ones (PT_PHDR moved), plus the new PT_LOAD after the last PT_LOAD.
  uint64_t at = phdr_off_;
  const uint64_t phdr_bytes = (phnum_ + 1ull) * sizeof(Elf64_Phdr);
  auto put_phdr = [&](const ElfProgramHeader& p) {
    Store(&out, at, p.ToElf64());
    at += sizeof(Elf64_Phdr);
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
    ElfProgramHeader p = phdrs_[i];
    if (p.type == PT_PHDR) {
      if (!phdrs_in_place_) {
        p.offset = phdr_off_;
        p.vaddr = p.paddr = Address(phdr_off_);
      }
      p.filesz = p.memsz = phdr_bytes;
    } else if (p.type != PT_LOAD && p.filesz != 0) {
      if (const MovedRange* m = moved_range_of(p.offset, p.filesz)) {
        const uint64_t new_offset = m->new_offset + (p.offset - m->old_offset);
        p.vaddr = Address(new_offset);
        p.paddr = p.vaddr;
        p.offset = new_offset;
      }
    }
    put_phdr(p);
    if (i == last_load_) {
      ElfProgramHeader load;
      load.type = PT_LOAD;
      load.flags = PF_R;
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
    renumber_symbol(dynsym_off_ + static_cast<uint64_t>(sym.index) * sizeof(Elf64_Sym), sym.shndx);
  }
  for (const PlannedSymbol& p : symbols_) {
    if (p.dynamic_index >= 0) {
      const uint64_t e = dynsym_off_ + static_cast<uint64_t>(p.dynamic_index) * sizeof(Elf64_Sym);
      // st_name stays; the entry becomes a defined GLOBAL OBJECT in the new section.
      Put8(&out, e + offsetof(Elf64_Sym, st_info), ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT));
      Put8(&out, e + offsetof(Elf64_Sym, st_other), STV_DEFAULT);
      retarget_symbol(e, static_cast<uint16_t>(p.section), p.address, p.size);
    }
  }
  uint64_t next = dynsym_count_;
  for (const PlannedSymbol& p : symbols_) {
    if (p.dynamic_index < 0) {
      put_symbol(dynsym_off_ + next * sizeof(Elf64_Sym), p.dynstr_offset, static_cast<uint16_t>(p.section), p.address,
                 p.size);
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
      if (p.dynamic_index >= 0) Put16(&out, versym_off_ + 2 * static_cast<uint64_t>(p.dynamic_index), VER_NDX_GLOBAL);
    }
    for (uint64_t i = dynsym_count_; i < total_symbols; ++i) Put16(&out, versym_off_ + 2 * i, VER_NDX_GLOBAL);
  }

  if (!checksum_.empty()) std::memcpy(&out[checksum_off_], checksum_.data(), checksum_.size());
  std::memcpy(&out[blob_off_], blob_.data(), blob_.size());

  // The dynamic section, in place: retarget the tables; DT_GNU_HASH becomes DT_HASH or is removed
  // (later entries move up one slot and the freed slot becomes DT_NULL).
  {
    std::vector<Elf64_Dyn> rewritten;
    for (const Elf64_Dyn& e : dyn_) {
      Elf64_Dyn n = e;
      switch (e.d_tag) {
        case DT_SYMTAB: n.d_un.d_ptr = Address(dynsym_off_); break;
        case DT_STRTAB: n.d_un.d_ptr = Address(dynstr_off_); break;
        case DT_STRSZ: n.d_un.d_val = dynstr_size_; break;
        case DT_VERSYM: n.d_un.d_ptr = Address(versym_off_); break;
        case DT_HASH: n.d_un.d_ptr = Address(hash_off_); break;
        case DT_GNU_HASH:
          if (has_hash_) continue;
          n.d_tag = DT_HASH;
          n.d_un.d_ptr = Address(hash_off_);
          break;
        default: break;
      }
      rewritten.push_back(n);
    }
    const Elf64_Dyn null_entry = {};  // DT_NULL
    while (rewritten.size() < dyn_.size()) rewritten.push_back(null_entry);
    for (size_t i = 0; i < rewritten.size(); ++i) Store(&out, dynamic_->offset + i * sizeof(Elf64_Dyn), rewritten[i]);
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
      renumber_symbol(symtab_off_ + static_cast<uint64_t>(sym.index) * sizeof(Elf64_Sym), sym.shndx);
    }
    uint64_t index = sections[symtab_index_].size / sizeof(Elf64_Sym);
    for (const PlannedSymbol& p : symbols_) {
      for (uint32_t i : p.static_indices) {
        const uint64_t e = symtab_off_ + static_cast<uint64_t>(i) * sizeof(Elf64_Sym);
        retarget_symbol(e, static_cast<uint16_t>(p.section), p.address, p.size);
      }
      if (p.static_indices.empty()) {
        put_symbol(symtab_off_ + index * sizeof(Elf64_Sym), p.strtab_offset, static_cast<uint16_t>(p.section),
                   p.address, p.size);
        ++index;
      }
    }
  }

  // Section headers: the old ones (renumbered from insert_at_ on, links and info indices adjusted),
  // the live tables' headers retargeted, and the new sections at insert_at_.
  auto new_shdr = [&](uint32_t new_index, size_t field) {
    return shdr_off_ + static_cast<uint64_t>(new_index) * sizeof(Elf64_Shdr) + field;
  };
  auto shdr = [&](uint32_t old_index, size_t field) { return new_shdr(Renumber(old_index), field); };
  for (const ElfSection& s : sections) {
    std::memcpy(&out[shdr(s.index, 0)], in_.data() + s.header_offset, sizeof(Elf64_Shdr));
    if (s.link != 0) Put32(&out, shdr(s.index, offsetof(Elf64_Shdr, sh_link)), Renumber(s.link));
    if (s.info != 0 && (s.type == SHT_RELA || s.type == SHT_REL || (s.flags & SHF_INFO_LINK))) {
      Put32(&out, shdr(s.index, offsetof(Elf64_Shdr, sh_info)), Renumber(s.info));
    }
  }
  auto retarget = [&](uint32_t index, uint64_t offset, uint64_t size, bool allocated) {
    Put64(&out, shdr(index, offsetof(Elf64_Shdr, sh_offset)), offset);
    Put64(&out, shdr(index, offsetof(Elf64_Shdr, sh_size)), size);
    if (allocated) Put64(&out, shdr(index, offsetof(Elf64_Shdr, sh_addr)), Address(offset));
  };
  retarget(dynsym_index_, dynsym_off_, dynsym_size_, true);
  retarget(dynstr_index_, dynstr_off_, dynstr_size_, true);
  if (has_versym_) retarget(versym_index_, versym_off_, versym_size_, true);
  if (has_hash_) {
    retarget(hash_index_, hash_off_, hash_size_, true);
    // An unused .gnu.hash header (its bytes may now hold program headers) became .sorun_blob below.
  } else {  // the .gnu.hash header becomes the .hash header
    Put32(&out, shdr(gnu_hash_index_, offsetof(Elf64_Shdr, sh_name)), hash_name_);
    Put32(&out, shdr(gnu_hash_index_, offsetof(Elf64_Shdr, sh_type)), SHT_HASH);
    Put32(&out, shdr(gnu_hash_index_, offsetof(Elf64_Shdr, sh_link)), Renumber(dynsym_index_));
    Put32(&out, shdr(gnu_hash_index_, offsetof(Elf64_Shdr, sh_info)), 0);
    Put64(&out, shdr(gnu_hash_index_, offsetof(Elf64_Shdr, sh_addralign)), 8);
    Put64(&out, shdr(gnu_hash_index_, offsetof(Elf64_Shdr, sh_entsize)), 4);
    retarget(gnu_hash_index_, hash_off_, hash_size_, true);
  }
  for (const ElfSection& s : sections) {
    if (s.type != SHT_NOTE) continue;
    if (const MovedRange* m = moved_range_of(s.offset, s.size)) {
      const uint64_t new_offset = m->new_offset + (s.offset - m->old_offset);
      Put64(&out, shdr(s.index, offsetof(Elf64_Shdr, sh_offset)), new_offset);
      Put64(&out, shdr(s.index, offsetof(Elf64_Shdr, sh_addr)), Address(new_offset));
    }
  }
  retarget(shstrndx_, shstrtab_off_, shstrtab_size_, false);
  if (symtab_index_ != 0) {
    retarget(symtab_index_, symtab_off_, symtab_size_, false);
    if (strtab_index_ != shstrndx_) retarget(strtab_index_, strtab_off_, strtab_size_, false);
  }
  auto new_section = [&](uint32_t index, uint32_t name, uint64_t offset, uint64_t size, uint64_t align) {
    Elf64_Shdr h = {};
    h.sh_name = name;
    h.sh_type = SHT_PROGBITS;
    h.sh_flags = SHF_ALLOC;
    h.sh_addr = Address(offset);
    h.sh_offset = offset;
    h.sh_size = size;
    h.sh_addralign = align;
    Store(&out, new_shdr(index, 0), h);
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
