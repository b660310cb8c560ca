// `sorun run` and `sorun bench` end to end through the built binary: .npy in and out compared with a
// reference, output directories, the three-file deployment, bench's JSON and text and its Chrome trace,
// and an OpenCL model run for real (PoCL in CI; skipped without an OpenCL device).
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cstdio>

#include "backends/opencl/opencl_backend.h"
#include "backends/opencl/opencl_devices.h"
#include "tests/tools/cli_test_util.h"
#include "tests/util/host_build.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using testing::CliResult;
using testing::Describe;
using testing::RunSorun;

class CliRunBenchTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing::MakeTempDir("cli_run"));
    files_ = new testing::SmallModelFiles(testing::WriteSmallModel(*dir_));
    CliResult r = RunSorun({"pack", "-o", Model(), "--graph", files_->graph, "--params", files_->params, "--lib",
                            testing::NnKernelsSource()});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
  }
  static void TearDownTestSuite() {
    delete files_;
    delete dir_;
  }
  static std::string Model() { return *dir_ + "/model.so"; }
  static std::string Path(const std::string& name) { return *dir_ + "/" + name; }
  static rapidjson::Document ParseJson(const CliResult& r) {
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    rapidjson::Document doc;
    doc.Parse(r.out.c_str());
    EXPECT_FALSE(doc.HasParseError()) << r.out;
    EXPECT_TRUE(doc.IsObject()) << r.out;
    return doc;
  }

  static std::string* dir_;
  static testing::SmallModelFiles* files_;
};

std::string* CliRunBenchTest::dir_ = nullptr;
testing::SmallModelFiles* CliRunBenchTest::files_ = nullptr;

