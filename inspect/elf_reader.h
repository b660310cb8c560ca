// ElfImage: reads an ELF64 little-endian file image (shared library, executable or relocatable object;
// x86-64, aarch64, any other machine with the same layout) from memory, without loading, mapping for
// execution or dlopen()ing it. Used to find the bytes of a symbol such as `__tvm_dev_mblob` inside a
// model library, and to list symbols (e.g. tvm-ffi era `__tvm_ffi_*`).
//
// Parse() validates the whole structure up front: the ELF header, the program and section header
// tables, section names, every symbol table and every symbol's name offset and section index, with
// overflow-safe arithmetic. A shared library without section headers (e_shoff 0, as `sstrip` and
// some packers leave it) or without a .dynsym section still has its dynamic symbol table: it is read
// the way the dynamic loader finds it, through PT_DYNAMIC (DT_SYMTAB, DT_STRTAB, DT_STRSZ, DT_SYMENT;
// the symbol count from DT_HASH's nchain or DT_GNU_HASH's chains), every address mapped to a file
// offset through the PT_LOAD segments (format/elf_preflight.h reads them, for the preflight too). Afterwards the
// accessors cannot fail and FindSymbolData() only has to check the symbol it maps. Errors name the file, the structure
// ("section header 7", ".dynsym symbol 12") and the absolute byte offset: "lib.so: section header 7 byte 1234: ...".
// Malformed files are DataLoss; ELF32 and big-endian files are Unimplemented.
//
// Ownership: an ElfImage borrows the image bytes, and every string_view / pointer it hands out points
// into them. Parse()'s caller keeps the bytes alive (or passes an `owner` object that does, which is
// kept by the image and all its copies); ReadFile() maps the file and owns the mapping.
// Thread-safety: an ElfImage is immutable after Parse(); const methods may be called concurrently.
#ifndef SORUN_INSPECT_ELF_READER_H_
#define SORUN_INSPECT_ELF_READER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/object.h"
#include "base/status.h"
#include "format/elf_preflight.h"
#include "format/elf_struct.h"
#include "serialization/blob_extent.h"

namespace sorun {

// ELF constants and structs come from glibc's <elf.h> (ET_DYN, SHT_DYNSYM, SHN_UNDEF, Elf64_Sym, ...,
// through format/elf_struct.h); this is the one value sorun adds.
namespace elf {
// ElfSymbol::table of symbols read through PT_DYNAMIC (no .dynsym section header).
inline constexpr uint32_t kDynamicSegmentTable = 0xffffffffu;
}  // namespace elf

// One section header. `name` points into the image.
struct ElfSection {
  uint32_t index = 0;
  std::string_view name;
  uint32_t type = 0;
  uint64_t flags = 0;
  uint64_t addr = 0;
  uint64_t offset = 0;  // file offset of the contents (meaningless for SHT_NOBITS)
  uint64_t size = 0;
  uint32_t link = 0;
  uint32_t info = 0;
  uint64_t entsize = 0;
  uint64_t header_offset = 0;  // file offset of this section header
};

// One symbol table entry. `name` points into the image.
struct ElfSymbol {
  std::string_view name;
  uint64_t value = 0;  // st_value: a virtual address (ET_DYN/ET_EXEC) or section offset (ET_REL)
  uint64_t size = 0;
  uint16_t shndx = 0;
  uint8_t info = 0;  // binding << 4 | type
  uint8_t other = 0;
  uint32_t table = 0;         // section index of the symbol table holding it (elf::kDynamicSegmentTable: PT_DYNAMIC)
  uint32_t index = 0;         // index within that table
  uint64_t entry_offset = 0;  // file offset of the Elf64_Sym entry

  uint8_t binding() const { return static_cast<uint8_t>(ELF64_ST_BIND(info)); }  // STB_GLOBAL, ...
  uint8_t type() const { return static_cast<uint8_t>(ELF64_ST_TYPE(info)); }     // STT_OBJECT, ...
  bool defined() const { return shndx != SHN_UNDEF; }
};

// The bytes of a symbol inside the file. `data` points into the image (valid while it is).
struct ElfSymbolData {
  std::string name;
  std::string section;   // containing section, e.g. ".rodata" ("PT_LOAD segment 2" without section headers)
  std::string table;     // ".dynsym", ".symtab", or "DT_SYMTAB" (read through PT_DYNAMIC)
  uint64_t address = 0;  // st_value
  uint64_t file_offset = 0;
  uint64_t size = 0;
  const uint8_t* data = nullptr;
};

class ElfImage {
 public:
  ElfImage() = default;

  // Parses [data, data + size). `file_name` is used in messages. `owner`, if given, keeps the bytes
  // alive and is shared by the image and its copies.
  static StatusOr<ElfImage> Parse(const uint8_t* data, size_t size, std::string file_name,
                                  ObjectPtr<Object> owner = nullptr);
  // Maps `path` read-only and parses it; the image owns the mapping. NotFound if it does not exist.
  static StatusOr<ElfImage> ReadFile(const std::string& path);

