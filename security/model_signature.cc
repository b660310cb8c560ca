#include "security/model_signature.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <array>
#include <cstring>
#include <memory>

#include "security/openssl_errors.h"

namespace sorun {
namespace security {
namespace {

constexpr size_t kPublicKeyBytes = 32;
constexpr size_t kLengthOffset = kSignatureBytes;     // in the trailer
constexpr size_t kMagicOffset = kSignatureBytes + 8;  // in the trailer
static_assert(kMagicOffset + 16 == kSignatureTrailerBytes, "trailer layout");

struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;
using BioPtr = std::unique_ptr<BIO, BioFree>;

// "RSA", "EC", ... for messages about a key of the wrong kind.
std::string KeyTypeName(const EVP_PKEY* key) {
  const char* name = EVP_PKEY_get0_type_name(key);
  return name != nullptr ? name : "unknown";
}

enum class PemKind { kPublic, kPrivate };

// Reads a PEM key of `kind` from `path`; InvalidArgument naming the file for everything else.
StatusOr<PkeyPtr> ReadEd25519Key(const std::string& path, PemKind kind) {
  const std::string what = kind == PemKind::kPublic ? "public key" : "private key";
  SORUN_ASSIGN_OR_RETURN(std::string pem, ReadKeyFile(path, what));
  auto read = [&pem](PemKind k) {
    BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    EVP_PKEY* key = nullptr;
    if (bio) {
      key = k == PemKind::kPublic ? PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr)
                                  : PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
    }
    return PkeyPtr(key);
  };
  PkeyPtr key = read(kind);
  if (!key) {
    std::string reason = TakeOpenSslError("not a PEM key");
    // The other kind of key in the wrong place is a common mistake: say which file to give.
    if (kind == PemKind::kPublic && read(PemKind::kPrivate)) {
      TakeOpenSslError("");
      return InvalidArgument(path + ": this is a private key; verifying needs the public key " + "(openssl pkey -in " +
                             path + " -pubout -out PUBLIC.pem)");
    }
    if (kind == PemKind::kPrivate && read(PemKind::kPublic)) {
      TakeOpenSslError("");
      return InvalidArgument(path + ": this is a public key; signing needs the private key");
    }
    TakeOpenSslError("");
    return InvalidArgument(path + ": cannot read an Ed25519 " + what + " (PEM, as written by `openssl genpkey " +
                           "-algorithm ed25519`): " + reason);
  }
  if (EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_ED25519) {
    return InvalidArgument(path + ": an " + KeyTypeName(key.get()) + " key; sorun signatures use Ed25519 keys " +
                           "(openssl genpkey -algorithm ed25519)");
  }
  return key;
}

uint64_t ReadLe64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void AppendLe64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

bool HasSignatureTrailer(std::string_view bytes) {
  return bytes.size() >= kSignatureMagic.size() &&
         bytes.substr(bytes.size() - kSignatureMagic.size()) == kSignatureMagic;
}

StatusOr<std::string_view> StripSignature(std::string_view signed_library, const std::string& name) {
  if (!HasSignatureTrailer(signed_library)) {
    return PermissionDenied(name + ": no sorun signature (the file ends without the " +
                            std::to_string(kSignatureTrailerBytes) +
                            "-byte trailer that `sorun pack --sign` appends: unsigned, or cut short)");
  }
  if (signed_library.size() < kSignatureTrailerBytes) {
    return PermissionDenied(name + ": truncated sorun signature trailer (the file has " +
                            std::to_string(signed_library.size()) + " bytes; the trailer alone has " +
                            std::to_string(kSignatureTrailerBytes) + ")");
  }
  const size_t prefix = signed_library.size() - kSignatureTrailerBytes;
  const uint64_t stated = ReadLe64(signed_library.data() + prefix + kLengthOffset);
  if (stated != prefix) {
    return PermissionDenied(name + ": the signature trailer covers " + std::to_string(stated) + " bytes but " +
                            std::to_string(prefix) + " precede it (the file was cut short or bytes were added)");
  }
  return signed_library.substr(0, prefix);
}

StatusOr<std::string> SignLibrary(std::string_view library, const std::string& private_key_pem_path) {
  if (HasSignatureTrailer(library)) {
    return FailedPrecondition("the library already ends in a sorun signature trailer (sign the unsigned library)");
  }
  SORUN_ASSIGN_OR_RETURN(PkeyPtr key, ReadEd25519Key(private_key_pem_path, PemKind::kPrivate));
  MdCtxPtr ctx(EVP_MD_CTX_new());
  std::array<unsigned char, kSignatureBytes> signature{};
  size_t signature_len = signature.size();
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), signature.data(), &signature_len,
                     reinterpret_cast<const unsigned char*>(library.data()), library.size()) != 1 ||
      signature_len != kSignatureBytes) {
    return Internal(private_key_pem_path + ": Ed25519 signing failed: " + TakeOpenSslError("unknown OpenSSL error"));
  }
  std::string out;
  out.reserve(library.size() + kSignatureTrailerBytes);
  out.append(library);
  out.append(reinterpret_cast<const char*>(signature.data()), signature.size());
  AppendLe64(&out, library.size());
  out.append(kSignatureMagic);
  return out;
}

StatusOr<LibraryVerifier> Ed25519Verifier(const std::string& public_key_pem_path) {
  SORUN_ASSIGN_OR_RETURN(PkeyPtr key, ReadEd25519Key(public_key_pem_path, PemKind::kPublic));
  std::array<unsigned char, kPublicKeyBytes> raw{};
  size_t raw_len = raw.size();
  if (EVP_PKEY_get_raw_public_key(key.get(), raw.data(), &raw_len) != 1 || raw_len != kPublicKeyBytes) {
    return InvalidArgument(public_key_pem_path + ": cannot read the Ed25519 public key's bytes: " +
                           TakeOpenSslError("unknown OpenSSL error"));
  }
  // Only the 32 key bytes are kept; each call makes its own OpenSSL objects (thread-safe).
  return LibraryVerifier([raw](std::string_view library, const std::string& name) -> Status {
    SORUN_ASSIGN_OR_RETURN(std::string_view signed_bytes, StripSignature(library, name));
    const auto* signature = reinterpret_cast<const unsigned char*>(library.data() + signed_bytes.size());
    PkeyPtr pub(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, raw.data(), raw.size()));
    MdCtxPtr ctx(EVP_MD_CTX_new());
    if (!pub || !ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, pub.get()) != 1) {
      return Internal(name + ": cannot set up Ed25519 verification: " + TakeOpenSslError("unknown OpenSSL error"));
    }
    const int verified =
        EVP_DigestVerify(ctx.get(), signature, kSignatureBytes,
                         reinterpret_cast<const unsigned char*>(signed_bytes.data()), signed_bytes.size());
    TakeOpenSslError("");  // a mismatch leaves an error in the queue: not ours to keep
    if (verified != 1) {
      return PermissionDenied(name + ": the signature does not match the file (altered, or signed with another key)");
    }
    return Status::Ok();
  });
}

}  // namespace security
}  // namespace sorun
