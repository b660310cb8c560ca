#include "inspect/elf_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <optional>
#include <utility>

#include "base/file_util.h"

namespace sorun {
namespace {

std::string SectionTypeName(uint32_t type) {
  switch (type) {
    case SHT_NULL: return "SHT_NULL";
    case SHT_PROGBITS: return "SHT_PROGBITS";
    case SHT_SYMTAB: return "SHT_SYMTAB";
    case SHT_STRTAB: return "SHT_STRTAB";
    case SHT_NOBITS: return "SHT_NOBITS";
    case SHT_DYNSYM: return "SHT_DYNSYM";
    default: return "type " + std::to_string(type);
  }
}

// "section 5 (.dynstr)" or "section 5".
std::string SectionLabel(const ElfSection& s) {
  std::string label = "section " + std::to_string(s.index);
  if (!s.name.empty()) label += " (" + std::string(s.name) + ")";
  return label;
}

}  // namespace

Status ElfImage::ErrorAt(uint64_t offset, std::string_view structure, std::string_view message) const {
  std::string text = file_name_;
  text += ": ";
  text += structure;
  text += " byte ";
  text += std::to_string(offset);
  text += ": ";
  text += message;
  return DataLoss(std::move(text));
}

StatusOr<ElfImage> ElfImage::Parse(const uint8_t* data, size_t size, std::string file_name, ObjectPtr<Object> owner) {
  ElfImage image;
  image.data_ = data;
  image.size_ = data != nullptr ? size : 0;
  image.file_name_ = std::move(file_name);
  image.owner_ = std::move(owner);
  SORUN_RETURN_IF_ERROR(image.ParseAll());
  return image;
}

StatusOr<ElfImage> ElfImage::ReadFile(const std::string& path) {
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<MappedFile> file, MappedFile::Open(path));
  const uint8_t* data = file->data();
  size_t size = file->size();
  return Parse(data, size, path, ObjectPtr<Object>(std::move(file)));
}

Status ElfImage::ParseAll() {
  const char* kHeader = "ELF header";
  if (size_ < SELFMAG || std::memcmp(data_, ELFMAG, SELFMAG) != 0) {
    return DataLoss(file_name_ + ": not an ELF file (no \\x7fELF magic at byte 0)");
  }
  if (size_ < EI_NIDENT) {
    return ErrorAt(size_, kHeader, "truncated: e_ident needs 16 bytes but the file has " + std::to_string(size_));
  }
  const uint8_t elf_class = data_[EI_CLASS];
  if (elf_class == ELFCLASS32) {
    return Unimplemented(file_name_ + ": ELF header byte 4: ELF32 files (EI_CLASS 1) are not supported; " +
                         "sorun reads ELF64 only");
  }
  if (elf_class != ELFCLASS64) {
    return ErrorAt(EI_CLASS, kHeader, "invalid EI_CLASS " + std::to_string(elf_class) + " (expected 2, ELF64)");
  }
  const uint8_t encoding = data_[EI_DATA];
  if (encoding == ELFDATA2MSB) {
    return Unimplemented(file_name_ + ": ELF header byte 5: big-endian ELF files (EI_DATA 2, ELFDATA2MSB) " +
                         "are not supported; sorun reads little-endian only");
  }
  if (encoding != ELFDATA2LSB) {
    return ErrorAt(EI_DATA, kHeader, "invalid EI_DATA " + std::to_string(encoding) + " (expected 1, little-endian)");
  }
  if (data_[EI_VERSION] != EV_CURRENT) {
    return ErrorAt(EI_VERSION, kHeader,
                   "unsupported EI_VERSION " + std::to_string(data_[EI_VERSION]) + " (expected 1)");
  }
  if (!CopyElfStruct(data_, size_, 0, &header_)) {
    return ErrorAt(size_, kHeader,
                   "truncated: the ELF64 header needs 64 bytes but the file has " + std::to_string(size_));
  }
  const Elf64_Ehdr& eh = header_;
  if (eh.e_version != EV_CURRENT) {
    return ErrorAt(offsetof(Elf64_Ehdr, e_version), kHeader,
                   "e_version " + std::to_string(eh.e_version) + " (expected 1)");
  }
  if (eh.e_ehsize < sizeof(Elf64_Ehdr)) {
    return ErrorAt(offsetof(Elf64_Ehdr, e_ehsize), kHeader,
                   "e_ehsize " + std::to_string(eh.e_ehsize) + " is smaller than the 64-byte ELF64 header");
  }
  const uint64_t phoff = eh.e_phoff;
  const uint16_t phentsize = eh.e_phentsize, phnum = eh.e_phnum;
  if (phnum != 0) {
    if (phentsize < sizeof(Elf64_Phdr)) {
      return ErrorAt(offsetof(Elf64_Ehdr, e_phentsize), kHeader,
                     "e_phentsize " + std::to_string(phentsize) + " is smaller than an Elf64_Phdr (56 bytes)");
    }
    if (phoff > size_ || phnum > (size_ - phoff) / phentsize) {
      return ErrorAt(offsetof(Elf64_Ehdr, e_phoff), kHeader,
                     "program header table at e_phoff " + std::to_string(phoff) + " (" + std::to_string(phnum) +
                         " entries of " + std::to_string(phentsize) + " bytes) extends past the end of the file (" +
                         std::to_string(size_) + " bytes)");
    }
  }
  ElfDynamicFacts facts;
  if (phnum != 0) {
    SORUN_ASSIGN_OR_RETURN(facts, ReadElfDynamicFacts(data_, size_, file_name_));
    program_headers_ = facts.headers;
    dynamic_entries_ = facts.dynamic_entries;
    dynamic_terminated_ = facts.dynamic_terminated;
  }
  SORUN_RETURN_IF_ERROR(ParseSectionHeaders());
  if (dynamic_symbols_.empty() && facts.has_dynamic && facts.symtab != 0) {
    SORUN_RETURN_IF_ERROR(ParseDynamicSegmentSymbols(facts));
  }
  return Status::Ok();
}

