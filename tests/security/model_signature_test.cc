// SignLibrary / Ed25519Verifier on a real model library (the zoo MLP) with real OpenSSL keys: the
// round trip, one flipped byte anywhere, unsigned and cut-short files, another key, bad key files.
#include "security/model_signature.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "tests/security/security_test_util.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace security {
namespace {

using testing::FlipByte;
using testing::KeyPairFiles;

class ModelSignatureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("sorun_signature");
    keys_ = testing::WriteEd25519KeyPair(dir_, "signer");
    library_ = testing::ReadFileOrDie(testing::Runfile("testdata/models/mlp.so"));
    auto signed_library = SignLibrary(library_, keys_.private_pem);
    ASSERT_TRUE(signed_library.ok()) << signed_library.status().ToString();
    signed_ = *signed_library;
    auto verifier = Ed25519Verifier(keys_.public_pem);
    ASSERT_TRUE(verifier.ok()) << verifier.status().ToString();
    verify_ = *verifier;
  }

  std::string dir_;
  KeyPairFiles keys_;
  std::string library_;
  std::string signed_;
  LibraryVerifier verify_;
};

TEST_F(ModelSignatureTest, SignedFileIsTheLibraryFollowedByTheTrailer) {
  ASSERT_EQ(signed_.size(), library_.size() + kSignatureTrailerBytes);
  EXPECT_EQ(signed_.substr(0, library_.size()), library_);
  EXPECT_EQ(signed_.substr(signed_.size() - 16), std::string(kSignatureMagic));
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<unsigned char>(signed_[library_.size() + 64 + i]);
  EXPECT_EQ(length, library_.size());
  EXPECT_TRUE(HasSignatureTrailer(signed_));
  EXPECT_FALSE(HasSignatureTrailer(library_));
  auto stripped = StripSignature(signed_, "model.so");
  ASSERT_TRUE(stripped.ok()) << stripped.status().ToString();
  EXPECT_EQ(*stripped, library_);
}

