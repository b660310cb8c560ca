#include "security/openssl_errors.h"

#include <openssl/err.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace sorun {
namespace security {

StatusOr<std::string> ReadKeyFile(const std::string& path, const std::string& what) {
  constexpr long kMaxKeyFileBytes = 64 * 1024;
  if (path.empty()) return InvalidArgument("no " + what + " file given");
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return InvalidArgument(path + ": cannot read the " + what + " file: " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) return InvalidArgument(path + ": the " + what + " file is not a regular file");
  if (st.st_size > kMaxKeyFileBytes) {
    return InvalidArgument(path + ": the " + what + " file has " + std::to_string(st.st_size) +
                           " bytes; a key file has at most " + std::to_string(kMaxKeyFileBytes));
  }
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return InvalidArgument(path + ": cannot read the " + what + " file: " + std::strerror(errno));
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t got = bytes.empty() ? 0 : std::fread(bytes.data(), 1, bytes.size(), f.get());
  if (got != bytes.size()) return InvalidArgument(path + ": cannot read the " + what + " file (short read)");
  return bytes;
}

std::string TakeOpenSslError(const std::string& fallback) {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return fallback;
  const char* reason = ERR_reason_error_string(code);
  return reason != nullptr ? std::string(reason) : fallback;
}

}  // namespace security
}  // namespace sorun
