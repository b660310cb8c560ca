// InjectBlobIntoSharedLibrary: adds the exported symbol `__tvm_dev_mblob` (or a Relax export's blob
// symbol, BlobInjectionOptions::blob_symbol; and optionally sorun's 32-byte `__sorun_blob_checksum`
// record) to an ALREADY LINKED ELF64 little-endian shared library, writing a new file. This is how `sorun pack` turns
// TVM's three-file deployment (kernel library + graph JSON + params) into one library that both sorun and TVM's runtime
// load: no objects, no compiler, no relinking. docs/elf_blob_injection.md has the design and the reasons.
//
// What changes (all other bytes keep their offset and value):
//  - Appended: one read-only PT_LOAD above every existing segment (file offset and address congruent
//    modulo the largest PT_LOAD alignment) holding the new .dynsym (old entries unchanged at their
//    indices, so relocations stay valid, plus the new GLOBAL/OBJECT/DEFAULT symbols with exact st_size
//    and the st_shndx of a real section), the new .dynstr (old bytes first, so every existing string
//    offset stays valid), a SysV DT_HASH table over all symbols, the new .gnu.version (when versioned;
//    new symbols get VER_NDX_GLOBAL), the checksum record and the blob at a 64-byte aligned address
//    (parameters are used in place). After it, outside any segment: the section-name table, .strtab /
//    .symtab copies with the new symbols (when present) and the section header table.
//  - Program headers: the table gains the new PT_LOAD. It grows in place (e_phoff unchanged) over the
//    bytes of the tables this injection replaces, after moving any PT_NOTE in the way (build-id, GNU
//    property notes) into the new segment; only when that is impossible does the table move to the
//    start of the new segment (loaders accept both; strip/objcopy only rewrite the first correctly,
//    see the report). PT_PHDR follows the table.
//  - Patched in place: the ELF header and the PT_DYNAMIC entries DT_SYMTAB, DT_STRTAB, DT_STRSZ,
//    DT_HASH, DT_VERSYM. A GNU hash table cannot take new symbols without reordering .dynsym, so
//    DT_GNU_HASH is removed (when DT_HASH exists) or becomes DT_HASH; glibc and musl both look symbols
//    up through DT_HASH when DT_GNU_HASH is absent. No dynamic entry is ever added.
//  - Section headers: .dynsym, .dynstr, .gnu.version and .hash (or the converted .gnu.hash) describe
//    the new tables under their canonical names and indices (patchelf and others find tables by
//    name). New `.sorun_blob` / `.sorun_blob_checksum` headers take an unused .gnu.hash header or go
//    right after the last allocated section, so strip (which drops non-allocated sections but copies
//    .dynsym verbatim) keeps their indices.
//
// Refused, with a message naming the reason: not ELF / truncated / malformed (DataLoss: the ELF
// reader's validation, or ours), ELF32 and big-endian (Unimplemented); anything but ET_DYN, and
// executables (PT_INTERP, DF_1_PIE) (InvalidArgument); machines other than x86-64, AArch64 and
// RISC-V, no section headers (sstrip'ed), no symbol hash table, prelinked libraries, extended section
// numbering, DT_SYMTAB_SHNDX, section groups, several dynamic symbol tables, and tables whose section
// headers do not match the dynamic entries or the segments (Unimplemented); no PT_DYNAMIC
// (InvalidArgument); an input that already defines either symbol (AlreadyExists "already packed",
// unless `replace_existing`).
//
// Pure functions of their inputs; thread-safe. The file variant writes atomically (temporary file
// next to the output + rename) with the input's permission bits; input and output may be one path.
#ifndef SORUN_PACKER_ELF_BLOB_INJECTOR_H_
#define SORUN_PACKER_ELF_BLOB_INJECTOR_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "runtime/registry_keys.h"

namespace sorun {

struct BlobInjectionOptions {
  // The symbol that holds the blob: `__tvm_dev_mblob` (graph-executor models, TVM <= 0.20), or a Relax
  // export's `__tvm_ffi_library_bin` (TVM 0.21) / `__tvm_ffi__library_bin` (0.22+), whose container
  // `sorun pack` rewrites (packer/relax_pack.h). Any other name is InvalidArgument.
  std::string blob_symbol = keys::kSymbolDevMblob;
  // When the input already defines the blob symbol / `__sorun_blob_checksum` (a TVM deploy library or
  // Relax export, or an earlier injection), point those symbol entries at the new bytes instead of refusing. The old
  // bytes stay in the file, unreferenced. A stale checksum record cannot be removed, so replacing the
  // blob of an input that has one requires a new checksum record.
  bool replace_existing = false;
};

// Where things went (for tools, logs and tests). Addresses are link-time (st_value) addresses.
struct BlobInjectionReport {
  uint64_t segment_offset = 0;  // the new PT_LOAD
  uint64_t segment_address = 0;
  uint64_t segment_bytes = 0;
  uint64_t blob_address = 0;
  uint64_t blob_offset = 0;
  uint64_t blob_bytes = 0;
  uint64_t checksum_address = 0;  // 0 when no record was written
  uint64_t dynamic_symbols = 0;   // entries of the new .dynsym, null symbol included
  bool replaced_existing = false;
  bool converted_gnu_hash = false;  // DT_GNU_HASH became DT_HASH
  bool dropped_gnu_hash = false;    // DT_GNU_HASH removed (the input also had DT_HASH)
  // True when the program header table grew in place (e_phoff unchanged); false when it moved into
  // the new segment, with the reason in `program_headers_moved_because`.
  bool program_headers_in_place = false;
  std::string program_headers_moved_because;
  uint64_t moved_note_segments = 0;  // PT_NOTEs moved into the new segment to make room for the table
  uint64_t output_bytes = 0;
};

// `blob`: the bytes of `__tvm_dev_mblob` (8-byte little-endian payload length + payload; the length
// must match). `checksum_record`: empty, or the 32-byte record of serialization/blob_checksum.h for
// exactly `blob` (verified; a mismatch is InvalidArgument). `input_name` is used in messages.
StatusOr<std::string> InjectBlobIntoElfImage(std::string_view input, const std::string& input_name,
                                             std::string_view blob, std::string_view checksum_record,
                                             const BlobInjectionOptions& options = {},
                                             BlobInjectionReport* report = nullptr);

// Reads `input_so`, injects, writes `output_so`.
Status InjectBlobIntoSharedLibrary(const std::string& input_so, const std::string& blob,
                                   const std::string& checksum_record, const std::string& output_so,
                                   const BlobInjectionOptions& options = {}, BlobInjectionReport* report = nullptr);

}  // namespace sorun

#endif  // SORUN_PACKER_ELF_BLOB_INJECTOR_H_
