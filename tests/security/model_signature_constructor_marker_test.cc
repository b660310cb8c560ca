// The proof that a refused library runs nothing: marker_mlp.so (the zoo MLP packed with a constructor
// that writes the file named by CONSTRUCTOR_MARKER_FILE) is refused with Ed25519Verifier when unsigned,
// signed by another key, or with one byte changed anywhere (ELF header, code, blob, trailer), from a
// file and from memory, encrypted or not, and the marker never appears; signed correctly, it loads,
// runs, and the marker DOES appear (the test can fail).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <vector>

#include "api/sorun.h"
#include "security/model_encryption.h"
#include "security/model_signature.h"
#include "tests/security/security_test_util.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

class ConstructorMarkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("sorun_marker");
    keys_ = testing::WriteEd25519KeyPair(dir_, "signer");
    library_ = testing::ReadFileOrDie(testing::Runfile("tests/security/marker_mlp.so"));
    auto signed_library = security::SignLibrary(library_, keys_.private_pem);
    ASSERT_TRUE(signed_library.ok()) << signed_library.status().ToString();
    signed_ = *signed_library;
    auto verifier = security::Ed25519Verifier(keys_.public_pem);
    ASSERT_TRUE(verifier.ok());
    options_.verify_library = *verifier;
  }

  // A fresh marker path for the next load (the constructor reads the variable when it runs).
  std::string NewMarker() {
    marker_ = dir_ + "/marker_" + std::to_string(count_++);
    ::setenv("CONSTRUCTOR_MARKER_FILE", marker_.c_str(), 1);
    return marker_;
  }

  // Loads `bytes` from a file and from memory with `options`; each must be refused and leave no marker.
  void ExpectRefusedWithoutRunning(const std::string& bytes, const RuntimeOptions& options, const std::string& what) {
    const std::string path = dir_ + "/candidate_" + std::to_string(count_) + ".so";
    testing::WriteFileOrDie(path, bytes);
    const std::string from_file_marker = NewMarker();
    auto from_file = Model::Load(path, options);
    EXPECT_FALSE(from_file.ok()) << what << ": loaded from a file";
    // PermissionDenied from the verifier, or DataLoss from sorun's ELF preflight, which reads the bytes
    // first (no code runs either way).
    if (!from_file.ok()) {
      const StatusCode code = from_file.status().code();
      EXPECT_TRUE(code == StatusCode::kPermissionDenied || code == StatusCode::kDataLoss)
          << what << ": " << from_file.status().ToString();
    }
    EXPECT_FALSE(testing::FileExists(from_file_marker)) << what << ": the constructor ran (file)";
    const std::string from_memory_marker = NewMarker();
    auto from_memory = Model::LoadFromMemory(bytes, options, "candidate.so");
    EXPECT_FALSE(from_memory.ok()) << what << ": loaded from memory";
    EXPECT_FALSE(testing::FileExists(from_memory_marker)) << what << ": the constructor ran (memory)";
  }

  std::string dir_;
  testing::KeyPairFiles keys_;
  std::string library_;
  std::string signed_;
  RuntimeOptions options_;
  std::string marker_;
  int count_ = 0;
};

TEST_F(ConstructorMarkerTest, TheMarkerLibraryRunsItsConstructorWhenLoaded) {
  // The control: without a verifier the unsigned library loads and the constructor writes the marker.
  const std::string path = dir_ + "/plain.so";
  testing::WriteFileOrDie(path, library_);
  const std::string marker = NewMarker();
  auto model = Model::Load(path);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_TRUE(testing::FileExists(marker));
}

TEST_F(ConstructorMarkerTest, UnsignedIsRefusedAndNothingRuns) {
  ExpectRefusedWithoutRunning(library_, options_, "unsigned");
}

TEST_F(ConstructorMarkerTest, SignedByAnotherKeyIsRefusedAndNothingRuns) {
  testing::KeyPairFiles other = testing::WriteEd25519KeyPair(dir_, "other");
  auto other_signed = security::SignLibrary(library_, other.private_pem);
  ASSERT_TRUE(other_signed.ok());
  ExpectRefusedWithoutRunning(*other_signed, options_, "another key");
}

TEST_F(ConstructorMarkerTest, OneChangedByteAnywhereIsRefusedAndNothingRuns) {
  std::vector<size_t> offsets = {0,
                                 5,
                                 24,
                                 100,
                                 library_.size() / 4,
                                 library_.size() / 2,
                                 library_.size() * 3 / 4,
                                 library_.size() - 1,
                                 library_.size(),
                                 library_.size() + 63,
                                 library_.size() + 64,
                                 library_.size() + 72,
                                 signed_.size() - 1};
  for (size_t offset : offsets) {
    ExpectRefusedWithoutRunning(testing::FlipByte(signed_, offset), options_, "byte " + std::to_string(offset));
  }
}

TEST_F(ConstructorMarkerTest, SignedCorrectlyLoadsRunsAndTheConstructorRan) {
  const std::string path = dir_ + "/signed.so";
  testing::WriteFileOrDie(path, signed_);
  const std::string marker = NewMarker();
  auto model = Model::Load(path, options_);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_TRUE(testing::FileExists(marker)) << "the signed library's constructor did not run";
  auto exec = model->NewExecutor();
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  auto input = NDArray::Empty(model->inputs()[0].shape, model->inputs()[0].dtype);
  ASSERT_TRUE(input.ok());
  for (int64_t i = 0; i < input->num_elements(); ++i) input->data_as<float>()[i] = 0.5f;
  auto out = exec->Run({{model->inputs()[0].name, &input->dl()}});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
}

TEST_F(ConstructorMarkerTest, EncryptedAndSignedWithTheWrongKeyOrAlteredRunsNothing) {
  const std::string aes = testing::WriteAesKeyHex(dir_, "model");
  auto stored = security::EncryptModel(signed_, aes);
  ASSERT_TRUE(stored.ok());
  RuntimeOptions options = options_;
  auto decrypt = security::AesGcmDecryptor(aes);
  ASSERT_TRUE(decrypt.ok());
  options.decrypt = *decrypt;
  ExpectRefusedWithoutRunning(testing::FlipByte(*stored, stored->size() / 2), options, "altered ciphertext");
  auto wrong = security::AesGcmDecryptor(testing::WriteAesKeyHex(dir_, "wrong"));
  ASSERT_TRUE(wrong.ok());
  RuntimeOptions wrong_options = options_;
  wrong_options.decrypt = *wrong;
  ExpectRefusedWithoutRunning(*stored, wrong_options, "wrong model key");
  // Encrypted but unsigned: decrypts, then the verifier refuses.
  auto unsigned_stored = security::EncryptModel(library_, aes);
  ASSERT_TRUE(unsigned_stored.ok());
  ExpectRefusedWithoutRunning(*unsigned_stored, options, "encrypted, unsigned");
  // And the good one loads and its constructor runs.
  const std::string marker = NewMarker();
  auto model = Model::LoadFromMemory(*stored, options, "sealed.so");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_TRUE(testing::FileExists(marker));
}

}  // namespace
}  // namespace sorun