std::vector<LoadSegment> ElfImage::LoadSegments() const {
  std::vector<LoadSegment> out;
  for (const ElfProgramHeader& p : program_headers_) {
    if (p.type != PT_LOAD) continue;
    LoadSegment s;
    s.index = p.index;
    s.vaddr = p.vaddr;
    s.file_size = p.filesz;
    s.memory_size = p.memsz;
    s.file_offset = p.offset;
    s.readable = (p.flags & PF_R) != 0;
    s.bytes = data_ + p.offset;  // inside the file: checked by ReadElfDynamicFacts
    out.push_back(s);
  }
  return out;
}

StatusOr<uint64_t> ElfImage::DynamicSymbolCount(const ElfDynamicFacts& facts) const {
  auto u32_at = [&](uint64_t vaddr, const char* what) -> StatusOr<uint32_t> {
    std::optional<uint64_t> off = facts.FileOffset(vaddr, 4);
    if (!off) {
      return DataLoss(file_name_ + ": " + what + " at address " + HexString(vaddr) +
                      " is not inside the file-backed part of a PT_LOAD segment");
    }
    const uint8_t* p = data_ + *off;
    return static_cast<uint32_t>(p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24));
  };
  if (facts.hash != 0) {  // DT_HASH: nbucket, nchain; nchain is the symbol count
    SORUN_ASSIGN_OR_RETURN(uint32_t nchain, u32_at(facts.hash + 4, "DT_HASH nchain"));
    return nchain;
  }
  if (facts.gnu_hash == 0) {
    return DataLoss(file_name_ +
                    ": the dynamic section has DT_SYMTAB but neither DT_HASH nor DT_GNU_HASH: the "
                    "symbol count is unknown");
  }
  // DT_GNU_HASH: nbuckets, symoffset, bloom_size, bloom_shift, bloom[bloom_size] (u64), buckets, chains.
  // The count is one past the highest symbol index reachable: the last chain entry (bit 0 set) of the
  // highest bucket start.
  const uint64_t h = facts.gnu_hash;
  SORUN_ASSIGN_OR_RETURN(uint32_t nbuckets, u32_at(h, "DT_GNU_HASH nbuckets"));
  SORUN_ASSIGN_OR_RETURN(uint32_t symoffset, u32_at(h + 4, "DT_GNU_HASH symoffset"));
  SORUN_ASSIGN_OR_RETURN(uint32_t bloom_size, u32_at(h + 8, "DT_GNU_HASH bloom_size"));
  const uint64_t buckets = h + 16 + 8 * static_cast<uint64_t>(bloom_size);
  if (!facts.FileOffset(buckets, 4 * static_cast<uint64_t>(nbuckets))) {
    return DataLoss(file_name_ + ": DT_GNU_HASH at address " + HexString(h) + ": " + std::to_string(nbuckets) +
                    " buckets after a " + std::to_string(bloom_size) +
                    "-word bloom filter do not fit in the file-backed part of a PT_LOAD segment");
  }
  uint32_t last = 0;
  for (uint32_t b = 0; b < nbuckets; ++b) {
    SORUN_ASSIGN_OR_RETURN(uint32_t start, u32_at(buckets + 4 * static_cast<uint64_t>(b), "DT_GNU_HASH bucket"));
    last = std::max(last, start);
  }
  if (last < symoffset) return static_cast<uint64_t>(symoffset);  // no hashed symbols
  const uint64_t chains = buckets + 4 * static_cast<uint64_t>(nbuckets);
  uint64_t index = last;
  // Each step reads one more in-file word, so the walk ends within the file's size.
  while (true) {
    SORUN_ASSIGN_OR_RETURN(uint32_t hash, u32_at(chains + 4 * (index - symoffset), "DT_GNU_HASH chain"));
    if (hash & 1) break;
    ++index;
  }
  return index + 1;
}

