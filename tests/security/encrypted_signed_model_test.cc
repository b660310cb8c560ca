// Runs security/examples/encrypted_signed_model (docs/security.md's C++ example) on the zoo MLP packed
// signed and encrypted: it prints exactly what the plain model computes for the same input, and refuses
// (exit 1, PermissionDenied) the model signed by another key.
#include <gtest/gtest.h>

#include <cstdio>

#include "api/sorun.h"
#include "security/model_encryption.h"
#include "security/model_signature.h"
#include "tests/security/security_test_util.h"
#include "tests/util/host_build.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

struct ProgramResult {
  int exit_code = -1;
  std::string out;
};

ProgramResult RunExample(const std::string& model, const std::string& key, const std::string& pub) {
  const std::string command = testing::ShellCommandFor(testing::Runfile("security/examples/encrypted_signed_model")) +
                              " '" + model + "' '" + key + "' '" + pub + "' 2>&1";
  ProgramResult r;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// What the example prints, computed here from the plain file.
std::string PlainOutputText() {
  auto model = Model::Load(testing::Runfile("testdata/models/mlp.so"));
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return "";
  auto exec = model->NewExecutor();
  auto input = NDArray::Empty(model->inputs()[0].shape, model->inputs()[0].dtype);
  if (!exec.ok() || !input.ok()) return "";
  for (int64_t i = 0; i < input->num_elements(); ++i) input->data_as<float>()[i] = 0.01f * static_cast<float>(i % 100);
  auto out = exec->Run({{model->inputs()[0].name, &input->dl()}});
  if (!out.ok()) return "";
  std::string text;
  char line[64];
  for (int64_t i = 0; i < (*out)[0].num_elements(); ++i) {
    std::snprintf(line, sizeof(line), "%.9g\n", (*out)[0].data_as<float>()[i]);
    text += line;
  }
  return text;
}

TEST(EncryptedSignedModelExampleTest, PrintsThePlainModelsOutputsAndRefusesAnotherSigner) {
  const std::string dir = testing::MakeTempDir("sorun_example");
  const testing::KeyPairFiles keys = testing::WriteEd25519KeyPair(dir, "signer");
  const testing::KeyPairFiles other = testing::WriteEd25519KeyPair(dir, "other");
  const std::string aes = testing::WriteAesKeyHex(dir, "model");
  const std::string library = testing::ReadFileOrDie(testing::Runfile("testdata/models/mlp.so"));
  auto signed_library = security::SignLibrary(library, keys.private_pem);
  ASSERT_TRUE(signed_library.ok());
  auto stored = security::EncryptModel(*signed_library, aes);
  ASSERT_TRUE(stored.ok());
  testing::WriteFileOrDie(dir + "/model.sealed.so", *stored);

  ProgramResult ok = RunExample(dir + "/model.sealed.so", aes, keys.public_pem);
  ASSERT_EQ(ok.exit_code, 0) << ok.out;
  const std::string expected = PlainOutputText();
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(ok.out, expected);

  ProgramResult refused = RunExample(dir + "/model.sealed.so", aes, other.public_pem);
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_NE(refused.out.find("the signature does not match the file"), std::string::npos) << refused.out;
}

}  // namespace
}  // namespace sorun
