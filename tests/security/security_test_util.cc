#include "tests/security/security_test_util.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#include <cstdio>
#include <cstdlib>

#include "tests/util/test_util.h"

namespace sorun {
namespace testing {
namespace {

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "security_test_util: %s\n", what.c_str());
  std::abort();
}

KeyPairFiles WritePair(EVP_PKEY* key, const std::string& dir, const std::string& stem) {
  if (key == nullptr) Die("key generation failed");
  KeyPairFiles files{dir + "/" + stem + ".pem", dir + "/" + stem + ".pub.pem"};
  FILE* priv = std::fopen(files.private_pem.c_str(), "wb");
  FILE* pub = std::fopen(files.public_pem.c_str(), "wb");
  if (priv == nullptr || pub == nullptr) Die("cannot write key files in " + dir);
  if (PEM_write_PrivateKey(priv, key, nullptr, nullptr, 0, nullptr, nullptr) != 1 || PEM_write_PUBKEY(pub, key) != 1) {
    Die("cannot write PEM keys");
  }
  std::fclose(priv);
  std::fclose(pub);
  EVP_PKEY_free(key);
  return files;
}

}  // namespace

KeyPairFiles WriteEd25519KeyPair(const std::string& dir, const std::string& stem) {
  return WritePair(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"), dir, stem);
}

KeyPairFiles WriteOtherKeyPair(const std::string& dir, const std::string& stem, const std::string& algorithm) {
  EVP_PKEY* key = algorithm == "RSA" ? EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048})
                                     : EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  return WritePair(key, dir, stem);
}

std::string WriteAesKeyHex(const std::string& dir, const std::string& stem) {
  unsigned char key[32];
  if (RAND_bytes(key, sizeof(key)) != 1) Die("RAND_bytes failed");
  static const char kHex[] = "0123456789abcdef";
  std::string text;
  for (unsigned char b : key) {
    text.push_back(kHex[b >> 4]);
    text.push_back(kHex[b & 15]);
  }
  text.push_back('\n');
  const std::string path = dir + "/" + stem + ".key";
  WriteFileOrDie(path, text);
  return path;
}

std::string FlipByte(std::string bytes, size_t offset, unsigned char mask) {
  if (offset >= bytes.size()) Die("FlipByte: offset past the end");
  bytes[offset] = static_cast<char>(static_cast<unsigned char>(bytes[offset]) ^ mask);
  return bytes;
}

}  // namespace testing
}  // namespace sorun