Status ElfImage::ParseDynamicSegmentSymbols(const ElfDynamicFacts& facts) {
  if (facts.syment != 0 && facts.syment != sizeof(Elf64_Sym)) {
    return DataLoss(file_name_ + ": DT_SYMENT " + std::to_string(facts.syment) + " (expected 24 for Elf64_Sym)");
  }
  std::optional<uint64_t> strings = facts.FileOffset(facts.strtab, facts.strsz);
  if (facts.strtab == 0 || facts.strsz == 0 || !strings) {
    return DataLoss(file_name_ + ": DT_STRTAB " + HexString(facts.strtab) + " with DT_STRSZ " +
                    std::to_string(facts.strsz) + " is not inside the file-backed part of a PT_LOAD segment");
  }
  SORUN_ASSIGN_OR_RETURN(uint64_t count, DynamicSymbolCount(facts));
  std::optional<uint64_t> table;
  if (count <= size_ / sizeof(Elf64_Sym)) table = facts.FileOffset(facts.symtab, count * sizeof(Elf64_Sym));
  if (!table) {
    return DataLoss(file_name_ + ": DT_SYMTAB at address " + HexString(facts.symtab) + " with " +
                    std::to_string(count) +
                    " symbols (from the hash table) is not inside the file-backed part of a PT_LOAD segment");
  }
  return ReadSymbols(elf::kDynamicSegmentTable, "DT_SYMTAB", *table, count, *strings, facts.strsz, "DT_STRTAB",
                     &dynamic_symbols_);
}

