// The CLI's side of protected models (docs/security.md): `pack --sign KEY.pem --encrypt KEYFILE`
// rewrites the packed output (sign the library, then encrypt the signed file), and the loading and
// reading commands take `--key KEYFILE` (decrypt on the way in) and `--public-key PUB.pem` (refuse a
// library whose Ed25519 signature does not match, before anything of it runs). The cryptography is
// //security's; this file only turns flags into its hooks.
//
// run and bench hand the hooks to Model::Load (RuntimeOptions). inspect and verify never load a
// model: ProtectedModelBytes decrypts into an anonymous memory file of this process (memfd, never a
// file system) and checks the signature there, and the command then reads /proc/self/fd/N.
// Not thread-safe (one command at a time); a ProtectedModelBytes owns its memory file (base/memory_file.h).
#ifndef SORUN_TOOLS_CLI_MODEL_PROTECTION_H_
#define SORUN_TOOLS_CLI_MODEL_PROTECTION_H_

#include <memory>
#include <string>
#include <vector>

#include "api/sorun.h"
#include "base/memory_file.h"
#include "base/status.h"
#include "tools/cli/flags.h"

namespace sorun {
namespace cli {

// --key and --public-key of a command that reads a model.
struct ProtectionFlags {
  std::string key_path;         // --key: the AES-256 model key (empty: the file is not encrypted)
  std::string public_key_path;  // --public-key: the signer's Ed25519 public key (empty: no check)
  bool any() const { return !key_path.empty() || !public_key_path.empty(); }
};

// The two FlagSpecs (--key KEYFILE, --public-key PUB.pem) every loading command adds.
std::vector<FlagSpec> ProtectionFlagSpecs();
// From parsed flags; InvalidArgument (a usage error) for an empty file name.
StatusOr<ProtectionFlags> ReadProtectionFlags(const ParsedFlags& flags);

// Sets options->decrypt and options->verify_library from the flags (key files are read here: a bad
// key file is an error naming it, before the model is touched).
Status AddLoadHooks(const ProtectionFlags& flags, RuntimeOptions* options);

// Rewrites the file at `path` in place: signed with `sign_key_pem` (if not empty), then encrypted
// with `encrypt_key` (if not empty). Errors name the file.
Status ProtectPackedFile(const std::string& path, const std::string& sign_key_pem, const std::string& encrypt_key);

// A model file's library bytes, decrypted (with --key) into a sealed memory file and signature-checked
// (with --public-key) exactly as a load does (SealLibraryBytes, serialization/loader.h), for commands
// that read a model without loading it.
class ProtectedModelBytes {
 public:
  static StatusOr<ProtectedModelBytes> Open(const std::string& path, const ProtectionFlags& flags);
  ProtectedModelBytes(ProtectedModelBytes&& other) noexcept;
  ProtectedModelBytes& operator=(ProtectedModelBytes&&) = delete;
  ~ProtectedModelBytes();

  // Where to read the library: `path` itself without either flag, else /proc/self/fd/N.
  const std::string& readable_path() const { return readable_path_; }
  // `text` with every readable_path() replaced by the model's path (for messages and reports).
  std::string NameModel(std::string text) const;
  bool signature_checked() const { return signature_checked_; }

 private:
  ProtectedModelBytes() = default;
  std::string path_;
  std::string readable_path_;
  std::unique_ptr<MemoryFile> memory_;  // the sealed library (with either flag)
  bool signature_checked_ = false;
};

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_MODEL_PROTECTION_H_
