#include "packer/elf_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "format/binary_reader.h"
#include "base/file_util.h"

namespace sorun {
namespace {

// True when [offset, offset + length) lies inside [0, size). Overflow-safe.
bool RangeFits(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

std::string SectionTypeName(uint32_t type) {
  switch (type) {
    case elf::kSectionNull: return "SHT_NULL";
    case elf::kSectionProgBits: return "SHT_PROGBITS";
    case elf::kSectionSymtab: return "SHT_SYMTAB";
    case elf::kSectionStrtab: return "SHT_STRTAB";
    case elf::kSectionNoBits: return "SHT_NOBITS";
    case elf::kSectionDynsym: return "SHT_DYNSYM";
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

StatusOr<ElfImage> ElfImage::Parse(const uint8_t* data, size_t size, std::string file_name,
                                   ObjectPtr<Object> owner) {
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
  if (size_ < 4 || std::memcmp(data_, "\x7f" "ELF", 4) != 0) {
    return DataLoss(file_name_ + ": not an ELF file (no \\x7fELF magic at byte 0)");
  }
  if (size_ < 16) {
    return ErrorAt(size_, kHeader,
                   "truncated: e_ident needs 16 bytes but the file has " + std::to_string(size_));
  }
  const uint8_t elf_class = data_[4];
  if (elf_class == 1) {
    return Unimplemented(file_name_ + ": ELF header byte 4: ELF32 files (EI_CLASS 1) are not supported; " +
                         "sorun reads ELF64 only");
  }
  if (elf_class != 2) {
    return ErrorAt(4, kHeader, "invalid EI_CLASS " + std::to_string(elf_class) + " (expected 2, ELF64)");
  }
  const uint8_t encoding = data_[5];
  if (encoding == 2) {
    return Unimplemented(file_name_ + ": ELF header byte 5: big-endian ELF files (EI_DATA 2, ELFDATA2MSB) " +
                         "are not supported; sorun reads little-endian only");
  }
  if (encoding != 1) {
    return ErrorAt(5, kHeader,
                   "invalid EI_DATA " + std::to_string(encoding) + " (expected 1, little-endian)");
  }
  if (data_[6] != 1) {
    return ErrorAt(6, kHeader, "unsupported EI_VERSION " + std::to_string(data_[6]) + " (expected 1)");
  }
  if (size_ < elf::kHeaderSize) {
    return ErrorAt(size_, kHeader,
                   "truncated: the ELF64 header needs 64 bytes but the file has " + std::to_string(size_));
  }

  BinaryReader r(data_ + 16, elf::kHeaderSize - 16, file_name_ + ": ELF header", 16);
  uint32_t version = 0, flags = 0;
  uint64_t entry = 0, phoff = 0, shoff = 0;
  uint16_t ehsize = 0, phentsize = 0, phnum = 0, shentsize = 0, shnum = 0, shstrndx = 0;
  SORUN_RETURN_IF_ERROR(r.ReadU16(&type_));
  SORUN_RETURN_IF_ERROR(r.ReadU16(&machine_));
  SORUN_RETURN_IF_ERROR(r.ReadU32(&version));
  SORUN_RETURN_IF_ERROR(r.ReadU64(&entry));
  SORUN_RETURN_IF_ERROR(r.ReadU64(&phoff));
  SORUN_RETURN_IF_ERROR(r.ReadU64(&shoff));
  SORUN_RETURN_IF_ERROR(r.ReadU32(&flags));
  SORUN_RETURN_IF_ERROR(r.ReadU16(&ehsize));
  SORUN_RETURN_IF_ERROR(r.ReadU16(&phentsize));
  SORUN_RETURN_IF_ERROR(r.ReadU16(&phnum));
  SORUN_RETURN_IF_ERROR(r.ReadU16(&shentsize));
  SORUN_RETURN_IF_ERROR(r.ReadU16(&shnum));
  SORUN_RETURN_IF_ERROR(r.ReadU16(&shstrndx));

  if (version != 1) return ErrorAt(20, kHeader, "e_version " + std::to_string(version) + " (expected 1)");
  if (ehsize < elf::kHeaderSize) {
    return ErrorAt(52, kHeader, "e_ehsize " + std::to_string(ehsize) + " is smaller than the 64-byte ELF64 header");
  }
  if (phnum != 0) {
    if (phentsize < elf::kProgramHeaderSize) {
      return ErrorAt(54, kHeader, "e_phentsize " + std::to_string(phentsize) +
                                      " is smaller than an Elf64_Phdr (56 bytes)");
    }
    if (phoff > size_ || phnum > (size_ - phoff) / phentsize) {
      return ErrorAt(32, kHeader, "program header table at e_phoff " + std::to_string(phoff) + " (" +
                                      std::to_string(phnum) + " entries of " + std::to_string(phentsize) +
                                      " bytes) extends past the end of the file (" + std::to_string(size_) +
                                      " bytes)");
    }
  }
  ElfDynamicFacts facts;
  if (phnum != 0) {
    SORUN_ASSIGN_OR_RETURN(facts, ReadElfDynamicFacts(data_, size_, file_name_));
    program_headers_ = facts.headers;
  }
  SORUN_RETURN_IF_ERROR(ParseSectionHeaders(shoff, shentsize, shnum, shstrndx));
  if (dynamic_symbols_.empty() && facts.has_dynamic && facts.symtab != 0) {
    SORUN_RETURN_IF_ERROR(ParseDynamicSegmentSymbols(facts));
  }
  return Status::Ok();
}

std::vector<LoadSegment> ElfImage::LoadSegments() const {
  std::vector<LoadSegment> out;
  for (const ElfProgramHeader& p : program_headers_) {
    if (p.type != elf::kProgramLoad) continue;
    LoadSegment s;
    s.index = p.index;
    s.vaddr = p.vaddr;
    s.file_size = p.filesz;
    s.memory_size = p.memsz;
    s.file_offset = p.offset;
    s.readable = (p.flags & elf::kSegmentReadable) != 0;
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
    return DataLoss(file_name_ + ": the dynamic section has DT_SYMTAB but neither DT_HASH nor DT_GNU_HASH: the "
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
  if (facts.syment != 0 && facts.syment != elf::kSymbolSize) {
    return DataLoss(file_name_ + ": DT_SYMENT " + std::to_string(facts.syment) + " (expected 24 for Elf64_Sym)");
  }
  std::optional<uint64_t> strings = facts.FileOffset(facts.strtab, facts.strsz);
  if (facts.strtab == 0 || facts.strsz == 0 || !strings) {
    return DataLoss(file_name_ + ": DT_STRTAB " + HexString(facts.strtab) + " with DT_STRSZ " + std::to_string(facts.strsz) +
                    " is not inside the file-backed part of a PT_LOAD segment");
  }
  SORUN_ASSIGN_OR_RETURN(uint64_t count, DynamicSymbolCount(facts));
  std::optional<uint64_t> table;
  if (count <= size_ / elf::kSymbolSize) table = facts.FileOffset(facts.symtab, count * elf::kSymbolSize);
  if (!table) {
    return DataLoss(file_name_ + ": DT_SYMTAB at address " + HexString(facts.symtab) + " with " + std::to_string(count) +
                    " symbols (from the hash table) is not inside the file-backed part of a PT_LOAD segment");
  }
  return ReadSymbols(elf::kDynamicSegmentTable, "DT_SYMTAB", *table, count, *strings, facts.strsz, "DT_STRTAB",
                     &dynamic_symbols_);
}

Status ElfImage::ParseSectionHeaders(uint64_t shoff, uint16_t shentsize, uint16_t shnum, uint16_t shstrndx) {
  const char* kHeader = "ELF header";
  if (shoff == 0) {
    if (shnum != 0) {
      return ErrorAt(60, kHeader, "e_shnum " + std::to_string(shnum) + " but e_shoff is 0 (no section table)");
    }
    return Status::Ok();  // no section headers (e.g. sstrip'ed): no symbols to find
  }
  if (shentsize != elf::kSectionHeaderSize) {
    return ErrorAt(58, kHeader, "e_shentsize " + std::to_string(shentsize) + " (expected 64 for Elf64_Shdr)");
  }
  if (!RangeFits(shoff, elf::kSectionHeaderSize, size_)) {
    return ErrorAt(40, kHeader, "section header table at e_shoff " + std::to_string(shoff) +
                                    " starts past the end of the file (" + std::to_string(size_) + " bytes)");
  }
  // Extended numbering: with e_shnum 0 / e_shstrndx SHN_XINDEX, the real values live in section 0.
  uint64_t count = shnum;
  uint32_t strndx = shstrndx;
  uint64_t count_field = 60;
  if (shnum == 0 || shstrndx == elf::kSymbolExtended) {
    BinaryReader r0(data_ + shoff, elf::kSectionHeaderSize, file_name_ + ": section header 0", shoff);
    uint64_t size0 = 0;
    uint32_t link0 = 0;
    SORUN_RETURN_IF_ERROR(r0.Skip(32, "sh_name..sh_offset"));
    SORUN_RETURN_IF_ERROR(r0.ReadU64(&size0));
    SORUN_RETURN_IF_ERROR(r0.ReadU32(&link0));
    if (shnum == 0) {
      count = size0;
      count_field = shoff + 32;
    }
    if (shstrndx == elf::kSymbolExtended) strndx = link0;
  }
  if (count == 0) return Status::Ok();
  const uint64_t available = (size_ - shoff) / elf::kSectionHeaderSize;
  if (count > available) {
    return ErrorAt(count_field, count_field == 60 ? "ELF header" : "section header 0",
                   "section count " + std::to_string(count) + " needs " +
                       (count > UINT64_MAX / elf::kSectionHeaderSize
                            ? std::string("more than 2^64")
                            : std::to_string(count * elf::kSectionHeaderSize)) +
                       " bytes of section headers at e_shoff " + std::to_string(shoff) + " but only " +
                       std::to_string(size_ - shoff) + " bytes remain in the file");
  }

  sections_.reserve(static_cast<size_t>(count));
  const uint64_t table_bytes = count * elf::kSectionHeaderSize;
  BinaryReader r(data_ + shoff, static_cast<size_t>(table_bytes), file_name_ + ": section header table", shoff);
  std::vector<uint32_t> name_offsets;
  name_offsets.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    ElfSection s;
    s.index = static_cast<uint32_t>(i);
    s.header_offset = r.offset();
    uint32_t name_offset = 0;
    SORUN_RETURN_IF_ERROR(r.ReadU32(&name_offset));
    SORUN_RETURN_IF_ERROR(r.ReadU32(&s.type));
    SORUN_RETURN_IF_ERROR(r.ReadU64(&s.flags));
    SORUN_RETURN_IF_ERROR(r.ReadU64(&s.addr));
    SORUN_RETURN_IF_ERROR(r.ReadU64(&s.offset));
    SORUN_RETURN_IF_ERROR(r.ReadU64(&s.size));
    SORUN_RETURN_IF_ERROR(r.ReadU32(&s.link));
    SORUN_RETURN_IF_ERROR(r.ReadU32(&s.info));
    uint64_t addralign = 0;
    SORUN_RETURN_IF_ERROR(r.ReadU64(&addralign));
    SORUN_RETURN_IF_ERROR(r.ReadU64(&s.entsize));
    if (s.type != elf::kSectionNoBits && s.type != elf::kSectionNull && !RangeFits(s.offset, s.size, size_)) {
      return ErrorAt(s.header_offset + 24, "section header " + std::to_string(i),
                     "sh_offset " + std::to_string(s.offset) + " + sh_size " + std::to_string(s.size) +
                         " extends past the end of the file (" + std::to_string(size_) + " bytes)");
    }
    name_offsets.push_back(name_offset);
    sections_.push_back(s);
  }

  // Section names, from the section-name string table.
  if (strndx != 0) {
    if (strndx >= count) {
      return ErrorAt(62, kHeader, "e_shstrndx " + std::to_string(strndx) + " is not a section (there are " +
                                      std::to_string(count) + ")");
    }
    const ElfSection& names = sections_[strndx];
    if (names.type != elf::kSectionStrtab) {
      return ErrorAt(names.header_offset + 4, "section header " + std::to_string(strndx),
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
        return ErrorAt(s.header_offset, structure,
                       "name at offset " + std::to_string(off) + " is not NUL-terminated inside the section-name table");
      }
      s.name = std::string_view(begin, static_cast<size_t>(static_cast<const char*>(nul) - begin));
    }
  }

  // Symbol tables: the first SHT_DYNSYM and the first SHT_SYMTAB.
  bool have_dynamic = false, have_static = false;
  for (const ElfSection& s : sections_) {
    if (s.type == elf::kSectionDynsym && !have_dynamic) {
      have_dynamic = true;
      SORUN_RETURN_IF_ERROR(ParseSymbolTable(s, &dynamic_symbols_));
    } else if (s.type == elf::kSectionSymtab && !have_static) {
      have_static = true;
      SORUN_RETURN_IF_ERROR(ParseSymbolTable(s, &static_symbols_));
    }
  }
  return Status::Ok();
}

Status ElfImage::ParseSymbolTable(const ElfSection& table, std::vector<ElfSymbol>* out) {
  const std::string table_name = TableName(table.index);
  const std::string header = "section header " + std::to_string(table.index) + " (" + table_name + ")";
  if (table.entsize != elf::kSymbolSize) {
    return ErrorAt(table.header_offset + 56, header,
                   "sh_entsize " + std::to_string(table.entsize) + " (expected 24 for Elf64_Sym)");
  }
  if (table.size % elf::kSymbolSize != 0) {
    return ErrorAt(table.header_offset + 32, header,
                   "sh_size " + std::to_string(table.size) + " is not a multiple of the 24-byte Elf64_Sym");
  }
  if (table.link >= sections_.size()) {
    return ErrorAt(table.header_offset + 40, header,
                   "sh_link " + std::to_string(table.link) + " (its string table) is not a section (there are " +
                       std::to_string(sections_.size()) + ")");
  }
  const ElfSection& strings = sections_[table.link];
  if (strings.type != elf::kSectionStrtab) {
    return ErrorAt(table.header_offset + 40, header,
                   "sh_link " + std::to_string(table.link) + " names " + SectionLabel(strings) + " of " +
                       SectionTypeName(strings.type) + ", not SHT_STRTAB");
  }

  // The table's bytes were checked to lie inside the file when its header was read.
  return ReadSymbols(table.index, table_name, table.offset, table.size / elf::kSymbolSize, strings.offset,
                     strings.size, SectionLabel(strings), out);
}

Status ElfImage::ReadSymbols(uint32_t table, const std::string& table_name, uint64_t offset, uint64_t count,
                             uint64_t strings, uint64_t strings_size, const std::string& strings_label,
                             std::vector<ElfSymbol>* out) {
  out->reserve(static_cast<size_t>(count));
  BinaryReader r(data_ + offset, static_cast<size_t>(count * elf::kSymbolSize), file_name_ + ": " + table_name,
                 offset);
  for (uint64_t i = 0; i < count; ++i) {
    ElfSymbol sym;
    sym.table = table;
    sym.index = static_cast<uint32_t>(i);
    sym.entry_offset = r.offset();
    uint32_t name_offset = 0;
    SORUN_RETURN_IF_ERROR(r.ReadU32(&name_offset));
    SORUN_RETURN_IF_ERROR(r.ReadU8(&sym.info));
    SORUN_RETURN_IF_ERROR(r.ReadU8(&sym.other));
    SORUN_RETURN_IF_ERROR(r.ReadU16(&sym.shndx));
    SORUN_RETURN_IF_ERROR(r.ReadU64(&sym.value));
    SORUN_RETURN_IF_ERROR(r.ReadU64(&sym.size));
    if (name_offset >= strings_size) {
      return ErrorAt(sym.entry_offset, table_name + " symbol " + std::to_string(i),
                     "name offset " + std::to_string(name_offset) + " is past the end of its string table (" +
                         strings_label + ", " + std::to_string(strings_size) + " bytes)");
    }
    const char* begin = reinterpret_cast<const char*>(data_ + strings + name_offset);
    const void* nul = std::memchr(begin, 0, static_cast<size_t>(strings_size - name_offset));
    if (nul == nullptr) {
      return ErrorAt(sym.entry_offset, table_name + " symbol " + std::to_string(i),
                     "name at offset " + std::to_string(name_offset) + " is not NUL-terminated inside " +
                         strings_label);
    }
    sym.name = std::string_view(begin, static_cast<size_t>(static_cast<const char*>(nul) - begin));
    // Section indices mean nothing without section headers (symbols read through PT_DYNAMIC).
    if (table != elf::kDynamicSegmentTable && sym.shndx != elf::kSymbolUndefined &&
        sym.shndx < elf::kSymbolReservedLow && sym.shndx >= sections_.size()) {
      return ErrorAt(sym.entry_offset + 6, table_name + " symbol " + std::to_string(i),
                     "st_shndx " + std::to_string(sym.shndx) + " of symbol '" + std::string(sym.name) +
                         "' is not a section (there are " + std::to_string(sections_.size()) + ")");
    }
    out->push_back(sym);
  }
  return Status::Ok();
}

std::string ElfImage::MachineName() const {
  switch (machine_) {
    case 3: return "x86";
    case 40: return "arm";
    case elf::kMachineX86_64: return "x86_64";
    case elf::kMachineAarch64: return "aarch64";
    case 243: return "riscv";
    default: return "machine " + std::to_string(machine_);
  }
}

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
      if (sym.binding() != elf::kBindingLocal) return &sym;
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
  return table.type == elf::kSectionDynsym ? ".dynsym" : ".symtab";
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
    std::string where = dynamic_symbols_.empty() && static_symbols_.empty()
                            ? " (the file has no symbol table)"
                            : " in .dynsym or .symtab";
    return NotFound(file_name_ + ": no symbol named '" + name + "'" + where);
  }
  const std::string label = file_name_ + ": " + SymbolLabel(*sym);
  if (sym->shndx == elf::kSymbolAbsolute) {
    return FailedPrecondition(label + " is absolute (SHN_ABS): it has no bytes in the file");
  }
  if (sym->shndx == elf::kSymbolCommon) {
    return FailedPrecondition(label + " is a common symbol (SHN_COMMON): it has no bytes in the file");
  }
  if (sym->shndx == elf::kSymbolExtended) {
    return Unimplemented(label + " uses an extended section index (SHN_XINDEX), which is not supported");
  }
  if (sym->shndx >= elf::kSymbolReservedLow) {
    return Unimplemented(label + " has the reserved section index " + HexString(sym->shndx));
  }
  if (sym->type() == elf::kSymbolTypeTls) {
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
  if (section.type == elf::kSectionNoBits) {
    return FailedPrecondition(label + " is in " + SectionLabel(section) +
                              ", a SHT_NOBITS section with no bytes in the file");
  }
  if (section.type == elf::kSectionNull) {
    return ErrorAt(sym->entry_offset + 6, TableName(sym->table) + " symbol " +
                                              std::to_string(sym->index),
                   "symbol '" + name + "' belongs to " + SectionLabel(section) + " of type SHT_NULL");
  }
  // [value, value + size) must lie inside [sh_addr, sh_addr + sh_size).
  const bool inside = sym->value >= section.addr && sym->value - section.addr <= section.size &&
                      sym->size <= section.size - (sym->value - section.addr);
  if (!inside) {
    return ErrorAt(sym->entry_offset + 8,
                   TableName(sym->table) + " symbol " + std::to_string(sym->index),
                   "symbol '" + name + "' at st_value " + HexString(sym->value) + " with st_size " +
                       std::to_string(sym->size) + " lies outside its " + SectionLabel(section) + " [" +
                       HexString(section.addr) + ", +" + std::to_string(section.size) + ")");
  }
  const uint64_t file_offset = section.offset + (sym->value - section.addr);
  if (!RangeFits(file_offset, sym->size, size_)) {  // cannot happen for a validated section; kept as a guard
    return ErrorAt(sym->entry_offset + 8,
                   TableName(sym->table) + " symbol " + std::to_string(sym->index),
                   "symbol '" + name + "' bytes [" + std::to_string(file_offset) + ", +" +
                       std::to_string(sym->size) + ") fall outside the file (" + std::to_string(size_) + " bytes)");
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