Status ElfImage::ParseSectionHeaders() {
  const char* kHeader = "ELF header";
  const uint64_t shoff = header_.e_shoff;
  const uint16_t shentsize = header_.e_shentsize, shnum = header_.e_shnum, shstrndx = header_.e_shstrndx;
  if (shoff == 0) {
    if (shnum != 0) {
      return ErrorAt(offsetof(Elf64_Ehdr, e_shnum), kHeader,
                     "e_shnum " + std::to_string(shnum) + " but e_shoff is 0 (no section table)");
    }
    return Status::Ok();  // no section headers (e.g. sstrip'ed): no symbols to find
  }
  if (shentsize != sizeof(Elf64_Shdr)) {
    return ErrorAt(offsetof(Elf64_Ehdr, e_shentsize), kHeader,
                   "e_shentsize " + std::to_string(shentsize) + " (expected 64 for Elf64_Shdr)");
  }
  Elf64_Shdr first;
  if (!CopyElfStruct(data_, size_, shoff, &first)) {
    return ErrorAt(offsetof(Elf64_Ehdr, e_shoff), kHeader,
                   "section header table at e_shoff " + std::to_string(shoff) + " starts past the end of the file (" +
                       std::to_string(size_) + " bytes)");
  }
  // Extended numbering: with e_shnum 0 / e_shstrndx SHN_XINDEX, the real values live in section 0.
  uint64_t count = shnum;
  uint32_t strndx = shstrndx;
  uint64_t count_field = offsetof(Elf64_Ehdr, e_shnum);
  if (shnum == 0) {
    count = first.sh_size;
    count_field = shoff + offsetof(Elf64_Shdr, sh_size);
  }
  if (shstrndx == SHN_XINDEX) strndx = first.sh_link;
  if (count == 0) return Status::Ok();
  const uint64_t available = (size_ - shoff) / sizeof(Elf64_Shdr);
  if (count > available) {
    return ErrorAt(count_field, shnum != 0 ? "ELF header" : "section header 0",
                   "section count " + std::to_string(count) + " needs " +
                       (count > UINT64_MAX / sizeof(Elf64_Shdr) ? std::string("more than 2^64")
                                                                : std::to_string(count * sizeof(Elf64_Shdr))) +
                       " bytes of section headers at e_shoff " + std::to_string(shoff) + " but only " +
                       std::to_string(size_ - shoff) + " bytes remain in the file");
  }

  sections_.reserve(static_cast<size_t>(count));
  std::vector<uint32_t> name_offsets;
  name_offsets.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    ElfSection s;
    s.index = static_cast<uint32_t>(i);
    s.header_offset = shoff + i * sizeof(Elf64_Shdr);
    Elf64_Shdr h;
    CopyElfStruct(data_, size_, s.header_offset, &h);  // inside the table: count <= available
    s.type = h.sh_type;
    s.flags = h.sh_flags;
    s.addr = h.sh_addr;
    s.offset = h.sh_offset;
    s.size = h.sh_size;
    s.link = h.sh_link;
    s.info = h.sh_info;
    s.entsize = h.sh_entsize;
    if (s.type != SHT_NOBITS && s.type != SHT_NULL && !ElfRangeFits(s.offset, s.size, size_)) {
      return ErrorAt(s.header_offset + offsetof(Elf64_Shdr, sh_offset), "section header " + std::to_string(i),
                     "sh_offset " + std::to_string(s.offset) + " + sh_size " + std::to_string(s.size) +
                         " extends past the end of the file (" + std::to_string(size_) + " bytes)");
    }
    name_offsets.push_back(h.sh_name);
    sections_.push_back(s);
  }

  // Section names, from the section-name string table.
  if (strndx != 0) {
    if (strndx >= count) {
      return ErrorAt(
          offsetof(Elf64_Ehdr, e_shstrndx), kHeader,
          "e_shstrndx " + std::to_string(strndx) + " is not a section (there are " + std::to_string(count) + ")");
    }
    const ElfSection& names = sections_[strndx];
    if (names.type != SHT_STRTAB) {
      return ErrorAt(names.header_offset + offsetof(Elf64_Shdr, sh_type), "section header " + std::to_string(strndx),
                     "e_shstrndx names a section of " + SectionTypeName(names.type) + ", not SHT_STRTAB");
    }
    for (ElfSection& s : sections_) {
      const uint32_t off = name_offsets[s.index];
      const std::string structure = "section header " + std::to_string(s.index);
      if (off >= names.size) {
        return ErrorAt(s.header_offset, structure,
                       "name offset " + std::to_string(off) + " is past the end of the section-name table (" +
                           SectionLabel(names) + ", " + std::to_string(names.size) + " bytes)");
      }
      const char* begin = reinterpret_cast<const char*>(data_ + names.offset + off);
      const void* nul = std::memchr(begin, 0, static_cast<size_t>(names.size - off));
      if (nul == nullptr) {
        return ErrorAt(
            s.header_offset, structure,
            "name at offset " + std::to_string(off) + " is not NUL-terminated inside the section-name table");
      }
      s.name = std::string_view(begin, static_cast<size_t>(static_cast<const char*>(nul) - begin));
    }
  }

  // Symbol tables: the first SHT_DYNSYM and the first SHT_SYMTAB.
  bool have_dynamic = false, have_static = false;
  for (const ElfSection& s : sections_) {
    if (s.type == SHT_DYNSYM && !have_dynamic) {
      have_dynamic = true;
      SORUN_RETURN_IF_ERROR(ParseSymbolTable(s, &dynamic_symbols_));
    } else if (s.type == SHT_SYMTAB && !have_static) {
      have_static = true;
      SORUN_RETURN_IF_ERROR(ParseSymbolTable(s, &static_symbols_));
    }
  }
  return Status::Ok();
}

