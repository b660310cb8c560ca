#include "packer/elf_blob_injector.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "format/binary_reader.h"
#include "base/file_util.h"
#include "runtime/registry_keys.h"
#include "serialization/blob_checksum.h"
#include "packer/elf_reader.h"

namespace sorun {
namespace {

// ELF values used here beyond those in elf_reader.h (System V gABI, GNU extensions, <elf.h>).
constexpr uint32_t kPtLoad = 1;
constexpr uint32_t kPtDynamic = 2;
constexpr uint32_t kPtInterp = 3;
constexpr uint32_t kPtNote = 4;
constexpr uint32_t kPtPhdr = 6;
constexpr uint32_t kPfR = 4;
constexpr uint16_t kPnXnum = 0xffff;
constexpr uint32_t kShtHash = 5;
constexpr uint32_t kShtNote = 7;
constexpr uint32_t kShtGnuHash = 0x6ffffff6;
constexpr uint32_t kShtGnuVersym = 0x6fffffff;
constexpr uint32_t kShtRela = 4;
constexpr uint32_t kShtRel = 9;
constexpr uint32_t kShtGroup = 17;
constexpr uint32_t kShtSymtabShndx = 18;
constexpr uint64_t kShfAlloc = 2;
constexpr uint64_t kShfInfoLink = 0x40;
constexpr int64_t kDtNull = 0;
constexpr int64_t kDtHash = 4;
constexpr int64_t kDtStrtab = 5;
constexpr int64_t kDtSymtab = 6;
constexpr int64_t kDtStrsz = 10;
constexpr int64_t kDtSyment = 11;
constexpr int64_t kDtSymtabShndx = 34;
constexpr int64_t kDtGnuPrelinked = 0x6ffffdf5;
constexpr int64_t kDtChecksum = 0x6ffffdf8;
constexpr int64_t kDtGnuHash = 0x6ffffef5;
constexpr int64_t kDtGnuConflict = 0x6ffffef8;
constexpr int64_t kDtGnuLiblist = 0x6ffffef9;
constexpr int64_t kDtVersym = 0x6ffffff0;
constexpr int64_t kDtFlags1 = 0x6ffffffb;
constexpr uint64_t kDf1Pie = 0x08000000;
constexpr uint8_t kStbGlobal = 1;
constexpr uint8_t kSttObject = 1;
constexpr uint8_t kStvDefault = 0;
constexpr uint16_t kVerNdxGlobal = 1;
constexpr uint16_t kMachineRiscv = 243;
constexpr size_t kDynEntrySize = 16;

// Smallest page size we assume the loader may use; offsets of new data are aligned to it.
constexpr uint64_t kMinPageSize = 4096;
// The largest PT_LOAD alignment accepted (x86-64 uses 4 KiB or 2 MiB, AArch64 up to 64 KiB).
constexpr uint64_t kMaxLoadAlignment = 1ull << 30;
// The blob's address alignment (sorun uses parameter data in place when it is 64-byte aligned).
constexpr uint64_t kBlobAlignment = 64;

constexpr char kBlobSection[] = ".sorun_blob";
constexpr char kChecksumSection[] = ".sorun_blob_checksum";
constexpr char kHashSection[] = ".hash";

// Byte offsets of Elf64_Ehdr / Elf64_Shdr / Elf64_Phdr fields.
constexpr size_t kEhPhoff = 32, kEhShoff = 40, kEhPhnum = 56, kEhShnum = 60, kEhShstrndx = 62;
constexpr size_t kShName = 0, kShType = 4, kShFlags = 8, kShAddr = 16, kShOffset = 24, kShSize = 32,
                 kShLink = 40, kShInfo = 44, kShAddralign = 48, kShEntsize = 56;


bool RangeFits(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

// `alignment` is a power of two. False on overflow.
bool AlignUp(uint64_t value, uint64_t alignment, uint64_t* out) {
  const uint64_t mask = alignment - 1;
  if (value > UINT64_MAX - mask) return false;
  *out = (value + mask) & ~mask;
  return true;
}

bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

void Put8(std::string* b, uint64_t off, uint8_t v) { (*b)[off] = static_cast<char>(v); }
void Put16(std::string* b, uint64_t off, uint16_t v) {
  for (int i = 0; i < 2; ++i) (*b)[off + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void Put32(std::string* b, uint64_t off, uint32_t v) {
  for (int i = 0; i < 4; ++i) (*b)[off + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void Put64(std::string* b, uint64_t off, uint64_t v) {
  for (int i = 0; i < 8; ++i) (*b)[off + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// The System V ABI symbol hash (DT_HASH).
uint32_t SysvHash(std::string_view name) {
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
uint32_t SysvBucketCount(uint64_t symbols) {
  static const uint32_t kSizes[] = {1,     3,     17,    37,     67,     97,     131,    197,     263,
                                    521,   1031,  2053,  4099,   8209,   16411,  32771,  65537,   131101,
                                    262147, 524309, 1048583, 2097169, 4194319, 8388617, 16777259};
  uint32_t best = kSizes[0];
  for (uint32_t size : kSizes) {
    if (size > symbols) break;
    best = size;
  }
  return best;
}

struct ProgramHeader {
  uint32_t type = 0;
  uint32_t flags = 0;
  uint64_t offset = 0;
  uint64_t vaddr = 0;
  uint64_t paddr = 0;
  uint64_t filesz = 0;
  uint64_t memsz = 0;
  uint64_t align = 0;
};

struct DynamicEntry {
  int64_t tag = 0;
  uint64_t value = 0;
};

// One of the symbols being added or retargeted.
struct PlannedSymbol {
  std::string name;
  uint64_t size = 0;
  bool is_checksum = false;
  int64_t dynamic_index = -1;           // existing .dynsym entry to retarget, or -1 to append
  std::vector<uint32_t> static_indices;  // existing .symtab entries to retarget
  uint32_t dynstr_offset = 0;           // name offset in the new .dynstr (appended symbols)
  uint32_t strtab_offset = 0;           // name offset in the new .strtab (appended symbols)
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
  Injector(std::string_view input, const std::string& name, std::string_view blob,
           std::string_view checksum, const BlobInjectionOptions& options)
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
  Status Unsupported(const std::string& why) const {
    return Unimplemented(name_ + ": cannot inject a blob: " + why);
  }
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
  std::vector<ProgramHeader> phdrs_;
  size_t last_load_ = 0;        // index of the last PT_LOAD in phdrs_
  uint64_t load_align_ = 0;     // the largest PT_LOAD p_align (at least kMinPageSize)
  uint64_t vaddr_end_ = 0;      // end of the highest segment in memory
  uint64_t file_map_end_ = 0;   // end of the file bytes a loader's page mappings of them may cover
  const ProgramHeader* dynamic_ = nullptr;

  // PT_DYNAMIC: entries up to and including the first DT_NULL, and the slot count.
  std::vector<DynamicEntry> dyn_;
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

Status Injector::CheckArguments() const {
  if (blob_.size() < 8) {
    return InvalidArgument("blob of " + std::to_string(blob_.size()) +
                           " bytes: a __tvm_dev_mblob needs at least its 8-byte length prefix");
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
  if (image_.type() != elf::kTypeShared) {
    const uint16_t t = image_.type();
    const std::string kind = t == elf::kTypeExecutable    ? " (ET_EXEC, an executable)"
                             : t == elf::kTypeRelocatable ? " (ET_REL, an object file)"
                             : t == 4                     ? " (ET_CORE, a core dump)"
                                                          : "";
    return InvalidArgument(name_ + ": e_type " + std::to_string(t) + kind +
                           " is not a shared library (ET_DYN); only shared libraries can be packed");
  }
  const uint16_t m = image_.machine();
  if (m != elf::kMachineX86_64 && m != elf::kMachineAarch64 && m != kMachineRiscv) {
    return Unsupported("e_machine " + std::to_string(m) + " (" + image_.MachineName() +
                       "): only x86-64, AArch64 and RISC-V libraries are supported");
  }
  BinaryReader r(bytes() + 16, elf::kHeaderSize - 16, name_ + ": ELF header", 16);
  uint16_t phentsize = 0, shentsize = 0;
  SORUN_RETURN_IF_ERROR(r.Skip(16, "e_type..e_entry"));
  SORUN_RETURN_IF_ERROR(r.ReadU64(&phoff_));
  SORUN_RETURN_IF_ERROR(r.ReadU64(&shoff_));
  SORUN_RETURN_IF_ERROR(r.Skip(6, "e_flags, e_ehsize"));
  SORUN_RETURN_IF_ERROR(r.ReadU16(&phentsize));
  SORUN_RETURN_IF_ERROR(r.ReadU16(&phnum_));
  SORUN_RETURN_IF_ERROR(r.ReadU16(&shentsize));
  SORUN_RETURN_IF_ERROR(r.ReadU16(&shnum_));
  SORUN_RETURN_IF_ERROR(r.ReadU16(&shstrndx_));
  if (phnum_ == 0) return InvalidArgument(name_ + ": no program headers: not a loadable shared library");
  if (phnum_ == kPnXnum) return Unsupported("extended program header numbering (e_phnum PN_XNUM)");
  if (phentsize != elf::kProgramHeaderSize) {
    return Unsupported("e_phentsize " + std::to_string(phentsize) + " (expected 56)");
  }
  if (phoff_ < elf::kHeaderSize) {
    return Unsupported("e_phoff " + std::to_string(phoff_) + ": the program header table overlaps the ELF header");
  }
  if (shoff_ == 0 || image_.sections().empty()) {
    return Unsupported("the file has no section header table (sstrip'ed?); it is needed to find the symbol tables");
  }
  if (shnum_ == 0 || shstrndx_ == elf::kSymbolExtended) {
    return Unsupported("extended section numbering (e_shnum 0 or e_shstrndx SHN_XINDEX)");
  }
  if (shstrndx_ == 0) return Unsupported("the file has no section-name table (e_shstrndx 0)");
  return Status::Ok();
}

Status Injector::ReadProgramHeaders() {
  // ElfImage::Parse checked that the table lies inside the file.
  BinaryReader r(bytes() + phoff_, static_cast<size_t>(phnum_) * elf::kProgramHeaderSize,
                 name_ + ": program header table", phoff_);
  const ProgramHeader* previous_load = nullptr;
  load_align_ = kMinPageSize;
  phdrs_.resize(phnum_);
  for (uint16_t i = 0; i < phnum_; ++i) {
    ProgramHeader& p = phdrs_[i];
    SORUN_RETURN_IF_ERROR(r.ReadU32(&p.type));
    SORUN_RETURN_IF_ERROR(r.ReadU32(&p.flags));
    SORUN_RETURN_IF_ERROR(r.ReadU64(&p.offset));
    SORUN_RETURN_IF_ERROR(r.ReadU64(&p.vaddr));
    SORUN_RETURN_IF_ERROR(r.ReadU64(&p.paddr));
    SORUN_RETURN_IF_ERROR(r.ReadU64(&p.filesz));
    SORUN_RETURN_IF_ERROR(r.ReadU64(&p.memsz));
    SORUN_RETURN_IF_ERROR(r.ReadU64(&p.align));
    const uint64_t at = phoff_ + static_cast<uint64_t>(i) * elf::kProgramHeaderSize;
    const std::string label = "program header " + std::to_string(i);
    if (p.memsz > UINT64_MAX - p.vaddr) return Malformed(at + 16, label, "p_vaddr + p_memsz overflows");
    if (p.type == kPtInterp) {
      return InvalidArgument(name_ + ": " + label + " is PT_INTERP: this is an executable, not a shared library");
    }
    if (p.type == kPtLoad) {
      if (p.filesz > p.memsz) return Malformed(at + 32, label, "PT_LOAD p_filesz exceeds p_memsz");
      if (!RangeFits(p.offset, p.filesz, in_.size())) {
        return Malformed(at + 8, label, "PT_LOAD file range [" + std::to_string(p.offset) + ", +" +
                                            std::to_string(p.filesz) + ") extends past the end of the file (" +
                                            std::to_string(in_.size()) + " bytes)");
      }
      if (p.align > 1 && !IsPowerOfTwo(p.align)) {
        return Malformed(at + 48, label, "PT_LOAD p_align " + std::to_string(p.align) + " is not a power of two");
      }
      if (previous_load != nullptr && p.vaddr < previous_load->vaddr + previous_load->memsz) {
        return Unsupported(label + ": PT_LOAD segments overlap or are not sorted by address");
      }
      load_align_ = std::max(load_align_, p.align);
      previous_load = &p;
      last_load_ = i;
    } else if (p.type == kPtDynamic) {
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
  for (const ProgramHeader& p : phdrs_) {
    if (p.type != kPtLoad) continue;
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
  for (const ProgramHeader& p : phdrs_) {
    if (p.type == kPtLoad && vaddr >= p.vaddr && size <= p.filesz && vaddr - p.vaddr <= p.filesz - size) {
      *offset = p.offset + (vaddr - p.vaddr);
      return true;
    }
  }
  return false;
}

Status Injector::ReadDynamicSection() {
  const ProgramHeader& d = *dynamic_;
  const std::string label = "PT_DYNAMIC";
  uint64_t mapped = 0;
  if (!FileOffsetOf(d.vaddr, d.filesz, &mapped) || mapped != d.offset) {
    return Unsupported("PT_DYNAMIC (file offset " + std::to_string(d.offset) + ", address " + HexString(d.vaddr) +
                       ") is not file-backed at that address by a PT_LOAD");
  }
  if (d.filesz % kDynEntrySize != 0) {
    return Malformed(d.offset, label, "p_filesz " + std::to_string(d.filesz) + " is not a multiple of 16");
  }
  dyn_slots_ = static_cast<size_t>(d.filesz / kDynEntrySize);
  BinaryReader r(bytes() + d.offset, static_cast<size_t>(d.filesz), name_ + ": dynamic section", d.offset);
  bool terminated = false;
  int seen_symtab = 0, seen_strtab = 0, seen_strsz = 0, seen_hash = 0, seen_gnu_hash = 0, seen_versym = 0;
  for (size_t i = 0; i < dyn_slots_ && !terminated; ++i) {
    DynamicEntry e;
    SORUN_RETURN_IF_ERROR(r.ReadI64(&e.tag));
    SORUN_RETURN_IF_ERROR(r.ReadU64(&e.value));
    dyn_.push_back(e);
    const uint64_t at = d.offset + i * kDynEntrySize;
    const std::string entry = "dynamic entry " + std::to_string(i);
    switch (e.tag) {
      case kDtNull: terminated = true; break;
      case kDtSymtab: dt_symtab_ = e.value; ++seen_symtab; break;
      case kDtStrtab: dt_strtab_ = e.value; ++seen_strtab; break;
      case kDtStrsz: dt_strsz_ = e.value; ++seen_strsz; break;
      case kDtHash: dt_hash_ = e.value; has_hash_ = true; ++seen_hash; break;
      case kDtGnuHash: dt_gnu_hash_ = e.value; has_gnu_hash_ = true; ++seen_gnu_hash; break;
      case kDtVersym: dt_versym_ = e.value; has_versym_ = true; ++seen_versym; break;
      case kDtSyment:
        if (e.value != elf::kSymbolSize) {
          return Malformed(at + 8, entry, "DT_SYMENT " + std::to_string(e.value) + " (expected 24)");
        }
        break;
      case kDtSymtabShndx: return Unsupported(entry + " is DT_SYMTAB_SHNDX (extended symbol section indices)");
      case kDtGnuPrelinked:
      case kDtChecksum:
      case kDtGnuConflict:
      case kDtGnuLiblist:
        return Unsupported(entry + " (tag " + HexString(static_cast<uint64_t>(e.tag)) +
                           ") marks a prelinked library; undo it first (prelink -u)");
      case kDtFlags1:
        if (e.value & kDf1Pie) {
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
    return Unsupported(std::string(tag) + " is " + HexString(address) + " but " + SectionLabel(s.index) +
                       " is at " + HexString(s.addr));
  }
  uint64_t offset = 0;
  if ((s.flags & kShfAlloc) == 0 || !FileOffsetOf(s.addr, s.size, &offset) || offset != s.offset) {
    return Unsupported(SectionLabel(s.index) + " (file offset " + std::to_string(s.offset) + ", address " +
                       HexString(s.addr) + ") is not what a PT_LOAD maps at that address");
  }
  return static_cast<uint32_t>(found);
}

Status Injector::FindTables() {
  SORUN_ASSIGN_OR_RETURN(dynsym_index_, SectionAt(dt_symtab_, elf::kSectionDynsym, "DT_SYMTAB"));
  const ElfSection& dynsym = image_.sections()[dynsym_index_];
  dynsym_count_ = image_.dynamic_symbols().size();  // ElfImage read the first (here: only) SHT_DYNSYM
  if (dynsym_count_ == 0) return Unsupported(SectionLabel(dynsym_index_) + " is empty (not even the null symbol)");
  if (dynsym.info > dynsym_count_) {
    return Malformed(dynsym.header_offset + kShInfo, "section header " + std::to_string(dynsym_index_),
                     "sh_info " + std::to_string(dynsym.info) + " exceeds the symbol count " +
                         std::to_string(dynsym_count_));
  }
  dynstr_index_ = dynsym.link;  // ElfImage checked it is a SHT_STRTAB section
  const ElfSection& dynstr = image_.sections()[dynstr_index_];
  uint64_t offset = 0;
  if (dynstr.addr != dt_strtab_ || dynstr.size != dt_strsz_ || (dynstr.flags & kShfAlloc) == 0 ||
      !FileOffsetOf(dynstr.addr, dynstr.size, &offset) || offset != dynstr.offset) {
    return Unsupported("DT_STRTAB " + HexString(dt_strtab_) + " / DT_STRSZ " + std::to_string(dt_strsz_) +
                       " do not match " + SectionLabel(dynstr_index_) + " (the .dynsym string table, at " +
                       HexString(dynstr.addr) + ", " + std::to_string(dynstr.size) + " bytes, file offset " +
                       std::to_string(dynstr.offset) + ")");
  }
  if (has_hash_) {
    SORUN_ASSIGN_OR_RETURN(hash_index_, SectionAt(dt_hash_, kShtHash, "DT_HASH"));
  }
  if (has_gnu_hash_) {
    SORUN_ASSIGN_OR_RETURN(gnu_hash_index_, SectionAt(dt_gnu_hash_, kShtGnuHash, "DT_GNU_HASH"));
  }
  bool versym_section = false, extra_dynsym = false, extra_symtab = false, have_symtab = false;
  for (const ElfSection& s : image_.sections()) {
    if (s.type == kShtGnuVersym) versym_section = true;
    if (s.type == elf::kSectionDynsym && s.index != dynsym_index_) extra_dynsym = true;
    if (s.type == elf::kSectionSymtab) {
      if (have_symtab) extra_symtab = true;
      have_symtab = true;
      symtab_index_ = s.index;
      strtab_index_ = s.link;
    }
    if ((s.type == kShtHash && !has_hash_) || (s.type == kShtGnuHash && !has_gnu_hash_)) {
      return Unsupported(SectionLabel(s.index) + " is a hash table that the dynamic section does not use");
    }
  }
  if (extra_dynsym) return Unsupported("more than one SHT_DYNSYM section");
  if (extra_symtab) return Unsupported("more than one SHT_SYMTAB section");
  if (symtab_index_ != 0 && strtab_index_ == dynstr_index_) {
    return Unsupported(".symtab names its symbols in .dynstr");
  }
  if (has_versym_) {
    SORUN_ASSIGN_OR_RETURN(versym_index_, SectionAt(dt_versym_, kShtGnuVersym, "DT_VERSYM"));
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
    BinaryReader r(bytes() + s.offset, static_cast<size_t>(s.size), name_ + ": " + SectionLabel(hash_index_),
                   s.offset);
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
      return Malformed(s.offset + 4, label, "DT_GNU_HASH symoffset " + std::to_string(symoffset) +
                                                " exceeds the .dynsym symbol count " + std::to_string(dynsym_count_));
    }
    // Every chain must end inside .dynsym: a symbol the hash table reaches past the section's end would
    // be one our copy loses.
    for (uint32_t b : buckets) {
      if (b == 0) continue;
      if (b < symoffset) {
        return Malformed(s.offset, label, "DT_GNU_HASH bucket starts at symbol " + std::to_string(b) +
                                              ", below symoffset " + std::to_string(symoffset));
      }
      for (uint64_t index = b;; ++index) {
        if (index >= dynsym_count_ || index - symoffset >= chains) {
          return Malformed(chain_base, label, "DT_GNU_HASH chain runs past the " + std::to_string(dynsym_count_) +
                                                  " symbols of .dynsym");
        }
        const uint8_t* word = bytes() + chain_base + 4 * (index - symoffset);  // inside the section (checked)
        if (word[0] & 1) break;  // little-endian: bit 0 of the word is in its first byte
      }
    }
  }
  return Status::Ok();
}

Status Injector::PlanSymbols() {
  std::vector<std::pair<std::string, bool>> wanted = {{keys::kSymbolDevMblob, false}};
  if (!checksum_.empty()) wanted.push_back({keys::kSymbolBlobChecksum, true});
  // Whatever the input already defines under these names.
  for (const char* name : {keys::kSymbolDevMblob, keys::kSymbolBlobChecksum}) {
    std::vector<const ElfSymbol*> dynamic, statics;
    for (const ElfSymbol& s : image_.dynamic_symbols()) {
      if (s.name == name) dynamic.push_back(&s);
    }
    for (const ElfSymbol& s : image_.static_symbols()) {
      if (s.name == name && s.defined()) statics.push_back(&s);
    }
    if (dynamic.empty() && statics.empty()) continue;
    const ElfSymbol& first = dynamic.empty() ? *statics[0] : *dynamic[0];
    const std::string where = std::string(image_.sections()[first.table].name) + " symbol " +
                              std::to_string(first.index) + " '" + name + "'";
    if (dynamic.size() > 1) return Unsupported(".dynsym has " + std::to_string(dynamic.size()) + " entries named '" + name + "'");
    if (!dynamic.empty() && !dynamic[0]->defined()) {
      return Unsupported(where + " is an undefined reference; the library expects another object to provide it");
    }
    if (!options_.replace_existing) {
      return AlreadyExists(name_ + ": already packed: " + where + " is defined (address " + HexString(first.value) +
                           ", " + std::to_string(first.size) +
                           " bytes); inject into the kernel library without a blob, or replace it "
                           "(BlobInjectionOptions::replace_existing)");
    }
    const bool is_checksum = std::string_view(name) == keys::kSymbolBlobChecksum;
    if (is_checksum && checksum_.empty()) {
      return InvalidArgument(name_ + ": " + where + " exists and would no longer match the new blob; give a "
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
    if (s.type == kShtGroup || s.type == kShtSymtabShndx) {
      return Unsupported(SectionLabel(s.index) + " is a SHT_GROUP / SHT_SYMTAB_SHNDX section (not expected in a "
                         "linked library)");
    }
    if (s.flags & kShfAlloc) insert_at_ = std::max(insert_at_, s.index + 1);
  }
  // The blob takes the unused .gnu.hash header when there is one; the checksum record precedes the
  // blob (address order) when both are inserted.
  const bool reuse_gnu_hash = has_hash_ && has_gnu_hash_;
  added_sections_ = (reuse_gnu_hash ? 0 : 1) + (checksum_.empty() ? 0 : 1);
  checksum_section_ = checksum_.empty() ? 0 : insert_at_;
  blob_section_ = reuse_gnu_hash ? gnu_hash_index_ : insert_at_ + (checksum_.empty() ? 0 : 1);
  new_shnum_ = shnum_ + added_sections_;
  if (new_shnum_ >= elf::kSymbolReservedLow) {
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
  const uint64_t old_end = phoff_ + static_cast<uint64_t>(phnum_) * elf::kProgramHeaderSize;
  const uint64_t new_end = old_end + elf::kProgramHeaderSize;
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
  const ProgramHeader* holder = nullptr;
  for (const ProgramHeader& p : phdrs_) {
    if (p.type == kPtLoad && contains(p.offset, p.filesz, phoff_, new_end - phoff_)) holder = &p;
  }
  if (holder == nullptr) return refuse("no PT_LOAD maps the bytes after the program header table");
  // Every section in the way must be a table this injection replaces (its bytes are dead) or a note
  // that moves with its PT_NOTE into the new segment.
  std::vector<size_t> notes;  // phdr indices of PT_NOTEs to move
  for (const ElfSection& s : image_.sections()) {
    if (s.type == elf::kSectionNull || s.type == elf::kSectionNoBits || !overlaps(s.offset, s.size)) continue;
    const bool replaced = s.index == dynsym_index_ || s.index == dynstr_index_ ||
                          (has_hash_ && s.index == hash_index_) || (has_gnu_hash_ && s.index == gnu_hash_index_) ||
                          (has_versym_ && s.index == versym_index_);
    if (replaced) continue;
    bool movable = false;
    if (s.type == kShtNote) {
      for (size_t i = 0; i < phdrs_.size(); ++i) {
        const ProgramHeader& p = phdrs_[i];
        if (p.type == kPtNote && contains(p.offset, p.filesz, s.offset, s.size)) {
          if (std::find(notes.begin(), notes.end(), i) == notes.end()) notes.push_back(i);
          movable = true;
          break;
        }
      }
    }
    if (!movable) return refuse(SectionLabel(s.index) + " follows the program header table");
  }
  for (size_t i : notes) {
    const ProgramHeader& n = phdrs_[i];
    if (!RangeFits(n.offset, n.filesz, in_.size())) return refuse("a PT_NOTE extends past the end of the file");
    // A note is file bytes only: its memory size is its file size (a larger p_memsz would be carried to
    // the note's new, higher address, where p_vaddr + p_memsz may overflow).
    if (n.memsz != n.filesz) return refuse("a PT_NOTE whose p_memsz differs from its p_filesz would have to move");
    for (const ElfSection& s : image_.sections()) {  // a moved note range must hold whole notes only
      if (s.type == elf::kSectionNull || s.type == elf::kSectionNoBits || s.size == 0) continue;
      const bool touches = s.offset < n.offset + n.filesz && n.offset < s.offset + s.size;
      if (touches && (s.type != kShtNote || !contains(n.offset, n.filesz, s.offset, s.size))) {
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
    const ProgramHeader& p = phdrs_[i];
    if (p.type == kPtLoad || p.type == kPtPhdr || !overlaps(p.offset, p.filesz)) continue;
    bool inside = false;
    for (const MovedRange& m : moved_) inside = inside || contains(m.old_offset, m.size, p.offset, p.filesz);
    if (!inside) return refuse("program header " + std::to_string(i) + " covers the bytes after the table");
  }
  // Nothing the dynamic section points at (other than the tables being replaced) may live there.
  const uint64_t lo = holder->vaddr + (old_end - holder->offset), hi = lo + elf::kProgramHeaderSize;
  for (const DynamicEntry& e : dyn_) {
    switch (e.tag) {
      case kDtSymtab: case kDtStrtab: case kDtHash: case kDtGnuHash: case kDtVersym: continue;
      default: break;
    }
    const bool pointer = e.tag == 3 || e.tag == 7 || e.tag == 12 || e.tag == 13 || e.tag == 17 || e.tag == 23 ||
                         e.tag == 25 || e.tag == 26 || e.tag == 32 || e.tag == 36 ||
                         (e.tag >= 0x6ffffe00 && e.tag <= 0x6ffffeff) || e.tag == 0x6ffffffc || e.tag == 0x6ffffffe;
    if (pointer && e.value >= lo && e.value < hi) {
      return refuse("dynamic tag " + HexString(static_cast<uint64_t>(e.tag)) + " points right after the table");
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
  dynsym_size_ = total_symbols * elf::kSymbolSize;
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
  } else if (!place(8, (phnum_ + 1ull) * elf::kProgramHeaderSize, &phdr_off_)) {
    return Unsupported(kOverflow);
  }
  if (!place(8, dynsym_size_, &dynsym_off_) ||
      !place(1, dynstr_size_, &dynstr_off_) || !place(8, hash_size_, &hash_off_) ||
      !place(2, versym_size_, &versym_off_) || !place(8, checksum_.size(), &checksum_off_) ||
      !place(kBlobAlignment, blob_.size(), &blob_off_)) {
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
    symtab_size_ = image_.sections()[symtab_index_].size + appended_static * elf::kSymbolSize;
  }
  const bool separate_strtab = symtab_index_ != 0 && strtab_index_ != shstrndx_;
  if (!place(1, shstrtab_size_, &shstrtab_off_) || !place(1, separate_strtab ? strtab_size_ : 0, &strtab_off_) ||
      !place(8, symtab_size_, &symtab_off_) ||
      !place(8, static_cast<uint64_t>(new_shnum_) * elf::kSectionHeaderSize, &shdr_off_)) {
    return Unsupported(kOverflow);
  }
  total_ = at;
  if (total_ > SIZE_MAX / 2) return Unsupported(kOverflow);
  for (PlannedSymbol& p : symbols_) p.address = Address(p.is_checksum ? checksum_off_ : blob_off_);
  return Status::Ok();
}

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

StatusOr<std::string> Injector::Run(BlobInjectionReport* report) {
  SORUN_RETURN_IF_ERROR_CTX(CheckArguments(), name_);
  SORUN_ASSIGN_OR_RETURN(image_, ElfImage::Parse(bytes(), in_.size(), name_));
  SORUN_RETURN_IF_ERROR(ReadHeader());
  SORUN_RETURN_IF_ERROR(ReadProgramHeaders());
  SORUN_RETURN_IF_ERROR(ReadDynamicSection());
  SORUN_RETURN_IF_ERROR(FindTables());
  SORUN_RETURN_IF_ERROR(CheckHashTables());
  SORUN_RETURN_IF_ERROR(PlanSymbols());
  SORUN_RETURN_IF_ERROR(Layout());
  SORUN_ASSIGN_OR_RETURN(std::string out, Write());
  SORUN_RETURN_IF_ERROR(VerifyOutput(out));
  if (report != nullptr) {
    *report = BlobInjectionReport{};
    report->segment_offset = seg_offset_;
    report->segment_address = seg_vaddr_;
    report->segment_bytes = seg_size_;
    report->blob_address = Address(blob_off_);
    report->blob_offset = blob_off_;
    report->blob_bytes = blob_.size();
    report->checksum_address = checksum_.empty() ? 0 : Address(checksum_off_);
    report->dynamic_symbols = dynsym_count_ + appended_;
    report->replaced_existing = appended_ < symbols_.size();
    report->converted_gnu_hash = has_gnu_hash_ && !has_hash_;
    report->dropped_gnu_hash = has_gnu_hash_ && has_hash_;
    report->program_headers_in_place = phdrs_in_place_;
    report->program_headers_moved_because = phdrs_in_place_ ? "" : phdrs_moved_reason_;
    report->moved_note_segments = moved_.size();
    report->output_bytes = out.size();
  }
  return out;
}

}  // namespace

StatusOr<std::string> InjectBlobIntoElfImage(std::string_view input, const std::string& input_name,
                                             std::string_view blob, std::string_view checksum_record,
                                             const BlobInjectionOptions& options, BlobInjectionReport* report) {
  Injector injector(input, input_name, blob, checksum_record, options);
  return injector.Run(report);
}

Status InjectBlobIntoSharedLibrary(const std::string& input_so, const std::string& blob,
                                   const std::string& checksum_record, const std::string& output_so,
                                   const BlobInjectionOptions& options, BlobInjectionReport* report) {
  if (output_so.empty()) return InvalidArgument("empty output path");
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<MappedFile> input, MappedFile::Open(input_so));
  struct stat st;
  uint32_t mode = 0755;
  if (::stat(input_so.c_str(), &st) == 0) mode = st.st_mode & 0777;
  SORUN_ASSIGN_OR_RETURN(std::string out,
                         InjectBlobIntoElfImage(input->bytes(), input_so, blob, checksum_record, options, report));
  const std::string temp = output_so + ".tmp." + std::to_string(::getpid());
  Status written = WriteFileBytes(temp, out.data(), out.size(), mode, O_NOFOLLOW);
  if (written.ok() && std::rename(temp.c_str(), output_so.c_str()) != 0) {
    written = FailedPrecondition("cannot rename " + temp + " to " + output_so + ": " + ErrnoText(errno));
  }
  if (!written.ok()) {
    std::remove(temp.c_str());
    return written;
  }
  return Status::Ok();
}

}  // namespace sorun
