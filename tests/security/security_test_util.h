// Helpers for the //security tests: fresh Ed25519 key pairs written as PEM files (OpenSSL's API,
// the same files `openssl genpkey -algorithm ed25519` and `openssl pkey -pubout` write), AES-256
// model keys, other kinds of keys for the refusals, and byte flips. Test-only; not thread-safe.
#ifndef SORUN_TESTS_SECURITY_SECURITY_TEST_UTIL_H_
#define SORUN_TESTS_SECURITY_SECURITY_TEST_UTIL_H_

#include <cstddef>
#include <string>

namespace sorun {
namespace testing {

struct KeyPairFiles {
  std::string private_pem;  // DIR/STEM.pem
  std::string public_pem;   // DIR/STEM.pub.pem
};

// A new Ed25519 key pair in `dir` (aborts the test on failure).
KeyPairFiles WriteEd25519KeyPair(const std::string& dir, const std::string& stem);
// A new key pair of another algorithm ("RSA", "EC"): for the wrong-key-type refusals.
KeyPairFiles WriteOtherKeyPair(const std::string& dir, const std::string& stem, const std::string& algorithm);
// A new random AES-256 key file in `dir`: 64 hex digits and a newline (`openssl rand -hex 32`).
std::string WriteAesKeyHex(const std::string& dir, const std::string& stem);

// `bytes` with byte `offset` XORed with `mask`.
std::string FlipByte(std::string bytes, size_t offset, unsigned char mask = 0x01);

}  // namespace testing
}  // namespace sorun

#endif  // SORUN_TESTS_SECURITY_SECURITY_TEST_UTIL_H_
