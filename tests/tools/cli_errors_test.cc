// The `sorun` binary's conventions: help and version on stdout with exit 0, and the bad-argument
// catalogue: every mistake gives exit 2 (usage) or 1 (model / inputs) and exactly one stderr line
// "sorun: error: ..." naming the file and the cause.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <utility>

#include "tests/tools/cli_test_util.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using testing::CliResult;
using testing::Describe;
using testing::IsOneErrorLine;
using testing::RunSorun;

// One small packed model for the whole suite.
class CliErrorsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing::MakeTempDir("cli_errors"));
    files_ = new testing::SmallModelFiles(testing::WriteSmallModel(*dir_));
    CliResult r = RunSorun({"pack", "-o", *dir_ + "/model.so", "--graph", files_->graph, "--params", files_->params,
                            "--lib", testing::NnKernelsSource()});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
  }
  static void TearDownTestSuite() {
    delete files_;
    delete dir_;
  }
  static std::string Model() { return *dir_ + "/model.so"; }
  static std::string Path(const std::string& name) { return *dir_ + "/" + name; }

  // Expects exit `code`, nothing on stdout, and one "sorun: error:" line containing every `parts`.
  static void ExpectError(const std::vector<std::string>& args, int code, const std::vector<std::string>& parts) {
    CliResult r = RunSorun(args);
    EXPECT_EQ(r.exit_code, code) << Describe(r);
    EXPECT_TRUE(IsOneErrorLine(r)) << Describe(r);
    EXPECT_EQ(r.out, "") << Describe(r);
    for (const std::string& p : parts)
      EXPECT_NE(r.err.find(p), std::string::npos) << "missing '" << p << "'\n" << Describe(r);
  }

  static std::string* dir_;
  static testing::SmallModelFiles* files_;
};

std::string* CliErrorsTest::dir_ = nullptr;
testing::SmallModelFiles* CliErrorsTest::files_ = nullptr;

TEST_F(CliErrorsTest, HelpIsOnStdoutWithExitZero) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{{"--help"}, {"-h"}, {"help"}}) {
    CliResult r = RunSorun(args);
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    EXPECT_EQ(r.err, "");
    EXPECT_NE(r.out.find("Usage: sorun <command>"), std::string::npos) << r.out;
    for (const char* c : {"inspect", "run", "bench", "pack", "verify"})
      EXPECT_NE(r.out.find(c), std::string::npos) << c;
  }
  for (const char* c : {"inspect", "run", "bench", "pack", "verify"}) {
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{c, "--help"}, {c, "-h"}, {"help", c}, {c, Model(), "--help"}}) {
      CliResult r = RunSorun(args);
      EXPECT_EQ(r.exit_code, 0) << Describe(r);
      EXPECT_EQ(r.err, "");
      EXPECT_NE(r.out.find(std::string("Usage: sorun ") + c), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("--help"), std::string::npos) << r.out;
    }
  }
}

