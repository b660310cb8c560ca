#include "base/memory_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "base/file_util.h"

namespace sorun {
namespace {

Status WriteError(int err, const char* what) {
  if (err == ENOSPC || err == ENOMEM || err == EFBIG) {
    return ResourceExhausted(std::string("memory file: ") + what + ": " + ErrnoText(err));
  }
  return Internal(std::string("memory file: ") + what + ": " + ErrnoText(err));
}

}  // namespace

StatusOr<MemoryFile> MemoryFile::Create(const std::string& label) {
  const int fd = ::memfd_create(label.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOSYS || err == EINVAL) {
      return Unimplemented(
          "loading from memory needs memfd_create with sealing (Linux 3.17+), which this kernel lacks (" +
          ErrnoText(err) + "): load the model from a file");
    }
    return WriteError(err, "memfd_create");
  }
  return MemoryFile(fd);
}

MemoryFile::MemoryFile(MemoryFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), written_(other.written_), reserved_(other.reserved_), sealed_(other.sealed_) {}

MemoryFile& MemoryFile::operator=(MemoryFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    written_ = other.written_;
    reserved_ = other.reserved_;
    sealed_ = other.sealed_;
  }
  return *this;
}

MemoryFile::~MemoryFile() {
  if (fd_ >= 0) ::close(fd_);
}

int MemoryFile::Release() { return std::exchange(fd_, -1); }

Status MemoryFile::Reserve(size_t size) {
  if (fd_ < 0 || sealed_) return FailedPrecondition("memory file: Reserve after Seal");
  if (size <= reserved_) return Status::Ok();
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) return WriteError(errno, "reserving bytes");
  reserved_ = size;
  return Status::Ok();
}

Status MemoryFile::Write(const void* data, size_t size) {
  if (fd_ < 0 || sealed_) return FailedPrecondition("memory file: Write after Seal");
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const size_t chunk = std::min<size_t>(size, size_t{1} << 30);
    const ssize_t n = ::pwrite(fd_, p, chunk, static_cast<off_t>(written_));
    if (n < 0) {
      if (errno == EINTR) continue;
      return WriteError(errno, "writing");
    }
    if (n == 0) return WriteError(ENOSPC, "writing");
    p += n;
    size -= static_cast<size_t>(n);
    written_ += static_cast<uint64_t>(n);
  }
  reserved_ = std::max(reserved_, written_);
  return Status::Ok();
}

Status MemoryFile::Seal() {
  if (fd_ < 0) return FailedPrecondition("memory file: Seal without a file");
  if (sealed_) return Status::Ok();
  if (reserved_ != written_ && ::ftruncate(fd_, static_cast<off_t>(written_)) != 0) {
    return WriteError(errno, "cutting the reserved tail");
  }
  if (::fcntl(fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    return Internal("memory file: sealing: " + ErrnoText(errno));
  }
  reserved_ = written_;
  sealed_ = true;
  return Status::Ok();
}

}  // namespace sorun
