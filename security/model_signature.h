// Ed25519 signatures over model libraries (OpenSSL's libcrypto): SignLibrary appends a signature
// trailer to a library's bytes (what `sorun pack --sign` writes), Ed25519Verifier makes the
// LibraryVerifier (base/load_hooks.h) that RuntimeOptions::verify_library calls before dlopen.
//
// A signed file is the library's bytes followed by an 88-byte trailer, like the Linux kernel's
// appended module signatures; dlopen and sorun's ELF checks read only what the ELF headers point
// at, so a signed library loads like the unsigned one (docs/security.md "Signed file format"):
//
//   offset      size  field
//   n           64    Ed25519 signature of bytes [0, n)
//   n + 64      8     n, little-endian (the signed prefix's length)
//   n + 72      16    magic "~sorun signed~\0\0"
//
// Keys are PEM files as OpenSSL writes them (`openssl genpkey -algorithm ed25519 -out key.pem`,
// `openssl pkey -in key.pem -pubout -out key.pub.pem`). Key files are read once, by the factory
// functions; a verifier keeps only the 32 public-key bytes and is thread-safe (each call builds
// its own OpenSSL objects). Callers: applications, the CLI (tools/cli), the Triton backend.
#ifndef SORUN_SECURITY_MODEL_SIGNATURE_H_
#define SORUN_SECURITY_MODEL_SIGNATURE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "base/load_hooks.h"
#include "base/status.h"

namespace sorun {
namespace security {

inline constexpr size_t kSignatureBytes = 64;
inline constexpr size_t kSignatureTrailerBytes = 88;  // signature + length + magic
inline constexpr std::string_view kSignatureMagic{"~sorun signed~\0\0", 16};

// `library` followed by its signature trailer, signed with the Ed25519 private key in
// `private_key_pem_path`. InvalidArgument naming the key file when it cannot be read or holds
// another kind of key; FailedPrecondition when `library` already ends in a signature trailer.
StatusOr<std::string> SignLibrary(std::string_view library, const std::string& private_key_pem_path);

// A verifier for RuntimeOptions::verify_library that accepts exactly the files signed by the
// private key of `public_key_pem_path` (read here, once). InvalidArgument naming the key file when
// it is missing, not PEM, a private key, or not Ed25519. The verifier's refusals are
// PermissionDenied naming the model: no trailer, a trailer cut short or whose length does not match,
// a signature that does not match the bytes.
StatusOr<LibraryVerifier> Ed25519Verifier(const std::string& public_key_pem_path);

// True when `bytes` ends in a signature trailer's magic (signed, not yet verified).
bool HasSignatureTrailer(std::string_view bytes);

// The signed library without its trailer (a view into `signed_library`), after checking the
// trailer's shape (not the signature). PermissionDenied naming `name` as the verifier's refusals.
StatusOr<std::string_view> StripSignature(std::string_view signed_library, const std::string& name);

}  // namespace security
}  // namespace sorun

#endif  // SORUN_SECURITY_MODEL_SIGNATURE_H_
