#include "base/file_checks.h"

#include <sys/stat.h>

#include <cerrno>

#include "base/file_util.h"

namespace sorun {

Status NamePath(Status status, const std::string& path) {
  if (status.ok() || path.empty() || status.message().find(path) != std::string::npos) return status;
  return std::move(status).Annotate(path);
}

Status StartWithPath(Status status, const std::string& path) {
  if (status.ok() || path.empty() || status.message().rfind(path, 0) == 0) return status;
  return std::move(status).Annotate(path);
}

Status CheckRegularFile(const std::string& path, std::string_view what) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    int err = errno;
    std::string message = std::string(what) + " " + path + ": " + ErrnoText(err);
    return err == ENOENT ? NotFound(std::move(message)) : InvalidArgument(std::move(message));
  }
  if (S_ISDIR(st.st_mode)) return InvalidArgument(std::string(what) + " " + path + ": is a directory, not a file");
  if (!S_ISREG(st.st_mode)) return InvalidArgument(std::string(what) + " " + path + ": not a regular file");
  return Status::Ok();
}

std::string FileTypeName(unsigned mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

Status CheckOutputFile(const std::string& path, std::string_view what) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) return Status::Ok();  // a new file (a missing directory on the way fails later)
    return FailedPrecondition(std::string(what) + " " + path + ": " + ErrnoText(err));
  }
  if (S_ISREG(st.st_mode)) return Status::Ok();
  std::string message = std::string(what) + " " + path + " exists and is " + FileTypeName(st.st_mode);
  if (S_ISLNK(st.st_mode)) {
    message +=
        "; sorun replaces output files whole, which would replace the link, not what it points to: "
        "name the target or remove the link";
  } else {
    message += "; sorun writes only regular files and will not replace it";
  }
  return FailedPrecondition(std::move(message));
}

}  // namespace sorun