TEST_F(ModelSignatureTest, VerifierAcceptsTheSignedFile) {
  Status s = verify_(signed_, "model.so");
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_F(ModelSignatureTest, OneFlippedByteAnywhereIsRefused) {
  // The ELF header, the middle (code, the blob), the last library byte, the signature, the length
  // field, the magic: every position the signature or the trailer covers.
  std::vector<size_t> offsets = {
      0, 1, 4, 16, 63, 64, library_.size() / 3, library_.size() / 2, library_.size() * 3 / 4, library_.size() - 1};
  for (size_t i = library_.size(); i < signed_.size(); i += 7) offsets.push_back(i);
  offsets.push_back(signed_.size() - 1);
  for (size_t offset : offsets) {
    for (unsigned char mask : {0x01, 0x80}) {
      Status s = verify_(FlipByte(signed_, offset, mask), "model.so");
      EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << "byte " << offset << ": " << s.ToString();
      EXPECT_TRUE(testing::Contains(s.message(), "model.so: ")) << s.message();
    }
  }
}

TEST_F(ModelSignatureTest, EveryFlippedByteOfTheLibraryIsRefused) {
  // Exhaustive over a stride that visits every 61st byte, so every page and section is hit.
  for (size_t offset = 0; offset < library_.size(); offset += 61) {
    Status s = verify_(FlipByte(signed_, offset), "model.so");
    ASSERT_EQ(s.code(), StatusCode::kPermissionDenied) << "byte " << offset;
    ASSERT_TRUE(testing::Contains(s.message(), "the signature does not match the file")) << s.message();
  }
}

TEST_F(ModelSignatureTest, UnsignedLibraryIsRefused) {
  EXPECT_ERROR(verify_(library_, "model.so"), StatusCode::kPermissionDenied,
               "model.so: no sorun signature (the file ends without the 88-byte trailer");
  EXPECT_ERROR(verify_("", "empty.so"), StatusCode::kPermissionDenied, "empty.so: no sorun signature");
}

TEST_F(ModelSignatureTest, CutShortOrExtendedFilesAreRefused) {
  // The last byte gone: the magic no longer ends the file.
  EXPECT_ERROR(verify_(std::string_view(signed_).substr(0, signed_.size() - 1), "model.so"),
               StatusCode::kPermissionDenied, "model.so: no sorun signature");
  // Bytes cut from the middle or added before the trailer: the length field disagrees.
  std::string cut = signed_.substr(0, 100) + signed_.substr(200);
  EXPECT_ERROR(verify_(cut, "model.so"), StatusCode::kPermissionDenied,
               "model.so: the signature trailer covers " + std::to_string(library_.size()) + " bytes but " +
                   std::to_string(library_.size() - 100) + " precede it");
  std::string extended = "X" + signed_;
  EXPECT_ERROR(verify_(extended, "model.so"), StatusCode::kPermissionDenied, "precede it");
  // Only a trailer's tail: too short to hold one.
  EXPECT_ERROR(verify_(std::string(kSignatureMagic), "model.so"), StatusCode::kPermissionDenied,
               "model.so: truncated sorun signature trailer (the file has 16 bytes; the trailer alone has 88)");
}

TEST_F(ModelSignatureTest, AnotherKeysSignatureIsRefused) {
  KeyPairFiles other = testing::WriteEd25519KeyPair(dir_, "other");
  auto other_verifier = Ed25519Verifier(other.public_pem);
  ASSERT_TRUE(other_verifier.ok());
  EXPECT_ERROR((*other_verifier)(signed_, "model.so"), StatusCode::kPermissionDenied,
               "model.so: the signature does not match the file (altered, or signed with another key)");
  // A trailer copied from another signed file onto this one.
  auto signed_by_other = SignLibrary(library_, other.private_pem);
  ASSERT_TRUE(signed_by_other.ok());
  EXPECT_ERROR(verify_(*signed_by_other, "model.so"), StatusCode::kPermissionDenied, "does not match");
}

TEST_F(ModelSignatureTest, SigningTwiceIsRefused) {
  EXPECT_ERROR(SignLibrary(signed_, keys_.private_pem).status(), StatusCode::kFailedPrecondition,
               "already ends in a sorun signature trailer");
}

TEST_F(ModelSignatureTest, BadKeyFilesAreInvalidArgumentsNamingTheFile) {
  EXPECT_ERROR(Ed25519Verifier(dir_ + "/missing.pem").status(), StatusCode::kInvalidArgument,
               dir_ + "/missing.pem: cannot read the public key file");
  EXPECT_ERROR(Ed25519Verifier(dir_).status(), StatusCode::kInvalidArgument, dir_ + ": the public key file is not");
  const std::string junk = dir_ + "/junk.pem";
  testing::WriteFileOrDie(junk, "not a key\n");
  EXPECT_ERROR(Ed25519Verifier(junk).status(), StatusCode::kInvalidArgument,
               junk + ": cannot read an Ed25519 public key");
  EXPECT_ERROR(SignLibrary(library_, junk).status(), StatusCode::kInvalidArgument,
               junk + ": cannot read an Ed25519 private key");
  // The private key where the public one belongs, and the other way round.
  EXPECT_ERROR(Ed25519Verifier(keys_.private_pem).status(), StatusCode::kInvalidArgument,
               keys_.private_pem + ": this is a private key", "-pubout");
  EXPECT_ERROR(SignLibrary(library_, keys_.public_pem).status(), StatusCode::kInvalidArgument,
               keys_.public_pem + ": this is a public key");
  // Keys of other algorithms.
  for (const std::string algorithm : {"RSA", "EC"}) {
    KeyPairFiles other = testing::WriteOtherKeyPair(dir_, algorithm, algorithm);
    EXPECT_ERROR(Ed25519Verifier(other.public_pem).status(), StatusCode::kInvalidArgument,
                 other.public_pem + ": an " + algorithm + " key; sorun signatures use Ed25519 keys");
    EXPECT_ERROR(SignLibrary(library_, other.private_pem).status(), StatusCode::kInvalidArgument,
                 other.private_pem + ": an " + algorithm + " key");
  }
}

TEST_F(ModelSignatureTest, OneVerifierIsUsedFromManyThreads) {
  std::string altered = FlipByte(signed_, signed_.size() / 2);
  std::vector<std::thread> threads;
  std::vector<int> good(4, 0), refused(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        good[t] += verify_(signed_, "model.so").ok();
        refused[t] += verify_(altered, "model.so").code() == StatusCode::kPermissionDenied;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(good[t], 20);
    EXPECT_EQ(refused[t], 20);
  }
}

}  // namespace
}  // namespace security
}  // namespace sorun
