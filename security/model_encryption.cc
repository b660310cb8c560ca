#include "security/model_encryption.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "security/openssl_errors.h"

namespace sorun {
namespace security {
namespace {

constexpr size_t kKeyBytes = 32;
constexpr size_t kNonceBytes = 12;
static_assert(kEncryptionMagic.size() + 1 + kNonceBytes == kEncryptionHeaderBytes, "header layout");

// The key bytes, wiped when destroyed.
struct AesKey {
  std::array<unsigned char, kKeyBytes> bytes{};
  ~AesKey() { OPENSSL_cleanse(bytes.data(), bytes.size()); }
};

struct CipherCtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using CipherCtxPtr = std::unique_ptr<EVP_CIPHER_CTX, CipherCtxFree>;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

StatusOr<std::shared_ptr<const AesKey>> ReadAesKey(const std::string& path) {
  SORUN_ASSIGN_OR_RETURN(std::string text, ReadKeyFile(path, "model key"));
  auto key = std::make_shared<AesKey>();
  const std::string usage = " (a model key file holds 32 raw bytes or 64 hex digits: openssl rand -hex 32 > KEY)";
  std::string_view body = text;
  if (body.size() != kKeyBytes) {  // hex: strip one trailing newline
    if (!body.empty() && body.back() == '\n') body.remove_suffix(1);
    if (!body.empty() && body.back() == '\r') body.remove_suffix(1);
  }
  if (body.size() == kKeyBytes) {
    std::copy(body.begin(), body.end(), key->bytes.begin());
  } else if (body.size() == 2 * kKeyBytes) {
    for (size_t i = 0; i < kKeyBytes; ++i) {
      const int hi = HexValue(body[2 * i]), lo = HexValue(body[2 * i + 1]);
      if (hi < 0 || lo < 0) {
        OPENSSL_cleanse(text.data(), text.size());
        return InvalidArgument(path + ": byte " + std::to_string(2 * i + (hi < 0 ? 0 : 1)) + " is not a hex digit" +
                               usage);
      }
      key->bytes[i] = static_cast<unsigned char>(hi * 16 + lo);
    }
  } else {
    OPENSSL_cleanse(text.data(), text.size());
    return InvalidArgument(path + ": " + std::to_string(text.size()) + " bytes" + usage);
  }
  OPENSSL_cleanse(text.data(), text.size());
  return std::shared_ptr<const AesKey>(std::move(key));
}

std::string OpenSslFailure(const std::string& what) { return what + ": " + TakeOpenSslError("unknown OpenSSL error"); }

}  // namespace

bool IsEncryptedModel(std::string_view bytes) {
  return bytes.size() >= kEncryptionMagic.size() && bytes.substr(0, kEncryptionMagic.size()) == kEncryptionMagic;
}

StatusOr<std::string> EncryptModel(std::string_view plaintext, const std::string& key_path) {
  SORUN_ASSIGN_OR_RETURN(std::shared_ptr<const AesKey> key, ReadAesKey(key_path));
  std::string out(kEncryptionHeaderBytes + plaintext.size() + kEncryptionTagBytes, '\0');
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  std::copy(kEncryptionMagic.begin(), kEncryptionMagic.end(), out.begin());
  o[kEncryptionMagic.size()] = kEncryptionVersion;
  unsigned char* nonce = o + kEncryptionMagic.size() + 1;
  if (RAND_bytes(nonce, static_cast<int>(kNonceBytes)) != 1) return Internal(OpenSslFailure("no random nonce"));
  CipherCtxPtr ctx(EVP_CIPHER_CTX_new());
  int len = 0;
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, key->bytes.data(), nonce) != 1 ||
      EVP_EncryptUpdate(ctx.get(), nullptr, &len, o, static_cast<int>(kEncryptionHeaderBytes)) != 1) {
    return Internal(OpenSslFailure("AES-256-GCM setup failed"));
  }
  const auto* in = reinterpret_cast<const unsigned char*>(plaintext.data());
  unsigned char* cipher = o + kEncryptionHeaderBytes;
  for (size_t done = 0; done < plaintext.size();) {
    const size_t n = std::min(kDecryptChunkBytes, plaintext.size() - done);
    if (EVP_EncryptUpdate(ctx.get(), cipher + done, &len, in + done, static_cast<int>(n)) != 1 ||
        static_cast<size_t>(len) != n) {
      return Internal(OpenSslFailure("AES-256-GCM encryption failed"));
    }
    done += n;
  }
  if (EVP_EncryptFinal_ex(ctx.get(), cipher + plaintext.size(), &len) != 1 || len != 0 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(kEncryptionTagBytes),
                          cipher + plaintext.size()) != 1) {
    return Internal(OpenSslFailure("AES-256-GCM encryption failed"));
  }
  return out;
}

