// Small helpers shared by the //security implementations: reading a key file whole, and turning
// OpenSSL's per-thread error queue into text for a Status message. Internal to //security.
// Thread-safe (OpenSSL's error queue is per thread).
#ifndef SORUN_SECURITY_OPENSSL_ERRORS_H_
#define SORUN_SECURITY_OPENSSL_ERRORS_H_

#include <string>

#include "base/status.h"

namespace sorun {
namespace security {

// The bytes of a key file (at most 64 KiB: no key is bigger). InvalidArgument naming `path` and
// `what` ("public key") when it is missing, not a regular file, unreadable or too big.
StatusOr<std::string> ReadKeyFile(const std::string& path, const std::string& what);

// The reason of the oldest error in this thread's OpenSSL queue ("no start line"), or
// `fallback` when the queue is empty; the queue is cleared.
std::string TakeOpenSslError(const std::string& fallback);

}  // namespace security
}  // namespace sorun

#endif  // SORUN_SECURITY_OPENSSL_ERRORS_H_