  const std::string& file_name() const { return file_name_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // The object keeping the bytes alive (null when the caller does).
  const ObjectPtr<Object>& owner() const { return owner_; }

  // The ELF header as stored (checked: ELF64, little-endian, EI_VERSION 1, e_version 1, e_ehsize).
  const Elf64_Ehdr& header() const { return header_; }
  uint16_t type() const { return header_.e_type; }        // e_type (ET_DYN, ...)
  uint16_t machine() const { return header_.e_machine; }  // e_machine
  // "x86_64", "aarch64", ... or "ELF machine <n>" (ElfMachineName, format/elf_preflight.h).
  std::string MachineName() const;

  const std::vector<ElfSection>& sections() const { return sections_; }
  // Every program header, in table order (empty for a relocatable object).
  const std::vector<ElfProgramHeader>& program_headers() const { return program_headers_; }
  // The entries of the (first) PT_DYNAMIC up to and including DT_NULL, as read by
  // format/elf_preflight.h's ReadElfDynamicFacts; dynamic_terminated() is false when no DT_NULL ends
  // them. Empty without PT_DYNAMIC.
  const std::vector<Elf64_Dyn>& dynamic_entries() const { return dynamic_entries_; }
  bool dynamic_terminated() const { return dynamic_terminated_; }
  // The PT_LOAD segments with their bytes in this image (serialization/blob_extent.h): the facts
  // BoundSymbolBytes / LocateBlob need. Empty for a relocatable object.
  std::vector<LoadSegment> LoadSegments() const;
  // The first section called `name`, or null.
  const ElfSection* FindSection(std::string_view name) const;
  // Entries of .dynsym / .symtab (the first SHT_DYNSYM / SHT_SYMTAB section); empty when absent.
  // Without a .dynsym section, dynamic_symbols() is the table PT_DYNAMIC's DT_SYMTAB points at.
  // Index 0 is the null symbol, as in the file.
  const std::vector<ElfSymbol>& dynamic_symbols() const { return dynamic_symbols_; }
  const std::vector<ElfSymbol>& static_symbols() const { return static_symbols_; }

  // True if .dynsym or .symtab defines (st_shndx != SHN_UNDEF) a symbol called `name`.
  bool HasSymbol(std::string_view name) const;
  // The defined symbol `name`, searched in .dynsym and then .symtab (global/weak before local), or
  // null when neither defines it.
  const ElfSymbol* FindDefinedSymbol(std::string_view name) const;
  // The bytes of symbol `name` in the file: st_value is mapped to a file offset through the section
  // the symbol belongs to (sh_offset + st_value - sh_addr), and [st_value, st_value + st_size) must lie
  // inside that section. A symbol read through PT_DYNAMIC (no section headers) is bounded by its
  // PT_LOAD segment instead (BoundSymbolBytes; st_size 0 reaches to the segment's file-backed end).
  // Errors: InvalidArgument (empty name); NotFound (no such symbol); FailedPrecondition (undefined, absolute,
  // common, or in a SHT_NOBITS section such as .bss: no bytes in the file); Unimplemented
  // (thread-local, extended or processor-specific section index); DataLoss (outside its section).
  StatusOr<ElfSymbolData> FindSymbolData(const std::string& name) const;
  // Names of the defined symbols of both tables that start with `prefix`, sorted, without duplicates.
  std::vector<std::string> DefinedSymbolNames(std::string_view prefix = "") const;

 private:
  Status ParseAll();
  Status ParseSectionHeaders();
  Status ParseSymbolTable(const ElfSection& table, std::vector<ElfSymbol>* out);
  // dynamic_symbols_ from DT_SYMTAB / DT_STRTAB (no .dynsym section).
  Status ParseDynamicSegmentSymbols(const ElfDynamicFacts& facts);
  // Symbol count of DT_SYMTAB from DT_HASH (nchain) or DT_GNU_HASH (the highest chained index + 1).
  StatusOr<uint64_t> DynamicSymbolCount(const ElfDynamicFacts& facts) const;
  // Reads `symbol_count` Elf64_Sym entries at file offset `offset` with names in [strings, +strings_size).
  Status ReadSymbols(uint32_t table, const std::string& table_name, uint64_t offset, uint64_t symbol_count,
                     uint64_t strings, uint64_t strings_size, const std::string& strings_label,
                     std::vector<ElfSymbol>* out);
  // DataLoss "<file>: <structure> byte <offset>: <message>".
  Status ErrorAt(uint64_t offset, std::string_view structure, std::string_view message) const;
  // ".dynsym" / ".symtab": the section's name, or the conventional one when sections are unnamed.
  std::string TableName(uint32_t table_index) const;
  std::string SymbolLabel(const ElfSymbol& symbol) const;

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string file_name_;
  ObjectPtr<Object> owner_;
  Elf64_Ehdr header_ = {};
  std::vector<ElfSection> sections_;
  std::vector<ElfProgramHeader> program_headers_;
  std::vector<Elf64_Dyn> dynamic_entries_;
  bool dynamic_terminated_ = false;
  std::vector<ElfSymbol> dynamic_symbols_;
  std::vector<ElfSymbol> static_symbols_;
};

}  // namespace sorun

#endif  // SORUN_INSPECT_ELF_READER_H_
