// The internals of the ELF blob injector (packer/elf_blob_injector.h): one Injector object holds
// the state of one injection and runs its steps in order (Run): check the arguments, read and check
// the input (elf_blob_injector_input.cc), plan the symbols and lay out the new segment
// (elf_blob_injector_layout.cc), write the output and verify it (elf_blob_injector_write.cc).
// Private to //packer:elf_blob_injector; nothing outside that library includes it.
//
// Ownership: the injector borrows the input, blob and checksum bytes (the caller keeps them alive for
// Run()). Thread-safety: one injector per injection; distinct injectors are independent.
#ifndef SORUN_PACKER_ELF_BLOB_INJECTOR_STATE_H_
#define SORUN_PACKER_ELF_BLOB_INJECTOR_STATE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/status.h"
#include "format/elf_preflight.h"
#include "format/elf_struct.h"
#include "inspect/elf_reader.h"
#include "packer/elf_blob_injector.h"

namespace sorun {
namespace blob_injection {

// Smallest page size we assume the loader may use; offsets of new data are aligned to it.
inline constexpr uint64_t kMinPageSize = 4096;
// The largest PT_LOAD alignment accepted (x86-64 uses 4 KiB or 2 MiB, AArch64 up to 64 KiB).
inline constexpr uint64_t kMaxLoadAlignment = 1ull << 30;
// The blob's address alignment (sorun uses parameter data in place when it is 64-byte aligned).
inline constexpr uint64_t kBlobAlignment = 64;

inline constexpr char kBlobSection[] = ".sorun_blob";
inline constexpr char kChecksumSection[] = ".sorun_blob_checksum";
inline constexpr char kHashSection[] = ".hash";

// `alignment` is a power of two. False on overflow.
inline bool AlignUp(uint64_t value, uint64_t alignment, uint64_t* out) {
  const uint64_t mask = alignment - 1;
  if (value > UINT64_MAX - mask) return false;
  *out = (value + mask) & ~mask;
  return true;
}

inline bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// Little-endian stores into the output image (the host is little-endian: format/elf_struct.h).
template <typename T>
void Store(std::string* out, uint64_t offset, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>, "plain data only");
  std::memcpy(&(*out)[offset], &value, sizeof(T));
}
inline void Put8(std::string* b, uint64_t off, uint8_t v) { Store(b, off, v); }
inline void Put16(std::string* b, uint64_t off, uint16_t v) { Store(b, off, v); }
inline void Put32(std::string* b, uint64_t off, uint32_t v) { Store(b, off, v); }
inline void Put64(std::string* b, uint64_t off, uint64_t v) { Store(b, off, v); }

// The System V ABI symbol hash (DT_HASH).
inline uint32_t SysvHash(std::string_view name) {
  uint32_t h = 0;
  for (unsigned char c : name) {
    h = (h << 4) + c;
    const uint32_t g = h & 0xf0000000u;
    if (g != 0) h ^= g >> 24;
    h &= ~g;
  }
  return h;
}

// Bucket count for `symbols` symbols: the largest of these primes (the series GNU ld uses) not above
// the count, so chains stay one or two entries long.
inline uint32_t SysvBucketCount(uint64_t symbols) {
  static const uint32_t kSizes[] = {1,      3,      17,      37,      67,      97,      131,     197,   263,
                                    521,    1031,   2053,    4099,    8209,    16411,   32771,   65537, 131101,
                                    262147, 524309, 1048583, 2097169, 4194319, 8388617, 16777259};
  uint32_t best = kSizes[0];
  for (uint32_t size : kSizes) {
    if (size > symbols) break;
    best = size;
  }
  return best;
}

// One of the symbols being added or retargeted.
struct PlannedSymbol {
  std::string name;
  uint64_t size = 0;
  bool is_checksum = false;
  int64_t dynamic_index = -1;            // existing .dynsym entry to retarget, or -1 to append
  std::vector<uint32_t> static_indices;  // existing .symtab entries to retarget
  uint32_t dynstr_offset = 0;            // name offset in the new .dynstr (appended symbols)
  uint32_t strtab_offset = 0;            // name offset in the new .strtab (appended symbols)
  uint64_t address = 0;
  uint32_t section = 0;
};

// Strings appended to an existing string table (whose old bytes stay at the same offsets).
struct StringAppender {
  uint64_t base = 0;  // size of the old table
  std::string added;
  // Offset of `s` in the new table; false if it would not fit an Elf64 32-bit name offset.
  bool Add(std::string_view s, uint32_t* offset) {
    const uint64_t at = base + added.size();
    if (at + s.size() + 1 > UINT32_MAX) return false;
    added.append(s.data(), s.size());
    added.push_back('\0');
    *offset = static_cast<uint32_t>(at);
    return true;
  }
};

class Injector {
 public:
  Injector(std::string_view input, const std::string& name, std::string_view blob, std::string_view checksum,
           const BlobInjectionOptions& options)
      : in_(input), name_(name), blob_(blob), checksum_(checksum), options_(options) {}

  StatusOr<std::string> Run(BlobInjectionReport* report);

 private:
  Status CheckArguments() const;
  Status ReadHeader();
  Status ReadProgramHeaders();
  Status ReadDynamicSection();
  Status FindTables();
  Status CheckHashTables() const;
  Status PlanSymbols();
  // Whether the program header table can grow by one entry where it is (see Layout()); plans the
  // note segments that must move out of its way.
  bool PlanInPlaceProgramHeaders();
  Status Layout();
  StatusOr<std::string> Write() const;
  Status VerifyOutput(const std::string& out) const;