Status ElfImage::ParseSymbolTable(const ElfSection& table, std::vector<ElfSymbol>* out) {
  const std::string table_name = TableName(table.index);
  const std::string header = "section header " + std::to_string(table.index) + " (" + table_name + ")";
  if (table.entsize != sizeof(Elf64_Sym)) {
    return ErrorAt(table.header_offset + offsetof(Elf64_Shdr, sh_entsize), header,
                   "sh_entsize " + std::to_string(table.entsize) + " (expected 24 for Elf64_Sym)");
  }
  if (table.size % sizeof(Elf64_Sym) != 0) {
    return ErrorAt(table.header_offset + offsetof(Elf64_Shdr, sh_size), header,
                   "sh_size " + std::to_string(table.size) + " is not a multiple of the 24-byte Elf64_Sym");
  }
  if (table.link >= sections_.size()) {
    return ErrorAt(table.header_offset + offsetof(Elf64_Shdr, sh_link), header,
                   "sh_link " + std::to_string(table.link) + " (its string table) is not a section (there are " +
                       std::to_string(sections_.size()) + ")");
  }
  const ElfSection& strings = sections_[table.link];
  if (strings.type != SHT_STRTAB) {
    return ErrorAt(table.header_offset + offsetof(Elf64_Shdr, sh_link), header,
                   "sh_link " + std::to_string(table.link) + " names " + SectionLabel(strings) + " of " +
                       SectionTypeName(strings.type) + ", not SHT_STRTAB");
  }

  // The table's bytes were checked to lie inside the file when its header was read.
  return ReadSymbols(table.index, table_name, table.offset, table.size / sizeof(Elf64_Sym), strings.offset,
                     strings.size, SectionLabel(strings), out);
}

