// `sorun pack --sign / --encrypt` and `run` / `bench` / `verify` / `inspect` with `--key` and
// `--public-key`, through the built binary: a protected model gives the same outputs as the plain one,
// and every refusal is one error line naming the file and the reason (docs/security.md, docs/cli.md).
#include <gtest/gtest.h>

#include "tests/security/security_test_util.h"
#include "tests/tools/cli_test_util.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using testing::CliResult;
using testing::Describe;
using testing::RunSorun;

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class CliSecurityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing::MakeTempDir("sorun_cli_security"));
    keys_ = new testing::KeyPairFiles(testing::WriteEd25519KeyPair(*dir_, "signer"));
    other_ = new testing::KeyPairFiles(testing::WriteEd25519KeyPair(*dir_, "other"));
    aes_ = new std::string(testing::WriteAesKeyHex(*dir_, "model"));
    wrong_aes_ = new std::string(testing::WriteAesKeyHex(*dir_, "wrong"));
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete keys_;
    delete other_;
    delete aes_;
    delete wrong_aes_;
  }
  static std::string Path(const std::string& name) { return *dir_ + "/" + name; }
  static std::string Mlp() { return testing::Runfile("testdata/models/mlp.so"); }
  static std::string Input() { return "data=" + testing::Runfile("testdata/models/mlp_input.npy"); }

  // `sorun run MODEL --input ... --output-dir DIR EXTRA...`; returns output_0.npy's bytes.
  static std::string RunOutput(const std::string& model, const std::string& out_dir,
                               const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"run", model, "--input", Input(), "--output-dir", Path(out_dir)};
    args.insert(args.end(), extra.begin(), extra.end());
    CliResult r = RunSorun(args);
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    return r.exit_code == 0 ? testing::ReadFileOrDie(Path(out_dir) + "/output_0.npy") : "";
  }

  static std::string* dir_;
  static testing::KeyPairFiles* keys_;
  static testing::KeyPairFiles* other_;
  static std::string* aes_;
  static std::string* wrong_aes_;
};

std::string* CliSecurityTest::dir_ = nullptr;
testing::KeyPairFiles* CliSecurityTest::keys_ = nullptr;
testing::KeyPairFiles* CliSecurityTest::other_ = nullptr;
std::string* CliSecurityTest::aes_ = nullptr;
std::string* CliSecurityTest::wrong_aes_ = nullptr;

TEST_F(CliSecurityTest, PackSignsAndEncryptsAPackedLibrary) {
  CliResult r = RunSorun({"pack", Mlp(), "-o", Path("signed.so"), "--sign", keys_->private_pem});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(Has(r.out, "wrote " + Path("signed.so"))) << r.out;
  EXPECT_TRUE(Has(r.out, "signed (Ed25519, " + keys_->private_pem + ")")) << r.out;
  const std::string plain = testing::ReadFileOrDie(Mlp());
  const std::string signed_bytes = testing::ReadFileOrDie(Path("signed.so"));
  EXPECT_EQ(signed_bytes.size(), plain.size() + 88);
  EXPECT_EQ(signed_bytes.substr(0, plain.size()), plain);

  r = RunSorun({"pack", Mlp(), "-o", Path("sealed.so"), "--sign", keys_->private_pem, "--encrypt", *aes_});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(Has(r.out, "then encrypted (AES-256-GCM)")) << r.out;
  EXPECT_EQ(testing::ReadFileOrDie(Path("sealed.so")).substr(0, 8), "SORUNENC");
}

TEST_F(CliSecurityTest, PackFromSourcesSignsTheFinishedLibrary) {
  testing::SmallModelFiles small = testing::WriteSmallModel(testing::MakeTempDir("sorun_cli_security_small"));
  CliResult r = RunSorun({"pack", "-o", Path("small_signed.so"), "--graph", small.graph, "--params", small.params,
                          "--lib", testing::NnKernelsSource(), "--sign", keys_->private_pem});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(Has(r.out, "protected")) << r.out;
  r = RunSorun({"verify", Path("small_signed.so"), "--public-key", keys_->public_pem});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(Has(r.out, "; signature matches " + keys_->public_pem + ")")) << r.out;
}

