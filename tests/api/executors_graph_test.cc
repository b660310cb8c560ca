// The graph-only runtime (//api:sorun_graph_cpu, api/executors_graph.cc): it runs graph-executor
// models (packed and three-file) and refuses Relax VM exports of every generation at load, naming the
// missing executor kind. Linked with the graph-only runtime alone: no Relax VM code is in this test.
#include <gtest/gtest.h>

#include <cstring>

#include "api/sorun.h"
#include "tests/util/host_build.h"
#include "tests/util/test_util.h"
#include "tools/npy.h"

namespace sorun {
namespace {

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

void ExpectMatches(const NDArray& out, const Tensor& expected) {
  ASSERT_EQ(out.shape(), expected.shape());
  const float* a = out.data_as<float>();
  const float* b = expected.data_as<float>();
  for (int64_t i = 0; i < out.num_elements(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5f) << i;
}

TEST(GraphOnlyRuntimeTest, RunsAPackedGraphModel) {
  auto model = Model::Load(testing::Runfile("testdata/models/mlp.so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_STREQ(model->executor_kind(), "graph executor");
  auto exec = model->NewExecutor();
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  auto input = ReadNpyFile(testing::Runfile("testdata/models/mlp_input.npy"));
  auto expected = ReadNpyFile(testing::Runfile("testdata/models/mlp_expected.npy"));
  ASSERT_TRUE(input.ok() && expected.ok());
  auto outputs = exec->Run({{"data", input->dl()}});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ASSERT_EQ(outputs->size(), 1u);
  ExpectMatches((*outputs)[0], *expected);
}

TEST(GraphOnlyRuntimeTest, RunsAThreeFileDeployment) {
  auto model =
      Model::LoadFromFiles(testing::Runfile("testdata/models/mlp.json"), testing::Runfile("testdata/models/mlp.so"),
                           testing::Runfile("testdata/models/mlp.params"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto exec = model->NewExecutor();
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  auto input = ReadNpyFile(testing::Runfile("testdata/models/mlp_input.npy"));
  auto expected = ReadNpyFile(testing::Runfile("testdata/models/mlp_expected.npy"));
  ASSERT_TRUE(input.ok() && expected.ok());
  auto outputs = exec->Run({{"data", input->dl()}});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ExpectMatches((*outputs)[0], *expected);
}

// A Relax export of either container generation is refused naming the executor this runtime lacks.
void ExpectRefusedAsRelaxExport(const std::string& path) {
  auto model = Model::Load(path);
  ASSERT_FALSE(model.ok()) << path;
  EXPECT_TRUE(Contains(model.status().message(), "Relax VM export")) << model.status().ToString();
  EXPECT_TRUE(Contains(model.status().message(), "does not link the Relax VM")) << model.status().ToString();
}

TEST(GraphOnlyRuntimeTest, RefusesTvm027RelaxExports) {
  // The tvm-ffi container (TVM 0.27), built for this machine (tests/util/host_build.h).
  ExpectRefusedAsRelaxExport(testing::Runfile(testing::HostBuild("testdata/relax/mlp.so")));
}

TEST(GraphOnlyRuntimeTest, RefusesTvm016RelaxExports) {
  // __tvm_dev_mblob with a relax.Executable root (TVM 0.16: x86-64 only, as no TVM 0.16 here targets aarch64).
  const std::string path = testing::Runfile("testdata/relax/legacy_mlp.so");
  SORUN_SKIP_IF_FOREIGN_BUILD(path);
  ExpectRefusedAsRelaxExport(path);
}

}  // namespace
}  // namespace sorun
