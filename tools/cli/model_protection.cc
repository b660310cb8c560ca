#include "tools/cli/model_protection.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/file_checks.h"
#include "base/file_util.h"
#include "security/model_encryption.h"
#include "security/model_signature.h"

namespace sorun {
namespace cli {
namespace {

// The plaintext of `--key` for inspect/verify: an anonymous memory file, sealed once written.
class MemfdSink : public PlaintextSink {
 public:
  explicit MemfdSink(int fd) : fd_(fd) {}
  Status Write(const void* data, size_t size) override {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t n = ::write(fd_, p, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return ResourceExhausted(std::string("memory file: write failed: ") + std::strerror(errno));
      p += n;
      size -= static_cast<size_t>(n);
    }
    return Status::Ok();
  }
  Status Reserve(size_t) override { return Status::Ok(); }  // the memory file grows as written

 private:
  int fd_;
};

}  // namespace

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

ProtectedModelBytes::ProtectedModelBytes(ProtectedModelBytes&& other) noexcept
    : path_(std::move(other.path_)),
      readable_path_(std::move(other.readable_path_)),
      memfd_(other.memfd_),
      signature_checked_(other.signature_checked_) {
  other.memfd_ = -1;
}

ProtectedModelBytes::~ProtectedModelBytes() {
  if (memfd_ >= 0) ::close(memfd_);
}

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
  DecryptHook decrypt;
  LibraryVerifier verify;
  if (!flags.key_path.empty()) {
    SORUN_ASSIGN_OR_RETURN(decrypt, security::AesGcmDecryptor(flags.key_path));
  }
  if (!flags.public_key_path.empty()) {
    SORUN_ASSIGN_OR_RETURN(verify, security::Ed25519Verifier(flags.public_key_path));
  }
  auto file = MappedFile::Open(path);
  if (!file.ok()) return NamePath(std::move(file).status(), path);
  if (!decrypt) {
    SORUN_RETURN_IF_ERROR(verify((*file)->bytes(), path));
    result.signature_checked_ = true;
    return result;
  }
  result.memfd_ = ::memfd_create("sorun-model", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (result.memfd_ < 0) {
    return Unimplemented(path + ": --key needs memfd_create (decrypting never writes to a file system): " +
                         std::strerror(errno));
  }
  MemfdSink sink(result.memfd_);
  SORUN_RETURN_IF_ERROR(decrypt((*file)->bytes(), sink, path));
  ::fcntl(result.memfd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  result.readable_path_ = "/proc/self/fd/" + std::to_string(result.memfd_);
  if (verify) {
    auto plaintext = MappedFile::Open(result.readable_path_);
    if (!plaintext.ok()) return NamePath(std::move(plaintext).status(), path);
    SORUN_RETURN_IF_ERROR(verify((*plaintext)->bytes(), path));
    result.signature_checked_ = true;
  }
  return result;
}

}  // namespace cli
}  // namespace sorun
