#include "tools/cli/model_protection.h"

#include "base/file_checks.h"
#include "base/file_util.h"
#include "base/memory_file.h"
#include "security/model_encryption.h"
#include "security/model_signature.h"
#include "serialization/loader.h"

namespace sorun {
namespace cli {

std::vector<FlagSpec> ProtectionFlagSpecs() {
  return {
      {"--key", "", true, false, "KEYFILE", "decrypt MODEL (written by pack --encrypt) with this AES-256 key"},
      {"--public-key", "", true, false, "PUB.pem",
       "refuse MODEL unless signed (pack --sign) by this Ed25519 key's private half"},
  };
}

StatusOr<ProtectionFlags> ReadProtectionFlags(const ParsedFlags& flags) {
  ProtectionFlags p;
  p.key_path = flags.Value("--key");
  p.public_key_path = flags.Value("--public-key");
  if (flags.Has("--key") && p.key_path.empty()) return InvalidArgument("--key needs a file name");
  if (flags.Has("--public-key") && p.public_key_path.empty()) return InvalidArgument("--public-key needs a file name");
  return p;
}

Status AddLoadHooks(const ProtectionFlags& flags, RuntimeOptions* options) {
  if (!flags.key_path.empty()) {
    SORUN_ASSIGN_OR_RETURN(options->decrypt, security::AesGcmDecryptor(flags.key_path));
  }
  if (!flags.public_key_path.empty()) {
    SORUN_ASSIGN_OR_RETURN(options->verify_library, security::Ed25519Verifier(flags.public_key_path));
  }
  return Status::Ok();
}

Status ProtectPackedFile(const std::string& path, const std::string& sign_key_pem, const std::string& encrypt_key) {
  if (sign_key_pem.empty() && encrypt_key.empty()) return Status::Ok();
  auto bytes = ReadFileToString(path);
  if (!bytes.ok()) return NamePath(std::move(bytes).status(), path);
  std::string out = std::move(*bytes);
  if (!sign_key_pem.empty()) {
    auto signed_library = security::SignLibrary(out, sign_key_pem);
    if (!signed_library.ok()) return std::move(signed_library).status().Annotate("signing " + path);
    out = std::move(*signed_library);
  }
  if (!encrypt_key.empty()) {
    auto stored = security::EncryptModel(out, encrypt_key);
    if (!stored.ok()) return std::move(stored).status().Annotate("encrypting " + path);
    out = std::move(*stored);
  }
  return WriteFileBytes(path, out.data(), out.size());
}

ProtectedModelBytes::ProtectedModelBytes(ProtectedModelBytes&& other) noexcept = default;
ProtectedModelBytes::~ProtectedModelBytes() = default;

std::string ProtectedModelBytes::NameModel(std::string text) const {
  if (readable_path_ == path_ || readable_path_.empty()) return text;
  for (size_t at = text.find(readable_path_); at != std::string::npos; at = text.find(readable_path_, at)) {
    text.replace(at, readable_path_.size(), path_);
    at += path_.size();
  }
  return text;
}

StatusOr<ProtectedModelBytes> ProtectedModelBytes::Open(const std::string& path, const ProtectionFlags& flags) {
  ProtectedModelBytes result;
  result.path_ = path;
  result.readable_path_ = path;
  if (!flags.any()) return result;
  SORUN_RETURN_IF_ERROR(CheckRegularFile(path, "model"));
  RuntimeOptions hooks;
  SORUN_RETURN_IF_ERROR(AddLoadHooks(flags, &hooks));
  LoadOptions options;
  options.decrypt = std::move(hooks.decrypt);
  options.verify_library = std::move(hooks.verify_library);
  auto file = MappedFile::Open(path);
  if (!file.ok()) return NamePath(std::move(file).status(), path);
  // The loader's own sequence (decrypt, seal, verify), without the dlopen.
  SORUN_ASSIGN_OR_RETURN(SealedLibrary sealed, SealLibraryBytes((*file)->bytes(), path, options));
  result.readable_path_ = "/proc/self/fd/" + std::to_string(sealed.file.fd());
  result.memory_ = std::make_unique<MemoryFile>(std::move(sealed.file));
  result.signature_checked_ = static_cast<bool>(options.verify_library);
  return result;
}

}  // namespace cli
}  // namespace sorun