TEST_F(CliErrorsTest, VersionLine) {
  CliResult r = RunSorun({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("sorun ", 0), 0u) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

TEST_F(CliErrorsTest, UsageErrorsExitTwo) {
  ExpectError({}, 2, {"no command"});
  ExpectError({"frobnicate"}, 2, {"unknown command 'frobnicate'"});
  ExpectError({"help", "frobnicate"}, 2, {"unknown command 'frobnicate'"});
  ExpectError({"--bogus"}, 2, {"--bogus"});
  ExpectError({"inspect", Model(), "--bogus"}, 2, {"unknown flag '--bogus'"});
  ExpectError({"run", Model(), "--bogus=1"}, 2, {"unknown flag '--bogus'"});
  ExpectError({"inspect"}, 2, {"missing MODEL"});
  ExpectError({"run"}, 2, {"missing MODEL"});
  ExpectError({"bench"}, 2, {"missing MODEL"});
  ExpectError({"verify"}, 2, {"missing MODEL"});
  ExpectError({"inspect", Model(), Model()}, 2, {"unexpected argument"});
  ExpectError({"run", Model(), "--device", "tpu"}, 2, {"--device", "tpu"});
  ExpectError({"bench", Model(), "--device", "opencl:x"}, 2, {"--device", "opencl:x"});
  ExpectError({"run", Model(), "--device"}, 2, {"--device needs a value"});
  ExpectError({"bench", Model(), "--repeat", "abc"}, 2, {"--repeat", "'abc' is not an integer"});
  ExpectError({"bench", Model(), "--repeat", "-1"}, 2, {"--repeat", "-1"});
  ExpectError({"bench", Model(), "--repeat", "0"}, 2, {"--repeat", "0"});
  ExpectError({"bench", Model(), "--warmup", "1.5"}, 2, {"--warmup", "'1.5'"});
  ExpectError({"bench", Model(), "--json=yes"}, 2, {"--json takes no value"});
  ExpectError({"run", Model(), "--input", "data"}, 2, {"--input 'data'", "NAME=FILE.npy"});
  ExpectError({"run", Model(), "--input", "=x.npy"}, 2, {"empty input name"});
  ExpectError({"run", Model(), "--input", "data=a.npy", "--input", "data=b.npy"}, 2, {"'data' given more than once"});
  ExpectError({"run", Model(), "--params", files_->params}, 2, {"--params needs --graph"});
  ExpectError({"run", Model(), "--device", "cpu", "--device", "cpu"}, 2, {"--device given more than once"});
  ExpectError({"pack", "--lib", testing::NnKernelsSource()}, 2, {"missing -o"});
  ExpectError({"pack", "-o", Path("x.so")}, 2, {"missing --lib"});
  ExpectError({"pack", "-o", Path("x.so"), "--lib", "kernels.txt"}, 2, {"kernels.txt", "unknown kind"});
  ExpectError({"pack", "-o", Path("x.so"), "--lib", testing::NnKernelsSource(), "--params", files_->params}, 2,
              {"--params needs --graph"});
  ExpectError({"pack", "-o", Path("x.so"), "--lib", testing::NnKernelsSource(), "--cuda", Path("k.txt")}, 2,
              {"k.txt", "unknown CUDA code format"});
  ExpectError({"pack", "-o", Path("x.so"), "--lib", testing::NnKernelsSource(), "--opencl", Path("a.cl"), "--opencl",
               Path("b.cl"), "--opencl-fmap", Path("a.json")},
              2, {"2 --opencl file(s) but 1 --opencl-fmap"});
}

TEST_F(CliErrorsTest, InputErrorsExitOne) {
  // Missing .npy file.
  ExpectError({"run", Model(), "--input", "data=" + Path("missing.npy")}, 1, {"missing.npy"});
  // Shape mismatch names both shapes.
  testing::WriteFloatNpy(Path("small.npy"), {1, 4}, {0, 0, 0, 0});
  ExpectError({"run", Model(), "--input", "data=" + Path("small.npy")}, 1,
              {"small.npy", "float32[1, 4]", "'data'", "float32[1, 8]"});
  // Fortran-order file.
  {
    std::string header = "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 8), }";
    header += std::string(63 - (10 + header.size()) % 64, ' ') + "\n";
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
    bytes += static_cast<char>(header.size() & 0xff);
    bytes += static_cast<char>(header.size() >> 8);
    bytes += header + std::string(32, '\0');
    testing::WriteFileOrDie(Path("fortran.npy"), bytes);
  }
  ExpectError({"run", Model(), "--input", "data=" + Path("fortran.npy")}, 1, {"fortran.npy", "fortran"});
  // Not an .npy at all.
  testing::WriteFileOrDie(Path("garbage.npy"), "this is not numpy");
  ExpectError({"run", Model(), "--input", "data=" + Path("garbage.npy")}, 1, {"garbage.npy"});
  // An input name the graph does not have: the message lists the inputs.
  ExpectError({"run", Model(), "--input", "image=" + files_->input}, 1,
              {"no input named 'image'", "data float32[1, 8]"});
  // A required input without --input.
  ExpectError({"run", Model()}, 1, {"data", "float32[1, 8]", "--input data="});
}

TEST_F(CliErrorsTest, BadModelFilesExitOne) {
  // Missing file.
  for (const char* cmd : {"inspect", "run", "bench", "verify"}) {
    ExpectError({cmd, Path("nope.so")}, 1, {"nope.so", "No such file"});
  }
  // A directory.
  for (const char* cmd : {"inspect", "run", "bench", "verify"}) {
    ExpectError({cmd, *dir_}, 1, {*dir_, "directory"});
  }
  // Not an ELF file.
  testing::WriteFileOrDie(Path("text.so"), "hello, I am not a library\n");
  for (const char* cmd : {"inspect", "run", "bench", "verify"}) {
    ExpectError({cmd, Path("text.so")}, 1, {"text.so", "not an ELF file"});
  }
  // A truncated library: an error, never a crash in dlopen(). (Cutting only the section headers at
  // the end leaves a library dlopen can load, so `run` only refuses the first two cuts.)
  std::string bytes = testing::ReadFileOrDie(Model());
  for (size_t cut : {size_t{100}, bytes.size() / 3, bytes.size() - 100}) {
    testing::WriteFileOrDie(Path("truncated.so"), bytes.substr(0, cut));
    for (const char* cmd : {"inspect", "run", "verify"}) {
      if (std::string(cmd) == "run" && cut == bytes.size() - 100) continue;
      std::vector<std::string> args = {cmd, Path("truncated.so")};
      if (std::string(cmd) == "run") args.insert(args.end(), {"--input", "data=" + files_->input});
      ExpectError(args, 1, {"truncated.so"});
    }
  }
  // A corrupted blob byte: the loader's checksum check (run) and verify report it.
  std::string corrupt = bytes;
  size_t at = corrupt.find("\"sorun_dense_bias_relu\"");  // inside the graph JSON of the blob
  ASSERT_NE(at, std::string::npos);
  corrupt[at + 1] = 'X';
  testing::WriteFileOrDie(Path("corrupt.so"), corrupt);
  ExpectError({"run", Path("corrupt.so"), "--input", "data=" + files_->input}, 1, {"corrupt.so", "checksum mismatch"});
  ExpectError({"verify", Path("corrupt.so")}, 1, {"corrupt.so", "checksum mismatch"});
}

TEST_F(CliErrorsTest, KernelFailureExitsOne) {
  // A graph whose operator is the always-failing kernel.
  std::string graph = testing::ReadFileOrDie(files_->graph);
  size_t at = graph.find("sorun_softmax");
  ASSERT_NE(at, std::string::npos);
  graph.replace(at, std::string("sorun_softmax").size(), "sorun_fail");
  testing::WriteFileOrDie(Path("fail.json"), graph);
  CliResult packed = RunSorun({"pack", "-o", Path("fail.so"), "--graph", Path("fail.json"), "--params", files_->params,
                               "--lib", testing::NnKernelsSource()});
  ASSERT_EQ(packed.exit_code, 0) << Describe(packed);
  ExpectError({"run", Path("fail.so"), "--input", "data=" + files_->input}, 1, {"this kernel always fails"});
  ExpectError({"bench", Path("fail.so")}, 1, {"this kernel always fails"});
}

TEST_F(CliErrorsTest, AbsentDeviceExitsOne) {
  // CUDA is absent here (no driver); on a GPU machine cuda:1023 is.
  ExpectError({"run", Model(), "--device", "cuda:1023", "--input", "data=" + files_->input}, 1, {"cuda"});
}

// Issue 13 class 7: `pack -o` and `run --output-dir` never replace or write into what is not a
// regular file (a FIFO would hang `run`; a device node would be replaced by `pack` as root).
TEST_F(CliErrorsTest, OutputsThatAreNotRegularFilesAreRefusedBeforeAnyWork) {
  ASSERT_EQ(::mkfifo(Path("fifo.so").c_str(), 0644), 0);
  ASSERT_EQ(::mkdir(Path("dir.so").c_str(), 0755), 0);
  ASSERT_EQ(::symlink(Model().c_str(), Path("link.so").c_str()), 0);
  const std::vector<std::pair<std::string, std::string>> outs = {{"fifo.so", "exists and is a FIFO"},
                                                                 {"dir.so", "exists and is a directory"},
                                                                 {"link.so", "exists and is a symbolic link"},
                                                                 {"fifo.so", "will not replace it"}};
  for (const auto& [name, what] : outs) {
    ExpectError({"pack", "-o", Path(name), "--graph", files_->graph, "--params", files_->params, "--lib",
                 testing::NnKernelsSource()},
                1, {"output " + Path(name), what});
  }
  struct stat st;
  ASSERT_EQ(::lstat(Path("fifo.so").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
  ASSERT_EQ(::lstat(Path("link.so").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link was replaced";

  // run: an output file that is a FIFO (writing would block forever) or a link; an output "directory"
  // that is a file. Refused before the model runs, with nothing on stdout.
  ASSERT_EQ(::mkdir(Path("out_fifo").c_str(), 0755), 0);
  ASSERT_EQ(::mkfifo(Path("out_fifo/output_0.npy").c_str(), 0644), 0);
  ExpectError({"run", Model(), "--input", "data=" + files_->input, "--output-dir", Path("out_fifo")}, 1,
              {"output file " + Path("out_fifo/output_0.npy") + " exists and is a FIFO"});
  ASSERT_EQ(::mkdir(Path("out_link").c_str(), 0755), 0);
  ASSERT_EQ(::symlink("/dev/null", Path("out_link/output_0.npy").c_str()), 0);
  ExpectError({"run", Model(), "--input", "data=" + files_->input, "--output-dir", Path("out_link")}, 1,
              {"output_0.npy exists and is a symbolic link"});
  ExpectError({"run", Model(), "--input", "data=" + files_->input, "--output-dir", files_->input}, 1,
              {"output directory " + files_->input + " exists and is a file, not a directory"});
  // A regular file is replaced as before.
  ASSERT_EQ(::mkdir(Path("out_ok").c_str(), 0755), 0);
  testing::WriteFileOrDie(Path("out_ok/output_0.npy"), "old contents");
  CliResult ok = RunSorun({"run", Model(), "--input", "data=" + files_->input, "--output-dir", Path("out_ok")});
  EXPECT_EQ(ok.exit_code, 0) << Describe(ok);
  EXPECT_EQ(testing::ReadFileOrDie(Path("out_ok/output_0.npy")).rfind("\x93NUMPY", 0), 0u);
}

// Issue 13 class 8: every SORUN_* variable is strict, and a bad one is an error before any work.
TEST_F(CliErrorsTest, MalformedEnvironmentVariablesAreErrors) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"SORUN_NUM_THREADS", "abc"}, {"SORUN_NUM_THREADS", "0"},
      {"SORUN_NUM_THREADS", "4x"},  {"SORUN_NUM_THREADS", "99999999999999999999"},
      {"SORUN_SPIN_US", "-1"},      {"SORUN_VERIFY_CHECKSUM", "yes"}};
  for (const auto& [var, value] : bad) {
    for (const char* cmd : {"run", "bench"}) {
      std::vector<std::string> args = {cmd, Model(), "--input", "data=" + files_->input};
      if (std::string(cmd) == "bench") args.insert(args.end(), {"--repeat", "1", "--warmup", "0"});
      CliResult r = RunSorun(args, {{var, value}});
      EXPECT_EQ(r.exit_code, 1) << Describe(r);
      EXPECT_TRUE(IsOneErrorLine(r)) << Describe(r);
      EXPECT_EQ(r.out, "") << Describe(r);
      EXPECT_NE(r.err.find("environment variable " + var + " is '" + value + "': use "), std::string::npos)
          << Describe(r);
    }
  }
  CliResult good = RunSorun({"run", Model(), "--input", "data=" + files_->input, "--output-dir", Path("env_ok")},
                            {{"SORUN_NUM_THREADS", "2"}, {"SORUN_SPIN_US", "0"}, {"SORUN_VERIFY_CHECKSUM", ""}});
  EXPECT_EQ(good.exit_code, 0) << Describe(good);
}

// Issue 13 class 8: an error in a params file starts with that file's path (pack, and run's
// three-file deployment through the library).
TEST_F(CliErrorsTest, ParamsFileErrorsStartWithThePath) {
  const std::string params = testing::ReadFileOrDie(files_->params);
  testing::WriteFileOrDie(Path("cut.params"), params.substr(0, params.size() / 2));
  testing::WriteFileOrDie(Path("junk.params"), "definitely not a params file, but long enough to read a header");
  for (const char* name : {"cut.params", "junk.params"}) {
    CliResult packed = RunSorun({"pack", "-o", Path("params_err.so"), "--graph", files_->graph, "--params", Path(name),
                                 "--lib", testing::NnKernelsSource()});
    EXPECT_EQ(packed.exit_code, 1) << Describe(packed);
    EXPECT_EQ(packed.err.rfind("sorun: error: " + Path(name), 0), 0u) << Describe(packed);
    CliResult ran = RunSorun({"run", testing::Runfile("testdata/kernels/libnn_kernels.so"), "--graph", files_->graph,
                              "--params", Path(name), "--input", "data=" + files_->input});
    EXPECT_EQ(ran.exit_code, 1) << Describe(ran);
    EXPECT_EQ(ran.out, "") << Describe(ran);
    EXPECT_EQ(ran.err.rfind("sorun: error: " + Path(name), 0), 0u) << Describe(ran);
  }
}

}  // namespace
}  // namespace sorun
