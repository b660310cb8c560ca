// TarWriter: a minimal POSIX ustar archive of regular files, built in memory: the `.tar` export format
// (a tar of object files, one of them the blob object), read back by format/tar_archive.h. TVM's
// export_library("x.tar") runs `tar -czf`, so TVM's ".tar" files are gzip-compressed archives; sorun
// writes plain ones. Headers have mtime 0, uid/gid 0 and empty user/group names, so the same inputs
// always give the same bytes; names of up to 255 bytes (split across the ustar prefix and name
// fields); files up to 8 GiB - 1; two zero blocks at the end.
//
// Ownership: a TarWriter owns the archive it builds. Thread-safety: a TarWriter is not thread-safe.
#ifndef SORUN_PACKER_TAR_WRITER_H_
#define SORUN_PACKER_TAR_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sorun {

class TarWriter {
 public:
  TarWriter() = default;

  // Appends a regular file. `name` is a relative path of at most 255 bytes without empty, "." or ".."
  // components and without NUL bytes; names over 100 bytes must split at a '/' into at most 155 + 100
  // bytes. `mode` holds permission bits (<= 07777). Errors (InvalidArgument) leave the archive as it was.
  Status AddFile(std::string_view name, std::string_view contents, uint32_t mode = 0644);

  // The archive: every entry followed by two zero blocks. Resets the writer to empty.
  std::string Finish();
  // Finish() and write the archive to `path`.
  Status WriteToFile(const std::string& path);

  size_t num_entries() const { return names_.size(); }

 private:
  std::string bytes_;
  std::set<std::string, std::less<>> names_;
};

}  // namespace sorun

#endif  // SORUN_PACKER_TAR_WRITER_H_