Status ElfImage::ReadSymbols(uint32_t table, const std::string& table_name, uint64_t offset, uint64_t count,
                             uint64_t strings, uint64_t strings_size, const std::string& strings_label,
                             std::vector<ElfSymbol>* out) {
  if (count > size_ / sizeof(Elf64_Sym) || !ElfRangeFits(offset, count * sizeof(Elf64_Sym), size_)) {
    return ErrorAt(
        offset, table_name,
        std::to_string(count) + " symbols extend past the end of the file (" + std::to_string(size_) + " bytes)");
  }
  out->reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    ElfSymbol sym;
    sym.table = table;
    sym.index = static_cast<uint32_t>(i);
    sym.entry_offset = offset + i * sizeof(Elf64_Sym);
    Elf64_Sym e;
    CopyElfStruct(data_, size_, sym.entry_offset, &e);  // inside the table, checked above
    const uint32_t name_offset = e.st_name;
    sym.info = e.st_info;
    sym.other = e.st_other;
    sym.shndx = e.st_shndx;
    sym.value = e.st_value;
    sym.size = e.st_size;
    if (name_offset >= strings_size) {
      return ErrorAt(sym.entry_offset, table_name + " symbol " + std::to_string(i),
                     "name offset " + std::to_string(name_offset) + " is past the end of its string table (" +
                         strings_label + ", " + std::to_string(strings_size) + " bytes)");
    }
    const char* begin = reinterpret_cast<const char*>(data_ + strings + name_offset);
    const void* nul = std::memchr(begin, 0, static_cast<size_t>(strings_size - name_offset));
    if (nul == nullptr) {
      return ErrorAt(
          sym.entry_offset, table_name + " symbol " + std::to_string(i),
          "name at offset " + std::to_string(name_offset) + " is not NUL-terminated inside " + strings_label);
    }
    sym.name = std::string_view(begin, static_cast<size_t>(static_cast<const char*>(nul) - begin));
    // Section indices mean nothing without section headers (symbols read through PT_DYNAMIC).
    if (table != elf::kDynamicSegmentTable && sym.shndx != SHN_UNDEF && sym.shndx < SHN_LORESERVE &&
        sym.shndx >= sections_.size()) {
      return ErrorAt(sym.entry_offset + offsetof(Elf64_Sym, st_shndx), table_name + " symbol " + std::to_string(i),
                     "st_shndx " + std::to_string(sym.shndx) + " of symbol '" + std::string(sym.name) +
                         "' is not a section (there are " + std::to_string(sections_.size()) + ")");
    }
    out->push_back(sym);
  }
  return Status::Ok();
}

std::string ElfImage::MachineName() const { return ElfMachineName(header_.e_machine); }

