#include "inspect/model_file.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "base/file_checks.h"
#include "format/tar_archive.h"
#include "runtime/registry_keys.h"
#include "serialization/module_blob.h"

namespace sorun {
namespace {

bool IsExportedFunction(const ElfSymbol& s) {
  return s.defined() && !s.name.empty() && (s.type() == STT_FUNC || s.type() == STT_GNU_IFUNC) &&
         (s.binding() == STB_GLOBAL || s.binding() == STB_WEAK) && s.name != "_init" && s.name != "_fini";
}

}  // namespace

StatusOr<ModelFile> ModelFile::Open(const std::string& path) {
  ModelFile model;
  model.path_ = path;
  SORUN_ASSIGN_OR_RETURN(model.file_, MappedFile::Open(path));
  // ELF by its magic; a tar by its extension, its ustar magic (byte 257) or the gzip magic (TVM's
  // ".tar" exports are gzip-compressed: `tar -czf`).
  const uint8_t* bytes = model.file_->data();
  const size_t size = model.file_->size();
  const bool elf_magic = size >= 4 && std::memcmp(bytes,
                                                  "\x7f"
                                                  "ELF",
                                                  4) == 0;
  const bool ustar_magic = size >= 262 && std::memcmp(bytes + 257, "ustar", 5) == 0;
  model.is_tar_ =
      !elf_magic && (ustar_magic || HasGzipMagic(bytes, size) || std::filesystem::path(path).extension() == ".tar");
  if (!model.is_tar_) {
    ObjectPtr<Object> owner(model.file_);
    SORUN_ASSIGN_OR_RETURN(ElfImage image, ElfImage::Parse(model.file_->data(), model.file_->size(), path, owner));
    model.members_.push_back(ModelFileMember{"", std::move(image)});
  } else {
    SORUN_ASSIGN_OR_RETURN(ObjectPtr<TarFile> tar, TarFile::Open(path));
    ObjectPtr<Object> owner(tar);  // the (decompressed) archive the member images point into
    SORUN_ASSIGN_OR_RETURN(std::vector<TarEntry> entries, ReadTarArchive(tar->data(), tar->size(), path));
    for (const TarEntry& e : entries) {
      if (std::filesystem::path(e.name).extension() != ".o") continue;
      SORUN_ASSIGN_OR_RETURN(ElfImage image, ElfImage::Parse(e.data, e.size, path + ":" + e.name, owner));
      model.members_.push_back(ModelFileMember{e.name, std::move(image)});
    }
    if (model.members_.empty()) return DataLoss(path + ": the archive holds no object files (.o)");
  }
  for (const ModelFileMember& m : model.members_) {
    for (const std::string& name : m.image.DefinedSymbolNames("__tvm_ffi_")) model.ffi_symbols_.push_back(name);
    const auto& table =
        model.is_tar_ || m.image.dynamic_symbols().empty() ? m.image.static_symbols() : m.image.dynamic_symbols();
    for (const ElfSymbol& s : table) {
      if (IsExportedFunction(s)) model.host_functions_.emplace_back(s.name);
    }
  }
  for (auto* v : {&model.ffi_symbols_, &model.host_functions_}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  SORUN_RETURN_IF_ERROR(model.FindBlob());
  return model;
}

StatusOr<BlobChecksumRecord> ModelFile::ReadChecksumRecord() const {
  if (!has_checksum_) return NotFound(path_ + ": no " + std::string(keys::kSymbolBlobChecksum));
  return DecodeBlobChecksumRecord(checksum_.data, checksum_.size);
}

Status ModelFile::FindBlob() {
  for (const ModelFileMember& m : members_) {
    if (!m.image.HasSymbol(keys::kSymbolDevMblob)) continue;
    if (has_blob_) {
      return DataLoss(path_ + ": two archive members define " + keys::kSymbolDevMblob + " (" + blob_member_ + " and " +
                      m.name + ")");
    }
    const std::vector<LoadSegment> segments = m.image.LoadSegments();
    if (!segments.empty()) {
      // A library: the symbols the loader's dlsym sees, bounded by the rule the loader applies to the
      // mapped library (serialization/blob_extent.h), so `inspect`/`verify` and `run` agree.
      SORUN_RETURN_IF_ERROR(FindLibraryBlob(m, segments));
    } else {
      SORUN_RETURN_IF_ERROR(FindObjectBlob(m));
    }
    blob_member_ = m.name;
    has_blob_ = true;
  }
  if (!has_blob_) {  // a tvm-ffi export (Relax, TVM 0.21+): the record sorun pack wrote next to its blob
    for (const ModelFileMember& m : members_) {
      const std::vector<LoadSegment> segments = m.image.LoadSegments();
      if (segments.empty() || !m.image.HasSymbol(keys::kSymbolBlobChecksum)) continue;
      SORUN_RETURN_IF_ERROR(FindLibraryChecksum(m, segments));
      break;
    }
  }
  return Status::Ok();
}

// The symbol `name` of a library as dlsym finds it: .dynsym (or DT_SYMTAB) when there is one.
static const ElfSymbol* LibrarySymbol(const ElfImage& image, std::string_view name) {
  if (image.dynamic_symbols().empty()) return image.FindDefinedSymbol(name);
  for (const ElfSymbol& s : image.dynamic_symbols()) {
    if (s.defined() && s.name == name) return &s;
  }
  return nullptr;
}

static ElfSymbolData ExtentData(const ElfImage& image, const ElfSymbol& sym, const SymbolExtent& extent) {
  ElfSymbolData data;
  data.name = std::string(sym.name);
  data.section = "PT_LOAD segment " + std::to_string(extent.segment);
  for (const ElfSection& s : image.sections()) {  // the section name, when section headers exist
    if (s.type != SHT_NOBITS && s.addr <= extent.address && extent.address - s.addr < s.size && s.addr != 0) {
      data.section = std::string(s.name);
      break;
    }
  }
  data.table =
      sym.table == elf::kDynamicSegmentTable ? "DT_SYMTAB" : (image.dynamic_symbols().empty() ? ".symtab" : ".dynsym");
  data.address = sym.value;
  data.file_offset = extent.file_offset;
  data.size = extent.bytes;  // st_size, or the bytes up to the segment's end when it is 0
  data.data = extent.data;
  return data;
}

Status ModelFile::FindLibraryBlob(const ModelFileMember& m, const std::vector<LoadSegment>& segments) {
  const ElfImage& image = m.image;
  const ElfSymbol* sym = LibrarySymbol(image, keys::kSymbolDevMblob);
  if (sym == nullptr) {
    return DataLoss(image.file_name() + ": " + keys::kSymbolDevMblob +
                    " is not a dynamic symbol: the loader cannot find it");
  }
  auto blob = LocateBlob(sym->value, sym->size, segments);
  if (!blob.ok()) return NamePath(std::move(blob).status(), image.file_name());
  blob_ = ExtentData(image, *sym, blob->symbol);
  payload_size_ = blob->payload_size;
  return FindLibraryChecksum(m, segments);
}

Status ModelFile::FindLibraryChecksum(const ModelFileMember& m, const std::vector<LoadSegment>& segments) {
  const ElfImage& image = m.image;
  if (const ElfSymbol* rec = LibrarySymbol(image, keys::kSymbolBlobChecksum)) {
    auto record = BoundSymbolBytes(keys::kSymbolBlobChecksum, rec->value, rec->size, segments);
    if (!record.ok()) return NamePath(std::move(record).status(), image.file_name());
    checksum_ = ExtentData(image, *rec, *record);
    has_checksum_ = true;
  }
  return Status::Ok();
}

// A relocatable object (a `.tar` member) has no segments: its symbols are bounded by their section.
Status ModelFile::FindObjectBlob(const ModelFileMember& m) {
  auto blob = m.image.FindSymbolData(keys::kSymbolDevMblob);
  if (!blob.ok()) return NamePath(std::move(blob).status(), m.image.file_name());
  blob_ = *blob;
  // A symbol without a size (hand-written assembly) is bounded by the end of its section.
  uint64_t limit = blob_.size;
  if (limit == 0) {
    const ElfSection* section = m.image.FindSection(blob_.section);
    if (section != nullptr && section->offset + section->size >= blob_.file_offset) {
      limit = section->offset + section->size - blob_.file_offset;
    }
    if (limit < 8) {
      return DataLoss(m.image.file_name() + ": " + keys::kSymbolDevMblob + " has no size and its section " +
                      blob_.section + " leaves " + std::to_string(limit) + " bytes for it");
    }
  }
  auto prefix = ReadBlobPrefix(blob_.data, limit, keys::kSymbolDevMblob);
  if (!prefix.ok()) return NamePath(std::move(prefix).status(), m.image.file_name());
  payload_size_ = *prefix;
  if (m.image.HasSymbol(keys::kSymbolBlobChecksum)) {
    auto record = m.image.FindSymbolData(keys::kSymbolBlobChecksum);
    if (!record.ok()) return NamePath(std::move(record).status(), m.image.file_name());
    checksum_ = *record;
    if (checksum_.size == 0) {  // bounded by its section too, never read past it
      const ElfSection* section = m.image.FindSection(checksum_.section);
      checksum_.size = section != nullptr && section->offset + section->size >= checksum_.file_offset
                           ? section->offset + section->size - checksum_.file_offset
                           : 0;
      if (checksum_.size == 0) {
        return DataLoss(m.image.file_name() + ": " + keys::kSymbolBlobChecksum + " has no size and no bytes left in " +
                        checksum_.section);
      }
    }
    has_checksum_ = true;
  }
  return Status::Ok();
}

}  // namespace sorun
