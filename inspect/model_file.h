// ModelFile: a model library read as bytes, never loaded: a shared library (.so), or a tar export
// whose ELF objects are read from the archive in memory. It finds the module blob
// (`__tvm_dev_mblob`, its 8-byte length prefix checked), sorun's integrity record
// (`__sorun_blob_checksum`), tvm-ffi era symbols (`__tvm_ffi_*library_bin`, TVM v0.21+) and the exported
// host functions. Used by `sorun inspect` and `sorun verify`, and by `sorun pack` (packer/model_packer.h)
// for its inputs and output: nothing here dlopen()s or executes the file, so inspecting an untrusted
// library runs none of its code.
//
// Ownership: a ModelFile owns the file mapping; every pointer and ElfImage it hands out points into it
// and is valid while the ModelFile lives. Immutable after Open(); thread-safe to read.
#ifndef SORUN_INSPECT_MODEL_FILE_H_
#define SORUN_INSPECT_MODEL_FILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/file_util.h"
#include "base/status.h"
#include "inspect/elf_reader.h"
#include "serialization/blob_checksum.h"

namespace sorun {

// One ELF image of the file: the library itself, or an object file of a .tar archive.
struct ModelFileMember {
  std::string name;  // "" for a .so; the archive member name ("devc.o") for a .tar
  ElfImage image;
};

class ModelFile {
 public:
  // Maps and parses `path` (an ELF file, or a tar archive: by its ustar magic or a .tar name). Errors name the path:
  // NotFound (missing), InvalidArgument (a directory or other non-file), DataLoss (not ELF, a malformed ELF or archive,
  // a bad blob length prefix), Unimplemented (ELF32 / big-endian).
  static StatusOr<ModelFile> Open(const std::string& path);

  const std::string& path() const { return path_; }
  bool is_tar() const { return is_tar_; }
  uint64_t file_size() const { return file_ ? file_->size() : 0; }
  const std::vector<ModelFileMember>& members() const { return members_; }

  // The blob symbol, or null when the file has none (a plain kernel library).
  const ElfSymbolData* blob() const { return has_blob_ ? &blob_ : nullptr; }
  // Which member holds the blob ("" for a .so).
  const std::string& blob_member() const { return blob_member_; }
  // Payload bytes after the 8-byte length prefix (the blob is 8 + payload_size bytes).
  uint64_t payload_size() const { return payload_size_; }
  // The integrity record next to the blob (`__tvm_dev_mblob`, or a tvm-ffi blob symbol), or null. Its `size` is the
  // bytes that may be read (st_size, or up to the end of its segment/section when the symbol has no size).
  const ElfSymbolData* checksum() const { return has_checksum_ ? &checksum_ : nullptr; }
  // Defined `__tvm_ffi_*` symbols (non-empty: built by TVM v0.21 or later).
  const std::vector<std::string>& ffi_symbols() const { return ffi_symbols_; }
  // Exported (global or weak) functions, sorted; _init/_fini left out.
  const std::vector<std::string>& host_functions() const { return host_functions_; }

  // The stored fields of the integrity record (DecodeBlobChecksumRecord: not verified, see
  // VerifyBlobChecksum). NotFound without a record; DataLoss when it is too short.
  StatusOr<BlobChecksumRecord> ReadChecksumRecord() const;

 private:
  Status FindBlob();
  // The blob and record of a shared library, bounded by its PT_LOAD segments (LocateBlob).
  Status FindLibraryBlob(const ModelFileMember& m, const std::vector<LoadSegment>& segments);
  // The integrity record of a shared library, bounded by its PT_LOAD segments (none: nothing set).
  Status FindLibraryChecksum(const ModelFileMember& m, const std::vector<LoadSegment>& segments);
  // The blob and record of a relocatable `.tar` member, bounded by their sections.
  Status FindObjectBlob(const ModelFileMember& m);

  std::string path_;
  bool is_tar_ = false;
  ObjectPtr<MappedFile> file_;
  std::vector<ModelFileMember> members_;
  bool has_blob_ = false;
  ElfSymbolData blob_;
  std::string blob_member_;
  uint64_t payload_size_ = 0;
  bool has_checksum_ = false;
  ElfSymbolData checksum_;
  std::vector<std::string> ffi_symbols_;
  std::vector<std::string> host_functions_;
};

}  // namespace sorun

#endif  // SORUN_INSPECT_MODEL_FILE_H_