const ElfSection* ElfImage::FindSection(std::string_view name) const {
  for (const ElfSection& s : sections_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const ElfSymbol* ElfImage::FindDefinedSymbol(std::string_view name) const {
  if (name.empty()) return nullptr;  // the null symbol and section/file symbols are unnamed
  for (const std::vector<ElfSymbol>* table : {&dynamic_symbols_, &static_symbols_}) {
    const ElfSymbol* local = nullptr;
    for (const ElfSymbol& sym : *table) {
      if (!sym.defined() || sym.name != name) continue;
      if (sym.binding() != STB_LOCAL) return &sym;
      if (local == nullptr) local = &sym;
    }
    if (local != nullptr) return local;
  }
  return nullptr;
}

bool ElfImage::HasSymbol(std::string_view name) const { return FindDefinedSymbol(name) != nullptr; }

std::string ElfImage::TableName(uint32_t table_index) const {
  if (table_index == elf::kDynamicSegmentTable) return "DT_SYMTAB";
  const ElfSection& table = sections_[table_index];
  if (!table.name.empty()) return std::string(table.name);
  return table.type == SHT_DYNSYM ? ".dynsym" : ".symtab";
}

std::string ElfImage::SymbolLabel(const ElfSymbol& symbol) const {
  return "symbol '" + std::string(symbol.name) + "' (" + TableName(symbol.table) + " symbol " +
         std::to_string(symbol.index) + " at byte " + std::to_string(symbol.entry_offset) + ")";
}

StatusOr<ElfSymbolData> ElfImage::FindSymbolData(const std::string& name) const {
  if (name.empty()) return InvalidArgument(file_name_ + ": empty symbol name");
  const ElfSymbol* sym = FindDefinedSymbol(name);
  if (sym == nullptr) {
    for (const std::vector<ElfSymbol>* table : {&dynamic_symbols_, &static_symbols_}) {
      for (const ElfSymbol& s : *table) {
        if (s.name == name) {
          return FailedPrecondition(file_name_ + ": " + SymbolLabel(s) +
                                    " is undefined (SHN_UNDEF): the file refers to it but does not contain it");
        }
      }
    }
    std::string where = dynamic_symbols_.empty() && static_symbols_.empty() ? " (the file has no symbol table)"
                                                                            : " in .dynsym or .symtab";
    return NotFound(file_name_ + ": no symbol named '" + name + "'" + where);
  }
  const std::string label = file_name_ + ": " + SymbolLabel(*sym);
  if (sym->shndx == SHN_ABS) {
    return FailedPrecondition(label + " is absolute (SHN_ABS): it has no bytes in the file");
  }
  if (sym->shndx == SHN_COMMON) {
    return FailedPrecondition(label + " is a common symbol (SHN_COMMON): it has no bytes in the file");
  }
  if (sym->shndx == SHN_XINDEX) {
    return Unimplemented(label + " uses an extended section index (SHN_XINDEX), which is not supported");
  }
  if (sym->shndx >= SHN_LORESERVE) {
    return Unimplemented(label + " has the reserved section index " + HexString(sym->shndx));
  }
  if (sym->type() == STT_TLS) {
    return Unimplemented(label + " is thread-local (STT_TLS): its value is not an address");
  }
  if (sym->table == elf::kDynamicSegmentTable) {  // no section headers: bounded by its PT_LOAD segment
    auto extent = BoundSymbolBytes(name, sym->value, sym->size, LoadSegments());
    if (!extent.ok()) return std::move(extent).status().Annotate(label);
    ElfSymbolData out;
    out.name = name;
    out.section = "PT_LOAD segment " + std::to_string(extent->segment);
    out.table = TableName(sym->table);
    out.address = sym->value;
    out.file_offset = extent->file_offset;
    out.size = sym->size;
    out.data = extent->data;
    return out;
  }
  const ElfSection& section = sections_[sym->shndx];
  if (section.type == SHT_NOBITS) {
    return FailedPrecondition(label + " is in " + SectionLabel(section) +
                              ", a SHT_NOBITS section with no bytes in the file");
  }
  if (section.type == SHT_NULL) {
    return ErrorAt(sym->entry_offset + offsetof(Elf64_Sym, st_shndx),
                   TableName(sym->table) + " symbol " + std::to_string(sym->index),
                   "symbol '" + name + "' belongs to " + SectionLabel(section) + " of type SHT_NULL");
  }
  // [value, value + size) must lie inside [sh_addr, sh_addr + sh_size).
  const bool inside = sym->value >= section.addr && sym->value - section.addr <= section.size &&
                      sym->size <= section.size - (sym->value - section.addr);
  if (!inside) {
    return ErrorAt(sym->entry_offset + offsetof(Elf64_Sym, st_value),
                   TableName(sym->table) + " symbol " + std::to_string(sym->index),
                   "symbol '" + name + "' at st_value " + HexString(sym->value) + " with st_size " +
                       std::to_string(sym->size) + " lies outside its " + SectionLabel(section) + " [" +
                       HexString(section.addr) + ", +" + std::to_string(section.size) + ")");
  }
  const uint64_t file_offset = section.offset + (sym->value - section.addr);
  if (!ElfRangeFits(file_offset, sym->size, size_)) {  // cannot happen for a validated section; kept as a guard
    return ErrorAt(sym->entry_offset + offsetof(Elf64_Sym, st_value),
                   TableName(sym->table) + " symbol " + std::to_string(sym->index),
                   "symbol '" + name + "' bytes [" + std::to_string(file_offset) + ", +" + std::to_string(sym->size) +
                       ") fall outside the file (" + std::to_string(size_) + " bytes)");
  }
  ElfSymbolData out;
  out.name = name;
  out.section = std::string(section.name);
  out.table = TableName(sym->table);
  out.address = sym->value;
  out.file_offset = file_offset;
  out.size = sym->size;
  out.data = data_ + file_offset;
  return out;
}

std::vector<std::string> ElfImage::DefinedSymbolNames(std::string_view prefix) const {
  std::vector<std::string> names;
  for (const std::vector<ElfSymbol>* table : {&dynamic_symbols_, &static_symbols_}) {
    for (const ElfSymbol& s : *table) {
      if (s.defined() && !s.name.empty() && s.name.substr(0, prefix.size()) == prefix) {
        names.emplace_back(s.name);
      }
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace sorun
