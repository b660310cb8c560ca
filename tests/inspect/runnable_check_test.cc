// `sorun verify` answers "is this safe to run?": every structural check of load and executor creation
// runs on the file's bytes (inspect/runnable_check.h). Models whose graph names something that is not
// a kernel of the library are refused by `verify` (the built binary) AND by Load + CreateExecutor, with
// the node and the symbol named; a good model passes both.
#include <gtest/gtest.h>

#include <string>

#include "api/model_loading.h"
#include "graph_executor/graph_builder.h"
#include "graph_executor/graph_executable.h"
#include "inspect/model_file.h"
#include "inspect/model_inspector.h"
#include "inspect/runnable_check.h"
#include "packer/exporter.h"
#include "runtime/data_type.h"
#include "tests/robustness/catalogue.h"
#include "tests/tools/cli_test_util.h"

namespace sorun {
namespace {

using catalogue::CatalogueEnv;
using testing::CliResult;
using testing::Describe;
using testing::RunSorun;

// The catalogue's good MLP with the first operator calling `kernel` instead of sorun_dense_bias_relu.
std::string ModelCalling(const std::string& kernel, const std::string& name) {
  CatalogueEnv& env = CatalogueEnv::Get();
  GraphBuilder b;
  int x = b.Input("data", {1, 8});
  int h = b.Op(kernel, {x, b.Input("w", {4, 8}), b.Input("b", {4})}, {1, 4}, Float32(), "fc");
  b.Output(b.Op("sorun_softmax", {h}, {1, 4}, Float32(), "softmax"));
  auto json = b.BuildJson();
  EXPECT_TRUE(json.ok()) << json.status().ToString();
  auto factory = MakeGraphExecutorFactory(*json, env.params, env.Host());
  EXPECT_TRUE(factory.ok()) << factory.status().ToString();
  std::string path = env.Path(name);
  EXPECT_TRUE(ExportLibrary(*factory, path).ok());
  return path;
}

Status CheckFile(const std::string& path) {
  SORUN_ASSIGN_OR_RETURN(ModelFile file, ModelFile::Open(path));
  SORUN_ASSIGN_OR_RETURN(InspectReport report, InspectModelFile(path));
  return CheckRunnable(file, report);
}

TEST(RunnableCheckTest, GoodModelPassesVerify) {
  const std::string& good = CatalogueEnv::Get().good_so;
  EXPECT_TRUE(CheckFile(good).ok()) << CheckFile(good).ToString();
  CliResult r = RunSorun({"verify", good});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
}

struct BadKernel {
  const char* symbol;
  const char* why;  // substring of verify's message
};

class BadKernelTest : public ::testing::TestWithParam<BadKernel> {};

TEST_P(BadKernelTest, VerifyAndExecutorCreationBothRefuse) {
  const BadKernel& k = GetParam();
  std::string path = ModelCalling(k.symbol, std::string("calls_") + k.symbol + ".so");
  Status s = CheckFile(path);
  ASSERT_FALSE(s.ok()) << k.symbol << " passed the runnable check";
  EXPECT_NE(s.message().find("node 3 ('fc'): kernel function '" + std::string(k.symbol) + "'"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find(k.why), std::string::npos) << s.message();

  CliResult r = RunSorun({"verify", path});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.err.find(k.symbol), std::string::npos) << Describe(r);
  EXPECT_EQ(r.out.find("OK"), std::string::npos) << Describe(r);

  // The runtime applies the same rule to the dlopen'd library, before any kernel runs.
  auto model = Load(path);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto exec = CreateExecutor(*model, {CpuDevice()});
  ASSERT_FALSE(exec.ok()) << k.symbol << " was accepted as a kernel";
  EXPECT_NE(exec.status().message().find(k.symbol), std::string::npos) << exec.status().ToString();
  EXPECT_NE(exec.status().message().find("'fc'"), std::string::npos) << exec.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(Symbols, BadKernelTest,
                         ::testing::Values(BadKernel{"system", "is not a function the library exports"},
                                           BadKernel{"abort", "is not a function the library exports"},
                                           BadKernel{"free", "is not a function the library exports"},
                                           BadKernel{"puts", "is not a function the library exports"},
                                           BadKernel{"no_such_kernel", "is not a function the library exports"},
                                           BadKernel{"__tvm_dev_mblob", "reserved by the TVM/sorun ABI"},
                                           BadKernel{"__tvm_module_ctx", "reserved by the TVM/sorun ABI"},
                                           BadKernel{"__TVMFuncCall", "reserved by the TVM/sorun ABI"},
                                           BadKernel{"__sorun_blob_checksum", "reserved by the TVM/sorun ABI"}),
                         [](const ::testing::TestParamInfo<BadKernel>& info) {
                           std::string name;
                           for (const char* p = info.param.symbol; *p; ++p) name += (*p == '_') ? 'u' : *p;
                           return name;
                         });

}  // namespace
}  // namespace sorun
