// End to end with the real loader: the zoo MLP signed (and encrypted) loads through Model::Load and
// Model::LoadFromMemory with //security's hooks and gives bit-identical outputs to the plain file; a
// signed file also loads without a verifier (the trailer lies past everything the ELF headers map, so
// sorun's ELF preflight and dlopen ignore it); refusals carry PermissionDenied and name the model.
#include <gtest/gtest.h>

#include <cstring>

#include "api/sorun.h"
#include "security/model_encryption.h"
#include "security/model_signature.h"
#include "tests/security/security_test_util.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

// The model's first output for a fixed input, as bytes.
std::string OutputBytes(const Model& model) {
  auto exec = model.NewExecutor();
  EXPECT_TRUE(exec.ok()) << exec.status().ToString();
  if (!exec.ok()) return "";
  const TensorInfo& in = model.inputs()[0];
  auto input = NDArray::Empty(in.shape, in.dtype);
  EXPECT_TRUE(input.ok());
  if (!input.ok()) return "";
  for (int64_t i = 0; i < input->num_elements(); ++i)
    input->data_as<float>()[i] = 0.03f * static_cast<float>(i % 37) - 0.5f;
  auto out = exec->Run({{in.name, &input->dl()}});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return "";
  const NDArray& y = (*out)[0];
  return std::string(y.data_as<char>(), static_cast<size_t>(y.num_elements()) * 4);
}

class SignedLoadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("sorun_signed_load");
    keys_ = testing::WriteEd25519KeyPair(dir_, "signer");
    aes_ = testing::WriteAesKeyHex(dir_, "model");
    plain_path_ = testing::Runfile("testdata/models/mlp.so");
    library_ = testing::ReadFileOrDie(plain_path_);
    auto signed_library = security::SignLibrary(library_, keys_.private_pem);
    ASSERT_TRUE(signed_library.ok());
    signed_ = *signed_library;
    signed_path_ = dir_ + "/mlp.signed.so";
    testing::WriteFileOrDie(signed_path_, signed_);
    auto verifier = security::Ed25519Verifier(keys_.public_pem);
    auto decrypt = security::AesGcmDecryptor(aes_);
    ASSERT_TRUE(verifier.ok() && decrypt.ok());
    verify_ = *verifier;
    decrypt_ = *decrypt;
    auto plain = Model::Load(plain_path_);
    ASSERT_TRUE(plain.ok()) << plain.status().ToString();
    expected_ = OutputBytes(*plain);
    ASSERT_FALSE(expected_.empty());
  }

  std::string dir_, aes_, plain_path_, library_, signed_, signed_path_, expected_;
  testing::KeyPairFiles keys_;
  LibraryVerifier verify_;
  DecryptHook decrypt_;
};

TEST_F(SignedLoadTest, SignedFileLoadsWithoutAVerifierTooTheTrailerIsIgnored) {
  auto model = Model::Load(signed_path_);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(OutputBytes(*model), expected_);
}

TEST_F(SignedLoadTest, SignedFileWithTheVerifierGivesBitIdenticalOutputs) {
  RuntimeOptions options;
  options.verify_library = verify_;
  options.verify_checksum = true;
  auto model = Model::Load(signed_path_, options);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(OutputBytes(*model), expected_);
  auto from_memory = Model::LoadFromMemory(signed_, options, "mlp.signed.so");
  ASSERT_TRUE(from_memory.ok()) << from_memory.status().ToString();
  EXPECT_EQ(OutputBytes(*from_memory), expected_);
}

TEST_F(SignedLoadTest, EncryptedSignedFileGivesBitIdenticalOutputs) {
  auto stored = security::EncryptModel(signed_, aes_);
  ASSERT_TRUE(stored.ok());
  const std::string path = dir_ + "/mlp.sealed.so";
  testing::WriteFileOrDie(path, *stored);
  RuntimeOptions options;
  options.decrypt = decrypt_;
  options.verify_library = verify_;
  auto model = Model::Load(path, options);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(OutputBytes(*model), expected_);
  auto from_memory = Model::LoadFromMemory(*stored, options, "mlp.sealed.so");
  ASSERT_TRUE(from_memory.ok()) << from_memory.status().ToString();
  EXPECT_EQ(OutputBytes(*from_memory), expected_);
}

TEST_F(SignedLoadTest, RefusalsArePermissionDeniedNamingTheModel) {
  RuntimeOptions options;
  options.verify_library = verify_;
  EXPECT_ERROR(Model::Load(plain_path_, options).status(), StatusCode::kPermissionDenied, plain_path_,
               "no sorun signature");
  const std::string altered = dir_ + "/altered.so";
  testing::WriteFileOrDie(altered, testing::FlipByte(signed_, signed_.size() / 2));
  EXPECT_ERROR(Model::Load(altered, options).status(), StatusCode::kPermissionDenied, altered,
               "the signature does not match the file");
  auto stored = security::EncryptModel(signed_, aes_);
  ASSERT_TRUE(stored.ok());
  RuntimeOptions wrong;
  auto wrong_key = security::AesGcmDecryptor(testing::WriteAesKeyHex(dir_, "wrong"));
  ASSERT_TRUE(wrong_key.ok());
  wrong.decrypt = *wrong_key;
  EXPECT_ERROR(Model::LoadFromMemory(*stored, wrong, "sealed.so").status(), StatusCode::kPermissionDenied, "sealed.so",
               "decryption failed: wrong key or the file was altered");
  // A plain file given to the decrypt hook.
  RuntimeOptions decrypting;
  decrypting.decrypt = decrypt_;
  EXPECT_ERROR(Model::Load(plain_path_, decrypting).status(), StatusCode::kDataLoss, "not an encrypted sorun model");
}

}  // namespace
}  // namespace sorun
