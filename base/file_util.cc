#include "base/file_util.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace sorun {

std::string ErrnoText(int err) { return std::strerror(err); }

StatusOr<ObjectPtr<MappedFile>> MappedFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    std::string message = "cannot open " + path + ": " + ErrnoText(err);
    return err == ENOENT ? NotFound(std::move(message)) : InvalidArgument(std::move(message));
  }
  auto mapped = OpenDescriptor(fd, path);
  ::close(fd);
  return mapped;
}

StatusOr<ObjectPtr<MappedFile>> MappedFile::OpenDescriptor(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return InvalidArgument("cannot read " + path + ": not a regular file");
  }
  size_t size = static_cast<size_t>(st.st_size);
  void* addr = nullptr;
  if (size > 0) {
    addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (addr == MAP_FAILED) {
      int err = errno;
      return ResourceExhausted("cannot map " + path + " (" + std::to_string(size) + " bytes): " + ErrnoText(err));
    }
  }
  return ObjectPtr<MappedFile>::FromRaw(new MappedFile(path, addr, size));
}

MappedFile::~MappedFile() {
  if (addr_ == nullptr) return;
  // The kernel maps and unmaps whole pages either way; passing the page-rounded length matters to
  // ThreadSanitizer, which forgets only the whole pages of the length it is given. With the file's own
  // length, the tail of the last page kept the mapping's imitated write, and a library ld.so later
  // mapped at that address (with mmap calls TSan does not see) read as racing with this mapping.
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  ::munmap(addr_, (size_ + page - 1) / page * page);
}

StatusOr<std::string> ReadFileToString(const std::string& path) {
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<MappedFile> file, MappedFile::Open(path));
  return std::string(file->bytes());
}

Status WriteAll(int fd, const void* data, uint64_t size, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    size_t chunk = size > (1u << 30) ? (1u << 30) : static_cast<size_t>(size);
    ssize_t n = ::write(fd, p, chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return FailedPrecondition("cannot write " + path + ": " + ErrnoText(errno));
    }
    p += n;
    size -= static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Status WriteFileBytes(const std::string& path, const void* data, uint64_t size, uint32_t mode, int extra_open_flags) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | extra_open_flags, mode);
  if (fd < 0) {
    int err = errno;
    if (err == ELOOP) return FailedPrecondition("refusing to write through the symbolic link " + path);
    return FailedPrecondition("cannot create " + path + ": " + ErrnoText(err));
  }
  Status status = WriteAll(fd, data, size, path);
  if (::close(fd) != 0 && status.ok()) status = FailedPrecondition("cannot write " + path + ": " + ErrnoText(errno));
  return status;
}

}  // namespace sorun