StatusOr<DecryptHook> AesGcmDecryptor(const std::string& key_path) {
  SORUN_ASSIGN_OR_RETURN(std::shared_ptr<const AesKey> key, ReadAesKey(key_path));
  return DecryptHook([key](std::string_view stored, PlaintextSink& plaintext, const std::string& name) -> Status {
    if (!IsEncryptedModel(stored)) {
      return DataLoss(name + ": not an encrypted sorun model (it does not start with \"SORUNENC\"; " +
                      "`sorun pack --encrypt` writes them)");
    }
    if (stored.size() < kEncryptionHeaderBytes + kEncryptionTagBytes) {
      return DataLoss(name + ": truncated encrypted model (" + std::to_string(stored.size()) +
                      " bytes; header and tag " + "alone are " +
                      std::to_string(kEncryptionHeaderBytes + kEncryptionTagBytes) + ")");
    }
    const auto* s = reinterpret_cast<const unsigned char*>(stored.data());
    const unsigned version = s[kEncryptionMagic.size()];
    if (version != kEncryptionVersion) {
      return DataLoss(name + ": encrypted model format version " + std::to_string(version) + " (this sorun reads " +
                      std::to_string(kEncryptionVersion) + ")");
    }
    const unsigned char* nonce = s + kEncryptionMagic.size() + 1;
    const size_t cipher_bytes = stored.size() - kEncryptionHeaderBytes - kEncryptionTagBytes;
    const unsigned char* cipher = s + kEncryptionHeaderBytes;
    std::array<unsigned char, kEncryptionTagBytes> tag;
    std::copy(cipher + cipher_bytes, cipher + cipher_bytes + kEncryptionTagBytes, tag.begin());

    CipherCtxPtr ctx(EVP_CIPHER_CTX_new());
    int len = 0;
    if (!ctx || EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, key->bytes.data(), nonce) != 1 ||
        EVP_DecryptUpdate(ctx.get(), nullptr, &len, s, static_cast<int>(kEncryptionHeaderBytes)) != 1) {
      return Internal(OpenSslFailure(name + ": AES-256-GCM setup failed"));
    }
    SORUN_RETURN_IF_ERROR(plaintext.Reserve(cipher_bytes));
    std::vector<unsigned char> chunk(std::min(kDecryptChunkBytes, cipher_bytes));
    for (size_t done = 0; done < cipher_bytes;) {
      const size_t n = std::min(kDecryptChunkBytes, cipher_bytes - done);
      if (EVP_DecryptUpdate(ctx.get(), chunk.data(), &len, cipher + done, static_cast<int>(n)) != 1 ||
          static_cast<size_t>(len) != n) {
        OPENSSL_cleanse(chunk.data(), chunk.size());
        return Internal(OpenSslFailure(name + ": AES-256-GCM decryption failed"));
      }
      Status written = plaintext.Write(chunk.data(), n);
      if (!written.ok()) {
        OPENSSL_cleanse(chunk.data(), chunk.size());
        return written;
      }
      done += n;
    }
    OPENSSL_cleanse(chunk.data(), chunk.size());
    if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(tag.size()), tag.data()) != 1) {
      return Internal(OpenSslFailure(name + ": AES-256-GCM setup failed"));
    }
    unsigned char final_block[16];  // GCM writes nothing here; the call checks the tag
    const int authentic = EVP_DecryptFinal_ex(ctx.get(), final_block, &len);
    TakeOpenSslError("");
    if (authentic != 1) return PermissionDenied(name + ": decryption failed: wrong key or the file was altered");
    return Status::Ok();
  });
}

}  // namespace security
}  // namespace sorun
