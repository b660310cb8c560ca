// Bad-input catalogue, protected models: wrong keys, bad signatures, truncated and altered files given
// to the //security hooks, from a file and from memory. Each case runs through BadInputCatalogueTest
// (tests/robustness/catalogue.h): a clear error naming the cause, no crash, and the good model still
// loads and runs afterwards. Kept here, beside //security, so the core catalogue links no OpenSSL.
#include <string>
#include <vector>

#include "api/sorun.h"
#include "security/model_encryption.h"
#include "security/model_signature.h"
#include "tests/robustness/catalogue.h"
#include "tests/security/security_test_util.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace catalogue {
namespace {

// Keys and the good model signed / sealed, made once.
struct Protected {
  testing::KeyPairFiles keys, other, rsa;
  std::string aes, wrong_aes;
  std::string plain, signed_bytes, sealed;

  static const Protected& Get() {
    static const Protected* p = [] {
      auto* q = new Protected;
      CatalogueEnv& env = CatalogueEnv::Get();
      const std::string dir = testing::MakeTempDir("sorun_bad_security");
      q->keys = testing::WriteEd25519KeyPair(dir, "signer");
      q->other = testing::WriteEd25519KeyPair(dir, "other");
      q->rsa = testing::WriteOtherKeyPair(dir, "rsa", "RSA");
      q->aes = testing::WriteAesKeyHex(dir, "model");
      q->wrong_aes = testing::WriteAesKeyHex(dir, "wrong");
      q->plain = testing::ReadFileOrDie(env.good_so);
      q->signed_bytes = security::SignLibrary(q->plain, q->keys.private_pem).value();
      q->sealed = security::EncryptModel(q->signed_bytes, q->aes).value();
      return q;
    }();
    return *p;
  }
};

RuntimeOptions Hooks(const std::string& public_pem, const std::string& aes) {
  RuntimeOptions options;
  if (!public_pem.empty()) {
    auto verifier = security::Ed25519Verifier(public_pem);
    if (verifier.ok()) options.verify_library = *verifier;
  }
  if (!aes.empty()) {
    auto decrypt = security::AesGcmDecryptor(aes);
    if (decrypt.ok()) options.decrypt = *decrypt;
  }
  return options;
}

// Loads `bytes` from a fresh file named `name` with the hooks.
Status LoadFile(const std::string& bytes, const std::string& name, const std::string& public_pem,
                const std::string& aes) {
  const std::string path = CatalogueEnv::Get().Path(name);
  testing::WriteFileOrDie(path, bytes);
  return Model::Load(path, Hooks(public_pem, aes)).status();
}

Status LoadMemory(const std::string& bytes, const std::string& public_pem, const std::string& aes) {
  return Model::LoadFromMemory(bytes, Hooks(public_pem, aes), "buffer.so").status();
}

std::vector<CatalogueCase> SecurityCases() {
  using P = Protected;
  std::vector<CatalogueCase> cases = {
      {"unsigned library with a verifier",
       [] { return LoadFile(P::Get().plain, "unsigned.so", P::Get().keys.public_pem, ""); },
       "unsigned.so: no sorun signature"},
      {"unsigned buffer with a verifier", [] { return LoadMemory(P::Get().plain, P::Get().keys.public_pem, ""); },
       "buffer.so: no sorun signature"},
      {"signed by another key",
       [] { return LoadFile(P::Get().signed_bytes, "other_key.so", P::Get().other.public_pem, ""); },
       "other_key.so: the signature does not match the file (altered, or signed with another key)"},
      {"signature trailer cut short by one byte",
       [] {
         const std::string& s = P::Get().signed_bytes;
         return LoadFile(s.substr(0, s.size() - 1), "cut.so", P::Get().keys.public_pem, "");
       },
       "cut.so: no sorun signature"},
      {"bytes added before the signature trailer",
       [] {
         const std::string& s = P::Get().signed_bytes;
         const size_t n = s.size() - security::kSignatureTrailerBytes;
         return LoadFile(s.substr(0, n) + std::string(64, '\0') + s.substr(n), "padded.so", P::Get().keys.public_pem,
                         "");
       },
       "padded.so: the signature trailer covers"},
      {"library followed by a bare trailer magic",
       [] { return LoadMemory(P::Get().plain + std::string(security::kSignatureMagic), P::Get().keys.public_pem, ""); },
       "buffer.so: the signature trailer covers"},
      {"signature byte changed",
       [] {
         const std::string& s = P::Get().signed_bytes;
         return LoadFile(testing::FlipByte(s, s.size() - 88), "sig_byte.so", P::Get().keys.public_pem, "");
       },
       "sig_byte.so: the signature does not match the file"},
      {"encrypted with another key",
       [] { return LoadFile(P::Get().sealed, "wrong_key.so", P::Get().keys.public_pem, P::Get().wrong_aes); },
       "wrong_key.so: decryption failed: wrong key or the file was altered"},
      {"ciphertext byte changed",
       [] {
         const std::string& s = P::Get().sealed;
         return LoadMemory(testing::FlipByte(s, s.size() / 2), P::Get().keys.public_pem, P::Get().aes);
       },
       "buffer.so: decryption failed: wrong key or the file was altered"},
      {"ciphertext truncated",
       [] {
         const std::string& s = P::Get().sealed;
         return LoadFile(s.substr(0, s.size() - 100), "truncated.so", "", P::Get().aes);
       },
       "truncated.so: decryption failed"},
      {"ciphertext shorter than its header", [] { return LoadMemory(P::Get().sealed.substr(0, 20), "", P::Get().aes); },
       "buffer.so: truncated encrypted model (20 bytes"},
      {"plain library given to the decrypt hook", [] { return LoadFile(P::Get().plain, "plain.so", "", P::Get().aes); },
       "plain.so: not an encrypted sorun model"},
      {"empty buffer with both hooks", [] { return LoadMemory("", P::Get().keys.public_pem, P::Get().aes); },
       "buffer.so: not an encrypted sorun model"},
      {"RSA public key given to the verifier",
       [] { return security::Ed25519Verifier(P::Get().rsa.public_pem).status(); },
       ": an RSA key; sorun signatures use Ed25519 keys"},
  };
  return cases;
}

SORUN_CATALOGUE_CASES(Security, SecurityCases());

}  // namespace
}  // namespace catalogue
}  // namespace sorun