TEST_F(CliSecurityTest, ProtectedModelsRunWithTheSameOutputs) {
  ASSERT_EQ(RunSorun({"pack", Mlp(), "-o", Path("run_signed.so"), "--sign", keys_->private_pem}).exit_code, 0);
  ASSERT_EQ(RunSorun({"pack", Mlp(), "-o", Path("run_sealed.so"), "--sign", keys_->private_pem, "--encrypt", *aes_})
                .exit_code,
            0);
  ASSERT_EQ(RunSorun({"pack", Mlp(), "-o", Path("run_encrypted.so"), "--encrypt", *aes_}).exit_code, 0);
  const std::string expected = RunOutput(Mlp(), "out_plain");
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(RunOutput(Path("run_signed.so"), "out_signed", {"--public-key", keys_->public_pem}), expected);
  EXPECT_EQ(RunOutput(Path("run_signed.so"), "out_signed_unchecked"), expected);  // the trailer is ignored
  EXPECT_EQ(RunOutput(Path("run_sealed.so"), "out_sealed", {"--key", *aes_, "--public-key", keys_->public_pem}),
            expected);
  EXPECT_EQ(RunOutput(Path("run_encrypted.so"), "out_encrypted", {"--key", *aes_}), expected);
  CliResult r = RunSorun({"bench", Path("run_sealed.so"), "--key", *aes_, "--public-key", keys_->public_pem, "--repeat",
                          "2", "--warmup", "0"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
}

TEST_F(CliSecurityTest, RefusalsAreOneErrorLineNamingTheModel) {
  ASSERT_EQ(RunSorun({"pack", Mlp(), "-o", Path("ref_signed.so"), "--sign", keys_->private_pem}).exit_code, 0);
  ASSERT_EQ(RunSorun({"pack", Mlp(), "-o", Path("ref_sealed.so"), "--sign", keys_->private_pem, "--encrypt", *aes_})
                .exit_code,
            0);
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::string altered = Path("ref_altered.so");
  testing::WriteFileOrDie(altered, testing::FlipByte(testing::ReadFileOrDie(Path("ref_signed.so")), 1000));
  const std::vector<Case> cases = {
      {{"run", Mlp(), "--public-key", keys_->public_pem}, Mlp() + ": no sorun signature"},
      {{"run", Path("ref_signed.so"), "--public-key", other_->public_pem},
       Path("ref_signed.so") + ": the signature does not match the file (altered, or signed with another key)"},
      {{"run", altered, "--public-key", keys_->public_pem}, altered + ": the signature does not match the file"},
      {{"run", Path("ref_sealed.so"), "--key", *wrong_aes_},
       Path("ref_sealed.so") + ": decryption failed: wrong key or the file was altered"},
      {{"run", Mlp(), "--key", *aes_}, Mlp() + ": not an encrypted sorun model"},
      {{"bench", Path("ref_signed.so"), "--public-key", other_->public_pem}, "the signature does not match"},
      {{"verify", Mlp(), "--public-key", keys_->public_pem}, Mlp() + ": no sorun signature"},
      {{"verify", Path("ref_sealed.so"), "--key", *wrong_aes_}, "decryption failed: wrong key"},
      {{"inspect", altered, "--public-key", keys_->public_pem}, "the signature does not match"},
      {{"run", Mlp(), "--public-key", keys_->private_pem}, keys_->private_pem + ": this is a private key"},
      {{"run", Mlp(), "--key", Path("missing.key")}, Path("missing.key") + ": cannot read the model key file"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    if (args[0] == "run") args.insert(args.end(), {"--input", Input(), "--output-dir", Path("refused")});
    CliResult r = RunSorun(args);
    EXPECT_EQ(r.exit_code, 1) << Describe(r);
    EXPECT_TRUE(testing::IsOneErrorLine(r)) << Describe(r);
    EXPECT_TRUE(Has(r.err, c.message)) << "expected '" << c.message << "' in " << Describe(r);
  }
  EXPECT_FALSE(testing::FileExists(Path("refused") + "/output_0.npy"));
}

TEST_F(CliSecurityTest, ReadingCommandsDecryptInMemory) {
  ASSERT_EQ(RunSorun({"pack", Mlp(), "-o", Path("read_sealed.so"), "--sign", keys_->private_pem, "--encrypt", *aes_})
                .exit_code,
            0);
  CliResult r = RunSorun({"verify", Path("read_sealed.so"), "--key", *aes_, "--public-key", keys_->public_pem});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(Has(r.out, Path("read_sealed.so") + ": OK (blob ")) << r.out;
  EXPECT_TRUE(Has(r.out, "signature matches")) << r.out;
  r = RunSorun({"inspect", Path("read_sealed.so"), "--key", *aes_});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(Has(r.out, Path("read_sealed.so") + ": packed model")) << r.out;
  EXPECT_FALSE(Has(r.out, "/proc/self/fd")) << r.out;
  // Without the key the stored bytes are not a library.
  r = RunSorun({"verify", Path("read_sealed.so")});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
}

TEST_F(CliSecurityTest, PackUsageErrors) {
  CliResult r = RunSorun({"pack", Mlp(), "-o", Path("x.so"), "--sign", Path("nope.pem")});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_TRUE(Has(r.err, "--sign: " + Path("nope.pem") + ": cannot read the private key file")) << r.err;
  r = RunSorun({"pack", Mlp(), "-o", Path("x.so"), "--sign", keys_->public_pem});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_TRUE(Has(r.err, "this is a public key")) << r.err;
  r = RunSorun({"pack", Mlp(), "-o", Path("x.so"), "--encrypt", keys_->public_pem});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_TRUE(Has(r.err, "--encrypt: " + keys_->public_pem + ":")) << r.err;
  r = RunSorun({"pack", "-o", Path("x.tar"), "--lib", testing::NnKernelsSource(), "--sign", keys_->private_pem});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_TRUE(Has(r.err, "--sign and --encrypt apply to a .so library")) << r.err;
  r = RunSorun({"run", Mlp(), "--key="});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_FALSE(testing::FileExists(Path("x.so")));
}

}  // namespace
}  // namespace sorun
