// The VM-only runtime (//api:sorun_vm_cpu, api/executors_vm.cc): it runs Relax VM exports and refuses
// graph-executor models and three-file deployments, naming the missing executor kind. Linked with the
// VM-only runtime alone: no graph-executor code is in this test.
#include <gtest/gtest.h>

#include "api/sorun.h"
#include "tests/util/host_build.h"
#include "tests/util/test_util.h"
#include "tools/npy.h"

namespace sorun {
namespace {

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Runs the Relax export `name` (testdata/relax/<name>.so, this machine's build of it) on its recorded input
// and compares with TVM's recorded output (1e-5: another architecture's build rounds differently).
void ExpectRunsRelaxExport(const std::string& name) {
  const std::string base = std::string("testdata/relax/") + name;
  auto model = Model::Load(testing::Runfile(testing::HostBuild(base + ".so")));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_STREQ(model->executor_kind(), "Relax VM");
  auto exec = model->NewExecutor();
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  auto input = ReadNpyFile(testing::Runfile(base + ".input_0.npy"));
  auto expected = ReadNpyFile(testing::Runfile(base + ".output_0.npy"));
  ASSERT_TRUE(input.ok() && expected.ok());
  ASSERT_TRUE(exec->SetInput(0, *input->dl()).ok());
  ASSERT_TRUE(exec->Run().ok());
  auto out = exec->GetOutput(0);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->shape(), expected->shape());
  const float* a = out->data_as<float>();
  const float* b = expected->data_as<float>();
  for (int64_t i = 0; i < out->num_elements(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5f) << name << " " << i;
}

TEST(VmOnlyRuntimeTest, RunsTvm027RelaxExports) { ExpectRunsRelaxExport("mlp"); }

TEST(VmOnlyRuntimeTest, RunsTvm016RelaxExports) {
  SORUN_SKIP_IF_FOREIGN_BUILD(testing::Runfile("testdata/relax/legacy_mlp.so"));  // x86-64 only
  ExpectRunsRelaxExport("legacy_mlp");
}

TEST(VmOnlyRuntimeTest, RefusesGraphModelsNamingTheGraphExecutor) {
  auto model = Model::Load(testing::Runfile("testdata/models/mlp.so"));
  ASSERT_FALSE(model.ok());
  EXPECT_TRUE(Contains(model.status().message(), "'GraphExecutorFactory'")) << model.status().ToString();
  EXPECT_TRUE(Contains(model.status().message(), "does not link the graph executor")) << model.status().ToString();
  auto three = Model::LoadFromFiles(testing::Runfile("testdata/models/mlp.json"),
                                    testing::Runfile("testdata/kernels/libnn_kernels.so"), "");
  ASSERT_FALSE(three.ok());
  EXPECT_EQ(three.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(three.status().message(), "needs the graph executor")) << three.status().ToString();
  EXPECT_TRUE(Contains(three.status().message(), "it links: Relax VM")) << three.status().ToString();
}

}  // namespace
}  // namespace sorun
