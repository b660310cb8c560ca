// `sorun verify` through the built binary: a good library, a corrupted blob byte, libraries without
// an integrity record (packed with --no-checksum, plain kernel libraries).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "inspect/elf_reader.h"
#include "runtime/registry_keys.h"
#include "tests/tools/cli_test_util.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using testing::CliResult;
using testing::Describe;
using testing::IsOneErrorLine;
using testing::RunSorun;

class CliVerifyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing::MakeTempDir("cli_verify"));
    files_ = new testing::SmallModelFiles(testing::WriteSmallModel(*dir_));
    for (bool checksum : {true, false}) {
      std::vector<std::string> args = {"pack",         "-o",          Path(checksum ? "model.so" : "nock.so"),
                                       "--graph",      files_->graph, "--params",
                                       files_->params, "--lib",       testing::NnKernelsSource()};
      if (!checksum) args.push_back("--no-checksum");
      CliResult r = RunSorun(args);
      ASSERT_EQ(r.exit_code, 0) << Describe(r);
    }
  }
  static void TearDownTestSuite() {
    delete files_;
    delete dir_;
  }
  static std::string Path(const std::string& name) { return *dir_ + "/" + name; }

  static std::string* dir_;
  static testing::SmallModelFiles* files_;
};

std::string* CliVerifyTest::dir_ = nullptr;
testing::SmallModelFiles* CliVerifyTest::files_ = nullptr;

TEST_F(CliVerifyTest, GoodLibrary) {
  CliResult r = RunSorun({"verify", Path("model.so")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "");
  auto image = ElfImage::ReadFile(Path("model.so"));
  ASSERT_TRUE(image.ok());
  auto blob = image->FindSymbolData(keys::kSymbolDevMblob);
  ASSERT_TRUE(blob.ok());
  // "<path>: OK (blob N bytes, xxh64 <16 hex digits>; devices needed: cpu)\n"
  const std::string prefix = Path("model.so") + ": OK (blob ";
  ASSERT_EQ(r.out.rfind(prefix, 0), 0u) << r.out;
  unsigned long long n = 0;
  char hash[17] = {0};
  int tail = 0;
  ASSERT_EQ(std::sscanf(r.out.c_str() + prefix.size(), "%llu bytes, xxh64 %16[0-9a-f]%n", &n, hash, &tail), 2) << r.out;
  EXPECT_EQ(r.out.substr(prefix.size() + static_cast<size_t>(tail)), "; devices needed: cpu)\n");
  EXPECT_EQ(std::string(hash).size(), 16u);
  EXPECT_EQ(r.out.back(), '\n');
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1);
  EXPECT_EQ(n, blob->size);
}

TEST_F(CliVerifyTest, EveryCorruptedBlobByteIsCaught) {
  std::string bytes = testing::ReadFileOrDie(Path("model.so"));
  auto image = ElfImage::ReadFile(Path("model.so"));
  ASSERT_TRUE(image.ok());
  auto blob = image->FindSymbolData(keys::kSymbolDevMblob);
  ASSERT_TRUE(blob.ok());
  // A few positions: the length prefix, the type key, the graph JSON, a parameter, the last byte.
  for (uint64_t offset : {uint64_t{3}, uint64_t{20}, blob->size / 2, blob->size - 40, blob->size - 1}) {
    std::string corrupt = bytes;
    corrupt[blob->file_offset + offset] ^= 0x20;
    testing::WriteFileOrDie(Path("corrupt.so"), corrupt);
    CliResult r = RunSorun({"verify", Path("corrupt.so")});
    EXPECT_EQ(r.exit_code, 1) << "offset " << offset << "\n" << Describe(r);
    EXPECT_TRUE(IsOneErrorLine(r)) << Describe(r);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("corrupt.so"), std::string::npos) << r.err;
    const bool names_cause =
        r.err.find("checksum mismatch") != std::string::npos || r.err.find("length prefix") != std::string::npos;
    EXPECT_TRUE(names_cause) << "offset " << offset << ": " << r.err;
  }
}

TEST_F(CliVerifyTest, LibrariesWithoutARecord) {
  CliResult r = RunSorun({"verify", Path("nock.so")});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(IsOneErrorLine(r)) << Describe(r);
  EXPECT_NE(r.err.find("no integrity record"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("TVM"), std::string::npos) << r.err;
  // It still inspects and runs.
  EXPECT_EQ(RunSorun({"inspect", Path("nock.so")}).exit_code, 0);
  EXPECT_EQ(RunSorun({"run", Path("nock.so"), "--input", "data=" + files_->input, "--output-dir", Path("o")}).exit_code,
            0);
  r = RunSorun({"verify", testing::Runfile("testdata/kernels/libnn_kernels.so")});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(IsOneErrorLine(r)) << Describe(r);
  EXPECT_NE(r.err.find("no __tvm_dev_mblob"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sorun
