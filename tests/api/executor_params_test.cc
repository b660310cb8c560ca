// sorun::Executor's LoadParams / ShareParams (api/sorun.h) given params that do not fit: the
// params-vs-graph rule (graph_executor/shared_weights.h) refuses them before anything is written,
// naming the param and the graph. Zoo models loaded as three files without params.
#include <gtest/gtest.h>

#include <string>

#include "api/sorun.h"
#include "tests/api/api_test_util.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using testing::ReadZooBytes;
using testing::ZooFile;

// `name`.json with the zoo's kernel library and no params: the weights come through LoadParams.
Model BareModel(const std::string& name) {
  auto model = Model::LoadFromFiles(ZooFile(name + ".json"), testing::Runfile("testdata/kernels/libnn_kernels.so"), "");
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return std::move(*model);
}

TEST(ExecutorParamsTest, LoadParamsRefusesAnotherModelsParams) {
  Model mlp = BareModel("mlp");
  auto exec = mlp.NewExecutor();
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  EXPECT_ERROR(exec->LoadParams(ReadZooBytes("cnn.params")), StatusCode::kInvalidArgument, "load_params: params byte ",
               ": param '", "is not an input of this graph (inputs: data, fc1_b, fc1_w");
  // Nothing was half-loaded: the right params still load and run.
  ASSERT_TRUE(exec->LoadParams(ReadZooBytes("mlp.params")).ok());
  NDArray input = testing::ReadZooNpy("mlp_input.npy");
  auto out = exec->Run({{"data", &input.dl()}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_LE(testing::MaxRelativeError((*out)[0], testing::ReadZooNpy("mlp_expected.npy")), testing::kZooTolerance);
}

TEST(ExecutorParamsTest, ShareParamsNeedsEveryParamInBothGraphs) {
  Model mlp = BareModel("mlp");
  Model cnn = BareModel("cnn");            // fc1_w ... fc3_b too, of other shapes
  Model resblock = BareModel("resblock");  // no fc1_w
  auto owner = mlp.NewExecutor();
  auto sharer = mlp.NewExecutor();
  auto cnn_exec = cnn.NewExecutor();
  auto resblock_exec = resblock.NewExecutor();
  ASSERT_TRUE(owner.ok() && sharer.ok() && cnn_exec.ok() && resblock_exec.ok());
  const std::string mlp_params = ReadZooBytes("mlp.params");
  ASSERT_TRUE(owner->LoadParams(mlp_params).ok());
  // Params this graph lacks.
  EXPECT_ERROR(sharer->ShareParams(*owner, ReadZooBytes("cnn.params")), StatusCode::kInvalidArgument,
               "share_params: params byte ", ": param '", "is not an input of this graph");
  // Params this graph has but the other executor's graph lacks, or holds with another shape.
  EXPECT_ERROR(sharer->ShareParams(*resblock_exec, mlp_params), StatusCode::kInvalidArgument,
               "share_params: params byte ", ": param 'fc", "is not an input of the other executor's graph (inputs: ");
  EXPECT_ERROR(sharer->ShareParams(*cnn_exec, mlp_params), StatusCode::kInvalidArgument, "share_params: params byte ",
               ": param 'fc", "on cpu:0 but the other executor's graph input expects float32[");
  EXPECT_TRUE(sharer->ShareParams(*owner, mlp_params).ok());
}

}  // namespace
}  // namespace sorun
