// Reading POSIX ustar archives of regular files: the `.tar` export format (a tar of object files, one
// of them the blob object). TVM's export_library("x.tar") runs `tar -czf`, so TVM's ".tar" files are
// gzip-compressed archives; sorun writes plain ones (packer/tar_writer.h). TarFile reads both.
//
// ReadTarArchive() parses an archive held in memory, as written by TarWriter or by common tar tools
// (POSIX ustar, GNU tar's default format with ././@LongLink names, pax extended headers). It validates
// every header checksum and numeric field and keeps all data inside the input. Regular files are
// returned; directory entries are skipped; links, devices, FIFOs and other types are Unimplemented.
// Names are normalised ("./a//b.o" -> "a/b.o"); absolute names and ".." components are DataLoss, as
// are duplicate names. Errors name the archive, the entry and the byte offset:
// "model.tar byte 1172: entry 2 ('lib1.o'): invalid octal digit in size field".
//
// Ownership: TarEntry::data borrows the archive bytes passed to ReadTarArchive(), which must outlive
// the entries. Thread-safety: ReadTarArchive() and ExtractTarArchive() are reentrant.
#ifndef SORUN_FORMAT_TAR_ARCHIVE_H_
#define SORUN_FORMAT_TAR_ARCHIVE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_util.h"
#include "base/object.h"
#include "base/status.h"
#include "format/ustar_layout.h"

namespace sorun {

// A regular file of an archive, as read. `data` points into the archive bytes.
struct TarEntry {
  std::string name;    // normalised relative path, e.g. "lib0.o" or "dir/x.o"
  uint32_t mode = 0;   // permission bits (mode & 07777)
  uint64_t mtime = 0;  // seconds since the epoch
  uint64_t size = 0;
  uint64_t header_offset = 0;  // byte offset of its header block (after any extended headers)
  uint64_t data_offset = 0;    // byte offset of its contents
  const uint8_t* data = nullptr;
};

// An archive file's bytes: the file mapped as it is, or, when it is gzip-compressed (TVM's `.tar`
// exports), decompressed in memory. Entries read from data()/size() borrow this object: pass it as the
// owner of anything that points into them. Immutable; thread-safe to read.
class TarFile final : public Object {
 public:
  // NotFound / InvalidArgument from MappedFile::Open; DataLoss for a corrupt or truncated gzip stream;
  // a gzip-compressed file is inflated with GunzipTarArchive() within TarGzipInflateLimit(file size).
  static StatusOr<ObjectPtr<TarFile>> Open(const std::string& path);

  const uint8_t* data() const;
  size_t size() const;
  bool gzip_compressed() const { return gzip_; }
  const std::string& path() const { return file_->path(); }

 private:
  TarFile() = default;
  ObjectPtr<MappedFile> file_;
  bool gzip_ = false;
  std::string inflated_;  // the decompressed archive when gzip_
};

// Bounds on inflating a gzip-compressed archive (TarFile::Open), so that a small file cannot claim
// memory and time out of proportion to its size (a "gzip bomb"). Deflate can reach about 1032:1;
// archives of object code and float weights compress 1.1:1 to 10:1, so 128:1 is generous. Every file
// may inflate to the minimum allowance; nothing inflates past the absolute cap (the archive is held in
// memory). Beyond these limits, pack the model as an uncompressed .tar or a .so (loaded in place).
inline constexpr uint64_t kTarGzipMaxRatio = 128;
inline constexpr uint64_t kTarGzipMinInflateAllowance = uint64_t{16} << 20;  // 16 MiB
inline constexpr uint64_t kTarGzipMaxInflatedBytes = uint64_t{16} << 30;     // 16 GiB
// Zero padding accepted in a compressed stream after the end-of-archive marker (tar pads archives to
// its record size, 10 KiB by default; `tar -b 2048` makes 1 MiB records).
inline constexpr uint64_t kTarMaxTrailingPadding = uint64_t{1} << 20;
// The most a gzip-compressed archive of `compressed_bytes` may inflate to:
// min(max(kTarGzipMaxRatio * compressed_bytes, kTarGzipMinInflateAllowance), kTarGzipMaxInflatedBytes).
uint64_t TarGzipInflateLimit(uint64_t compressed_bytes);

// True when [data, data + size) starts with the gzip magic (1f 8b, RFC 1952).
bool HasGzipMagic(const uint8_t* data, size_t size);
// Decompresses a gzip stream (every member of a multi-member stream) into memory. DataLoss naming
// `source_name` and the byte offset for corrupt, truncated or trailing non-gzip data; ResourceExhausted
// when the output would pass `max_output_bytes`.
StatusOr<std::string> GunzipBytes(const uint8_t* data, size_t size, const std::string& source_name,
                                  uint64_t max_output_bytes = uint64_t{1} << 40);

// Decompresses a gzip-compressed tar archive, inflating no further than its own headers account for:
// the headers are followed as the bytes arrive (checked like ReadTarArchive checks them) and inflation
// stops at the end-of-archive marker; what the stream holds past it may only be zero padding (at most
// kTarMaxTrailingPadding bytes, dropped). DataLoss for corrupt streams, bad headers or trailing data;
// ResourceExhausted naming `source_name` and the limit past `max_output_bytes` (TarFile::Open passes
// TarGzipInflateLimit() of the compressed size). The caller still runs ReadTarArchive on the result
// (an archive whose stream ends before its end-of-archive marker is returned as it is).
StatusOr<std::string> GunzipTarArchive(const uint8_t* data, size_t size, const std::string& source_name,
                                       uint64_t max_output_bytes);

// Parses the archive [data, data + size); `source_name` names it in errors.
StatusOr<std::vector<TarEntry>> ReadTarArchive(const uint8_t* data, size_t size, const std::string& source_name);

// Writes `entries` below the existing directory `directory`, creating subdirectories (0755) as needed
// and files with their permission bits (subject to the umask). Existing files are replaced; symbolic
// links are never followed (an existing link on the way is FailedPrecondition).
Status ExtractTarEntries(const std::vector<TarEntry>& entries, const std::string& directory);
// ReadTarArchive() + ExtractTarEntries(); nothing is written unless the whole archive is valid.
Status ExtractTarArchive(const uint8_t* data, size_t size, const std::string& source_name,
                         const std::string& directory);

}  // namespace sorun

#endif  // SORUN_FORMAT_TAR_ARCHIVE_H_