TEST_F(CliRunBenchTest, RunWritesOutputsMatchingTheReference) {
  CliResult r = RunSorun({"run", Model(), "--input", "data=" + files_->input, "--output-dir", Path("out/nested")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "");
  std::vector<int64_t> shape;
  std::vector<float> y = testing::ReadFloatNpy(Path("out/nested/output_0.npy"), &shape);
  EXPECT_EQ(shape, (std::vector<int64_t>{1, 4}));
  ASSERT_EQ(y.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], files_->expected[i], 1e-6) << i;
  EXPECT_NE(r.out.find("ran " + Model() + " on cpu:0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("output 0  softmax  float32  [1, 4]  " + Path("out/nested/output_0.npy")), std::string::npos)
      << r.out;
  char first[32];
  std::snprintf(first, sizeof(first), "[%g", y[0]);
  EXPECT_NE(r.out.find(first), std::string::npos) << r.out;
}

// MODEL '-': the packed model piped into standard input, loaded from memory: the same outputs as the file.
TEST_F(CliRunBenchTest, RunReadsTheModelFromStandardInput) {
  CliResult file = RunSorun({"run", Model(), "--input", "data=" + files_->input, "--output-dir", Path("out_file")});
  ASSERT_EQ(file.exit_code, 0) << Describe(file);
  CliResult piped =
      RunSorun({"run", "-", "--input", "data=" + files_->input, "--output-dir", Path("out_stdin")}, {}, "", Model());
  ASSERT_EQ(piped.exit_code, 0) << Describe(piped);
  EXPECT_EQ(testing::ReadFileOrDie(Path("out_stdin/output_0.npy")),
            testing::ReadFileOrDie(Path("out_file/output_0.npy")));
  EXPECT_NE(piped.out.find("ran - on cpu:0"), std::string::npos) << piped.out;
  // Empty standard input, and a cut model: one error line each, naming standard input.
  CliResult empty = RunSorun({"run", "-", "--input", "data=" + files_->input, "--output-dir", Path("o2")});
  EXPECT_NE(empty.exit_code, 0) << Describe(empty);
  EXPECT_NE(empty.err.find("standard input is empty"), std::string::npos) << Describe(empty);
  testing::WriteFileOrDie(Path("cut.so"), testing::ReadFileOrDie(Model()).substr(0, 100));
  CliResult cut =
      RunSorun({"run", "-", "--input", "data=" + files_->input, "--output-dir", Path("o3")}, {}, "", Path("cut.so"));
  EXPECT_NE(cut.exit_code, 0);
  EXPECT_TRUE(testing::IsOneErrorLine(cut)) << Describe(cut);
  EXPECT_NE(cut.err.find("<stdin>: "), std::string::npos) << Describe(cut);
}

TEST_F(CliRunBenchTest, RunDefaultsToTheCurrentDirectory) {
  const std::string cwd = Path("cwd");
  ASSERT_EQ(system(("mkdir -p " + cwd).c_str()), 0);
  CliResult r = RunSorun({"run", Model(), "--input", "data=" + files_->input}, {}, cwd);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(testing::FileExists(cwd + "/output_0.npy"));
}

TEST_F(CliRunBenchTest, RunOnOtherInputs) {
  std::vector<float> x = {1, -2, 3, -4, 5, -6, 7, -8};
  testing::WriteFloatNpy(Path("x2.npy"), {1, 8}, x);
  CliResult r = RunSorun({"run", Model(), "--input", "data=" + Path("x2.npy"), "--output-dir", Path("out2")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  std::vector<float> y = testing::ReadFloatNpy(Path("out2/output_0.npy"));
  std::vector<float> expected = testing::SmallModelReference(x);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], expected[i], 1e-5) << i;
}

TEST_F(CliRunBenchTest, NoVerifySkipsTheIntegrityCheck) {
  // Change one weight inside the blob: the checksum no longer matches.
  std::string bytes = testing::ReadFileOrDie(Model());
  float w01[2] = {0.1f * static_cast<float>(-3), 0.1f * static_cast<float>(-2)};
  size_t at = bytes.find(std::string(reinterpret_cast<const char*>(w01), sizeof(w01)));
  ASSERT_NE(at, std::string::npos);
  bytes[at] ^= 0x01;
  testing::WriteFileOrDie(Path("tampered.so"), bytes);
  CliResult r = RunSorun({"run", Path("tampered.so"), "--input", "data=" + files_->input, "--output-dir", Path("t1")});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(testing::IsOneErrorLine(r)) << Describe(r);
  EXPECT_NE(r.err.find("checksum mismatch"), std::string::npos) << r.err;
  r = RunSorun(
      {"run", Path("tampered.so"), "--no-verify", "--input", "data=" + files_->input, "--output-dir", Path("t2")});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  r = RunSorun({"bench", Path("tampered.so"), "--no-verify", "--repeat", "1", "--json"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
}

TEST_F(CliRunBenchTest, ThreeFileDeployment) {
  const std::string lib = testing::Runfile("testdata/kernels/libnn_kernels.so");
  CliResult r = RunSorun({"run", lib, "--graph", files_->graph, "--params", files_->params, "--input",
                          "data=" + files_->input, "--output-dir", Path("three")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  std::vector<float> y = testing::ReadFloatNpy(Path("three/output_0.npy"));
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], files_->expected[i], 1e-6) << i;
  // Without --params the weights become required inputs.
  r = RunSorun({"run", lib, "--graph", files_->graph, "--input", "data=" + files_->input});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(testing::IsOneErrorLine(r)) << Describe(r);
  EXPECT_NE(r.err.find("w float32[4, 8]"), std::string::npos) << r.err;
  // A kernel library without --graph: the error says what to do.
  r = RunSorun({"run", lib, "--input", "data=" + files_->input});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(testing::IsOneErrorLine(r)) << Describe(r);
  EXPECT_NE(r.err.find("--graph"), std::string::npos) << r.err;
  // Bench takes the same three files.
  r = RunSorun({"bench", lib, "--graph", files_->graph, "--params", files_->params, "--repeat", "3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  rapidjson::Document doc = ParseJson(r);
  EXPECT_EQ(doc["repeat"].GetInt(), 3);
}

TEST_F(CliRunBenchTest, BenchJson) {
  CliResult r = RunSorun({"bench", Model(), "--json", "--repeat", "7", "--warmup", "2"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "");
  rapidjson::Document doc = ParseJson(r);
  for (const char* key : {"load_ms", "create_ms", "first_run_ms"}) {
    ASSERT_TRUE(doc.HasMember(key)) << key;
    EXPECT_TRUE(doc[key].IsNumber()) << key;
    EXPECT_GE(doc[key].GetDouble(), 0.0) << key;
  }
  const auto& run = doc["run_ms"];
  for (const char* key : {"min", "median", "p90", "max", "mean"}) {
    ASSERT_TRUE(run.HasMember(key)) << key;
    EXPECT_GE(run[key].GetDouble(), 0.0) << key;
  }
  EXPECT_LE(run["min"].GetDouble(), run["median"].GetDouble());
  EXPECT_LE(run["median"].GetDouble(), run["p90"].GetDouble());
  EXPECT_LE(run["p90"].GetDouble(), run["max"].GetDouble());
  EXPECT_EQ(doc["repeat"].GetInt(), 7);
  EXPECT_EQ(doc["warmup"].GetInt(), 2);
  EXPECT_GT(doc["peak_rss_bytes"].GetUint64(), 1u << 20);
  EXPECT_STREQ(doc["device"].GetString(), "cpu:0");
  EXPECT_EQ(std::string(doc["model"].GetString()), Model());
  ASSERT_EQ(doc["generated_inputs"].Size(), 1u);
  EXPECT_STREQ(doc["generated_inputs"][0].GetString(), "data");
  ASSERT_EQ(doc["memory_plan"].Size(), 1u);
  EXPECT_EQ(doc["memory_plan"][0]["param_bytes"].GetUint64(), 144u);

  // The peak RSS is this program's own: a large parent (here 256 MiB touched before spawning) does not
  // leak into it, as it would through getrusage's ru_maxrss across fork + exec.
  {
    std::vector<char> ballast(256u << 20);
    for (size_t i = 0; i < ballast.size(); i += 4096) ballast[i] = static_cast<char>(i);
    CliResult big = RunSorun({"bench", Model(), "--json", "--repeat", "2", "--warmup", "0"});
    ASSERT_EQ(big.exit_code, 0) << Describe(big);
    rapidjson::Document bd = ParseJson(big);
    EXPECT_LT(bd["peak_rss_bytes"].GetUint64(), uint64_t{128} << 20) << "ballast " << int(ballast[4096]);
    EXPECT_GE(bd["peak_rss_bytes"].GetUint64(), bd["current_rss_bytes"].GetUint64());
  }

  // Defaults, and given inputs are not generated.
  r = RunSorun({"bench", Model(), "--json", "--input", "data=" + files_->input});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  doc = ParseJson(r);
  EXPECT_EQ(doc["repeat"].GetInt(), 50);
  EXPECT_EQ(doc["warmup"].GetInt(), 5);
  EXPECT_EQ(doc["generated_inputs"].Size(), 0u);
}

// Time to first result = load + create (+ Warmup when asked) + first run, with the prefetch mode used.
TEST_F(CliRunBenchTest, BenchReportsTimeToFirstResult) {
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
           {}, {"--prefetch", "populate", "--warm-executor"}, {"--prefetch", "none"}}) {
    std::vector<std::string> args = {"bench", Model(), "--json", "--repeat", "2", "--warmup", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    CliResult r = RunSorun(args);
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    rapidjson::Document doc = ParseJson(r);
    const double sum = doc["load_ms"].GetDouble() + doc["create_ms"].GetDouble() + doc["warmup_ms"].GetDouble() +
                       doc["first_run_ms"].GetDouble();
    EXPECT_NEAR(doc["ttfr_ms"].GetDouble(), sum, 1e-9 + sum * 1e-12);
    EXPECT_GT(doc["ttfr_ms"].GetDouble(), 0.0);
    const bool warm = extra.size() > 2;
    EXPECT_EQ(doc["warm_executor"].GetBool(), warm);
    if (!warm) {
      EXPECT_EQ(doc["warmup_ms"].GetDouble(), 0.0);
    }
    EXPECT_STREQ(doc["prefetch"].GetString(), extra.empty() ? "willneed" : extra[1].c_str());
  }
  CliResult text = RunSorun({"bench", Model(), "--repeat", "2", "--warm-executor"});
  ASSERT_EQ(text.exit_code, 0) << Describe(text);
  for (const char* part :
       {"warmup ", "TTFR ", "(time to first result: load + create + warmup + first run; prefetch willneed)"}) {
    EXPECT_NE(text.out.find(part), std::string::npos) << "missing '" << part << "' in\n" << text.out;
  }
  CliResult bad = RunSorun({"bench", Model(), "--prefetch", "always"});
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
  EXPECT_NE(bad.err.find("--prefetch 'always' is not one of none, willneed, populate"), std::string::npos) << bad.err;
}

TEST_F(CliRunBenchTest, BenchText) {
  CliResult r = RunSorun({"bench", Model(), "--repeat", "4", "--warmup", "0"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  for (const char* part : {"model", "device       cpu:0", "load ", "create ", "first run ", "median", "p90",
                           "(4 runs after 0 warmup)", "peak RSS", "memory plan  cpu:0: params 144 B"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << "missing '" << part << "' in\n" << r.out;
  }
}

// --trace writes a Chrome trace (Trace Event Format) of three runs: every event a complete ("X") event
// with ts/dur in microseconds, each run's kernels inside its run event, for both executor kinds.
TEST_F(CliRunBenchTest, BenchTraceWritesAChromeTraceForBothKinds) {
  const std::string relax = testing::Runfile(testing::HostBuild("testdata/relax/dyn_batch.so"));
  for (const std::string& model : {Model(), relax}) {
    const std::string trace = Path("trace.json");
    std::remove(trace.c_str());
    CliResult r = RunSorun({"bench", model, "--json", "--repeat", "2", "--warmup", "0", "--trace", trace});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    rapidjson::Document doc = ParseJson(r);
    ASSERT_TRUE(doc.HasMember("trace")) << r.out;
    EXPECT_EQ(std::string(doc["trace"]["path"].GetString()), trace);
    EXPECT_EQ(doc["trace"]["runs"].GetInt(), 3);
    const uint64_t calls = doc["trace"]["kernel_calls"].GetUint64();
    EXPECT_GT(calls, 0u);
    EXPECT_EQ(calls % 3, 0u) << "every run makes the same calls";

    rapidjson::Document t;
    t.Parse(testing::ReadFileOrDie(trace).c_str());
    ASSERT_FALSE(t.HasParseError()) << model;
    ASSERT_TRUE(t.HasMember("traceEvents") && t["traceEvents"].IsArray());
    uint64_t kernels = 0, runs = 0;
    double run_end = 0, previous_run_end = -1;
    for (const auto& e : t["traceEvents"].GetArray()) {
      const std::string ph = e["ph"].GetString();
      if (ph == "M") continue;  // track names
      ASSERT_EQ(ph, "X");
      const double ts = e["ts"].GetDouble(), dur = e["dur"].GetDouble();
      EXPECT_GE(ts, 0.0);
      EXPECT_GE(dur, 0.0);
      if (std::string(e["cat"].GetString()) == "run") {
        EXPECT_GT(ts, previous_run_end) << "runs follow one another";
        previous_run_end = run_end = ts + dur;
        ++runs;
      } else {
        EXPECT_STREQ(e["cat"].GetString(), "kernel");
        EXPECT_LE(ts + dur, run_end + 1e-3) << "a kernel lies inside its run";
        EXPECT_FALSE(std::string(e["args"]["kernel"].GetString()).empty());
        ++kernels;
      }
    }
    EXPECT_EQ(runs, 3u) << model;
    EXPECT_EQ(kernels, calls) << model;
  }
  CliResult unwritable = RunSorun({"bench", Model(), "--trace", Path("no/such/dir/trace.json")});
  EXPECT_EQ(unwritable.exit_code, 2) << Describe(unwritable);
  EXPECT_NE(unwritable.err.find("--trace file"), std::string::npos) << unwritable.err;
}

class CliOpenclTest : public CliRunBenchTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterOpenclBackend().ok());
    if (OpenclDevices::Global().DeviceCount() == 0) GTEST_SKIP() << "no OpenCL device on this machine";
  }
};

TEST_F(CliOpenclTest, PackedOpenclModelRunsOnTheDevice) {
  testing::OpenclModelFiles cl = testing::WriteOpenclModel(*dir_, 1000);
  CliResult r = RunSorun({"pack", "-o", Path("cl.so"), "--graph", cl.graph, "--lib", testing::OpenclHostKernelsSource(),
                          "--opencl", cl.source, "--opencl-fmap", cl.fmap});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  r = RunSorun({"run", Path("cl.so"), "--device", "opencl", "--input", "a=" + cl.a, "--input", "b=" + cl.b,
                "--output-dir", Path("cl_out")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("on opencl:0"), std::string::npos) << r.out;
  std::vector<float> y = testing::ReadFloatNpy(Path("cl_out/output_0.npy"));
  ASSERT_EQ(y.size(), cl.expected.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], cl.expected[i]) << i;

  r = RunSorun({"bench", Path("cl.so"), "--device", "opencl:0", "--repeat", "5", "--warmup", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  rapidjson::Document doc = ParseJson(r);
  EXPECT_STREQ(doc["device"].GetString(), "opencl:0");
  EXPECT_EQ(doc["repeat"].GetInt(), 5);
  EXPECT_EQ(doc["generated_inputs"].Size(), 2u);
  EXPECT_STREQ(doc["memory_plan"][0]["device"].GetString(), "opencl:0");

  // TVM's three-file route for a GPU build: the kernel library carries the OpenCL module in its own blob;
  // packed with the graph (blob replaced), it runs the same.
  r = RunSorun({"pack", "-o", Path("cl_lib.so"), "--lib", testing::OpenclHostKernelsSource(), "--opencl", cl.source,
                "--opencl-fmap", cl.fmap});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  r = RunSorun({"run", Path("cl_lib.so"), "--graph", cl.graph, "--device", "opencl", "--input", "a=" + cl.a, "--input",
                "b=" + cl.b, "--output-dir", Path("cl_three_file_out")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  y = testing::ReadFloatNpy(Path("cl_three_file_out/output_0.npy"));
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], cl.expected[i]) << i;
  r = RunSorun({"pack", "-o", Path("cl_repacked.so"), "--graph", cl.graph, "--lib", Path("cl_lib.so")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  r = RunSorun({"run", Path("cl_repacked.so"), "--device", "opencl", "--input", "a=" + cl.a, "--input", "b=" + cl.b,
                "--output-dir", Path("cl_repacked_out")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  y = testing::ReadFloatNpy(Path("cl_repacked_out/output_0.npy"));
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], cl.expected[i]) << i;

  // The small model has CPU kernels only: an OpenCL executor is refused when it is asked for (not by its
  // first kernel), one line naming the model and the device, exit 1.
  r = RunSorun({"run", Model(), "--device", "opencl", "--input", "data=" + files_->input});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(testing::IsOneErrorLine(r)) << Describe(r);
  EXPECT_NE(r.err.find(Model() + ": it has kernels for cpu only (no OpenCL module): it cannot run on opencl:0"),
            std::string::npos)
      << r.err;
  // And the OpenCL model on the default device (the CPU) names the device it needs.
  r = RunSorun({"run", Path("cl.so"), "--input", "a=" + cl.a, "--input", "b=" + cl.b});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(testing::IsOneErrorLine(r)) << Describe(r);
  EXPECT_NE(r.err.find(Path("cl.so") + ": its kernels are in an OpenCL module: it needs an opencl device, the "
                                       "executor was given cpu:0"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace sorun
