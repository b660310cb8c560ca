// AES-256-GCM encryption of model files (OpenSSL's libcrypto): EncryptModel writes what
// `sorun pack --encrypt` stores, AesGcmDecryptor makes the DecryptHook (base/load_hooks.h) that
// RuntimeOptions::decrypt calls to stream the plaintext into the loader's memory file, so the
// plaintext library never reaches a file system.
//
// Stored format (docs/security.md "Encrypted file format"):
//
//   offset  size  field
//   0       8     magic "SORUNENC"
//   8       1     format version (1)
//   9       12    random nonce (RAND_bytes, new for every encryption)
//   21      n     ciphertext of the n plaintext bytes
//   21 + n  16    GCM tag; the 21 header bytes are authenticated as additional data
//
// A key file holds the 32 key bytes raw, or as 64 hex digits (`openssl rand -hex 32 > model.key`),
// optionally followed by one newline. Key files are read once, by the factory functions; a
// decryptor keeps the key bytes (wiped when the last copy of the hook goes) and is thread-safe
// (each call builds its own cipher context). Callers: applications, the CLI (tools/cli).
#ifndef SORUN_SECURITY_MODEL_ENCRYPTION_H_
#define SORUN_SECURITY_MODEL_ENCRYPTION_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "base/load_hooks.h"
#include "base/status.h"

namespace sorun {
namespace security {

inline constexpr std::string_view kEncryptionMagic{"SORUNENC", 8};
inline constexpr unsigned char kEncryptionVersion = 1;
inline constexpr size_t kEncryptionHeaderBytes = 21;  // magic + version + nonce
inline constexpr size_t kEncryptionTagBytes = 16;
// The decryptor's unit of work: plaintext is written to the sink in pieces of this size.
inline constexpr size_t kDecryptChunkBytes = size_t{1} << 20;

// `plaintext` encrypted with the key in `key_path` under a fresh random nonce. InvalidArgument
// naming the key file when it is missing or not 32 bytes / 64 hex digits.
StatusOr<std::string> EncryptModel(std::string_view plaintext, const std::string& key_path);

// A decrypt hook for RuntimeOptions::decrypt with the key in `key_path` (read here, once; the
// same errors as EncryptModel). The hook reserves the plaintext's size, then decrypts in
// kDecryptChunkBytes pieces straight into the sink. Its errors name the model: DataLoss for bytes
// that are not an encrypted sorun model (no magic, an unknown version, shorter than header + tag),
// PermissionDenied "NAME: decryption failed: wrong key or the file was altered" when the tag does
// not match (the plaintext already written is then discarded by the loader).
StatusOr<DecryptHook> AesGcmDecryptor(const std::string& key_path);

// True when `bytes` starts with the encrypted-model magic.
bool IsEncryptedModel(std::string_view bytes);

}  // namespace security
}  // namespace sorun

#endif  // SORUN_SECURITY_MODEL_ENCRYPTION_H_