  const uint8_t* bytes() const { return reinterpret_cast<const uint8_t*>(in_.data()); }
  // Unimplemented "<file>: cannot inject a blob: <why>" for inputs this injector does not handle.
  Status Unsupported(const std::string& why) const { return Unimplemented(name_ + ": cannot inject a blob: " + why); }
  // DataLoss "<file>: <structure> byte <offset>: <why>" for malformed inputs.
  Status Malformed(uint64_t offset, const std::string& structure, const std::string& why) const {
    return DataLoss(name_ + ": " + structure + " byte " + std::to_string(offset) + ": " + why);
  }
  std::string SectionLabel(uint32_t index) const {
    const ElfSection& s = image_.sections()[index];
    return "section " + std::to_string(index) + (s.name.empty() ? "" : " (" + std::string(s.name) + ")");
  }
  // True when [vaddr, vaddr + size) lies in the file-backed part of one PT_LOAD; sets its file offset.
  bool FileOffsetOf(uint64_t vaddr, uint64_t size, uint64_t* offset) const;
  // The section of `type` whose sh_addr is `address`, checked to be what the loader sees there.
  StatusOr<uint32_t> SectionAt(uint64_t address, uint32_t type, const char* tag) const;

  std::string_view in_;
  std::string name_;
  std::string_view blob_;
  std::string_view checksum_;
  BlobInjectionOptions options_;
  ElfImage image_;

  // ELF header.
  uint64_t phoff_ = 0;
  uint16_t phnum_ = 0;
  uint64_t shoff_ = 0;
  uint16_t shnum_ = 0;
  uint16_t shstrndx_ = 0;

  // Segments.
  std::vector<ElfProgramHeader> phdrs_;
  size_t last_load_ = 0;       // index of the last PT_LOAD in phdrs_
  uint64_t load_align_ = 0;    // the largest PT_LOAD p_align (at least kMinPageSize)
  uint64_t vaddr_end_ = 0;     // end of the highest segment in memory
  uint64_t file_map_end_ = 0;  // end of the file bytes a loader's page mappings of them may cover
  const ElfProgramHeader* dynamic_ = nullptr;

  // PT_DYNAMIC: entries up to and including the first DT_NULL, and the slot count.
  std::vector<Elf64_Dyn> dyn_;
  size_t dyn_slots_ = 0;
  uint64_t dt_symtab_ = 0, dt_strtab_ = 0, dt_strsz_ = 0;
  bool has_hash_ = false, has_gnu_hash_ = false, has_versym_ = false;
  uint64_t dt_hash_ = 0, dt_gnu_hash_ = 0, dt_versym_ = 0;

  // Sections of the live tables (indices into image_.sections()).
  uint32_t dynsym_index_ = 0, dynstr_index_ = 0;
  uint32_t hash_index_ = 0, gnu_hash_index_ = 0, versym_index_ = 0;
  uint32_t symtab_index_ = 0, strtab_index_ = 0;  // 0: no .symtab
  uint64_t dynsym_count_ = 0;

  // The plan.
  std::vector<PlannedSymbol> symbols_;
  uint64_t appended_ = 0;  // symbols appended to .dynsym
  StringAppender dynstr_add_, strtab_add_, shstrtab_add_;
  // Section indices must survive strip/objcopy, which copy .dynsym verbatim but drop non-allocated
  // sections and SHT_NULL headers (renumbering the rest). So the new sections take the header of a
  // .gnu.hash that is no longer used (an allocated slot), else go right after the last SHF_ALLOC
  // header (indices from insert_at_ on move up by added_sections_).
  uint32_t insert_at_ = 0, added_sections_ = 0;
  uint32_t blob_section_ = 0, checksum_section_ = 0, new_shnum_ = 0;
  uint32_t Renumber(uint32_t old_index) const {
    return old_index >= insert_at_ && old_index < shnum_ ? old_index + added_sections_ : old_index;
  }
  uint32_t hash_name_ = 0, blob_name_ = 0, checksum_name_ = 0;
  uint32_t nbucket_ = 0;

  // A segment (PT_NOTE) moved into the new PT_LOAD to make room for the grown program header table.
  struct MovedRange {
    size_t phdr = 0;
    uint64_t old_offset = 0, size = 0, alignment = 1, new_offset = 0;
  };
  bool phdrs_in_place_ = false;
  std::string phdrs_moved_reason_;
  std::vector<MovedRange> moved_;

  // Layout (file offsets; the segment's addresses are seg_vaddr_ + (offset - seg_offset_)).
  uint64_t seg_offset_ = 0, seg_vaddr_ = 0, seg_size_ = 0;
  uint64_t phdr_off_ = 0, dynsym_off_ = 0, dynstr_off_ = 0, hash_off_ = 0, versym_off_ = 0;
  uint64_t checksum_off_ = 0, blob_off_ = 0;
  uint64_t dynsym_size_ = 0, dynstr_size_ = 0, hash_size_ = 0, versym_size_ = 0;
  uint64_t shstrtab_off_ = 0, strtab_off_ = 0, symtab_off_ = 0, shdr_off_ = 0, total_ = 0;
  uint64_t shstrtab_size_ = 0, strtab_size_ = 0, symtab_size_ = 0;

  uint64_t Address(uint64_t file_offset) const { return seg_vaddr_ + (file_offset - seg_offset_); }
};

}  // namespace blob_injection
}  // namespace sorun

#endif  // SORUN_PACKER_ELF_BLOB_INJECTOR_STATE_H_
