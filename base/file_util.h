// File helpers shared by every reader and writer of artifacts: a read-only mapping of a whole file
// (reference-counted, so zero-copy views into it can keep it alive) and whole-file reads and writes.
// Errors name the path and the errno text: NotFound for a missing file, InvalidArgument for a path
// that cannot be opened or is not a regular file, FailedPrecondition for failed writes.
// Thread-safe.
#ifndef SORUN_BASE_FILE_UTIL_H_
#define SORUN_BASE_FILE_UTIL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/object.h"
#include "base/status.h"

namespace sorun {

// A private read-only mapping of a whole regular file (no mapping for an empty file), unmapped when
// the last reference goes.
class MappedFile final : public Object {
 public:
  static StatusOr<ObjectPtr<MappedFile>> Open(const std::string& path);
  // The same for an open descriptor (not taken: the caller still owns and closes `fd`); `path` names it
  // in messages.
  static StatusOr<ObjectPtr<MappedFile>> OpenDescriptor(int fd, const std::string& path);
  ~MappedFile() override;

  const uint8_t* data() const { return static_cast<const uint8_t*>(addr_); }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  std::string_view bytes() const { return std::string_view(static_cast<const char*>(addr_), size_); }

 private:
  MappedFile(std::string path, void* addr, size_t size) : path_(std::move(path)), addr_(addr), size_(size) {}
  std::string path_;
  void* addr_;
  size_t size_;
};

StatusOr<std::string> ReadFileToString(const std::string& path);
// Creates or truncates `path` with permission `mode` and writes all bytes. `extra_open_flags` is or'ed
// into open(2) (e.g. O_NOFOLLOW).
Status WriteFileBytes(const std::string& path, const void* data, uint64_t size, uint32_t mode = 0644,
                      int extra_open_flags = 0);
inline Status WriteFileBytes(const std::string& path, std::string_view bytes) {
  return WriteFileBytes(path, bytes.data(), bytes.size());
}
// Writes all of [data, data + size) to the open descriptor `fd` (retrying short writes and EINTR).
Status WriteAll(int fd, const void* data, uint64_t size, const std::string& path);
// strerror text for errno value `err`.
std::string ErrnoText(int err);

}  // namespace sorun

#endif  // SORUN_BASE_FILE_UTIL_H_
