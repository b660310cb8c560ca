#include "graph_executor/shared_weights.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph_executor/graph_json.h"
#include "runtime/data_type.h"

namespace sorun {
namespace {

// Two inputs: data float32[1, 4] and the weight p0 float32[3, 4].
const char kGraph[] = R"({
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "p0", "inputs": []},
    {"op": "tvm_op", "name": "dense0", "attrs": {"func_name": "sorun_dense", "num_inputs": "2",
      "num_outputs": "1", "flatten_data": "0"}, "inputs": [[0, 0, 0], [1, 0, 0]]}
  ],
  "arg_nodes": [0, 1],
  "heads": [[2, 0, 0]],
  "attrs": {
    "dltype": ["list_str", ["float32", "float32", "float32"]],
    "storage_id": ["list_int", [0, 1, 2]],
    "shape": ["list_shape", [[1, 4], [3, 4], [1, 3]]]
  },
  "node_row_ptr": [0, 1, 2, 3]
})";

GraphSpec Graph() {
  auto g = GraphSpec::Parse(kGraph);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return *g;
}

const DLDataType kF32 = DLDataType{kDLFloat, 32, 1};

TEST(ParamsAgainstGraphTest, MatchingAndUnknownParamsPassWhenIgnored) {
  const std::vector<int64_t> p0_shape = {3, 4}, other_shape = {7};
  const std::vector<ParamSignature> params = {{"p0", kF32, &p0_shape}, {"unused", kF32, &other_shape}};
  EXPECT_TRUE(CheckParamsAgainstGraph(Graph(), params, ParamsOutsideGraph::kIgnored, "m.params").ok());
}

TEST(ParamsAgainstGraphTest, AMismatchNamesTheSourceTheParamAndBothTypes) {
  const std::vector<int64_t> wrong = {3, 5};
  const DLDevice cpu = CpuDevice();
  Status s = CheckParamsAgainstGraph(Graph(), {{"p0", kF32, &wrong, &cpu}}, ParamsOutsideGraph::kIgnored, "m.params");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "m.params: param 'p0' is float32[3, 5] on cpu:0 but the graph input expects float32[3, 4]");
  // A header read without its data has no device; an empty source adds no prefix.
  const std::vector<int64_t> p0_shape = {3, 4};
  s = CheckParamsAgainstGraph(Graph(), {{"p0", DLDataType{kDLInt, 8, 1}, &p0_shape}}, ParamsOutsideGraph::kIgnored, "");
  EXPECT_EQ(s.message(), "param 'p0' is int8[3, 4] but the graph input expects float32[3, 4]");
}

TEST(ParamsAgainstGraphTest, AParamOutsideTheGraphIsAnErrorWhenRefused) {
  const std::vector<int64_t> shape = {3, 4};
  Status s = CheckParamsAgainstGraph(Graph(), {{"p0", kF32, &shape}, {"w9", kF32, &shape}},
                                     ParamsOutsideGraph::kRefused, "cnn.params", "mlp.json");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "cnn.params: param 'w9' is not an input of mlp.json (inputs: data, p0)");
}

TEST(SharedWeightsTest, CheckAgainstGraphAppliesTheRuleToItsTensors) {
  auto t = Tensor::Empty({3, 5}, kF32, CpuDevice());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto weights = SharedWeights::Create({{"p0", *t}}, "model.params");
  ASSERT_TRUE(weights.ok()) << weights.status().ToString();
  Status s = (*weights)->CheckAgainstGraph(Graph());
  EXPECT_EQ(s.message(),
            "model.params: param 'p0' is float32[3, 5] on cpu:0 but the graph input expects float32[3, 4]");

  auto extra = Tensor::Empty({2}, kF32, CpuDevice());
  ASSERT_TRUE(extra.ok());
  weights = SharedWeights::Create({{"bias9", *extra}}, "model.params");
  ASSERT_TRUE(weights.ok());
  EXPECT_TRUE((*weights)->CheckAgainstGraph(Graph()).ok());
  s = (*weights)->CheckAgainstGraph(Graph(), ParamsOutsideGraph::kRefused, "model.json");
  EXPECT_EQ(s.message(), "model.params: param 'bias9' is not an input of model.json (inputs: data, p0)");
}

TEST(ParamsAgainstGraphTest, TensorsJustReadAreCheckedByTheSameRuleNamingTheGraph) {
  auto t = Tensor::Empty({3, 5}, kF32, CpuDevice());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  Status s = CheckParamsAgainstGraph(Graph(), NamedTensors{{"p0", *t}}, ParamsOutsideGraph::kRefused, "model.params",
                                     "model.json");
  EXPECT_EQ(s.message(),
            "model.params: param 'p0' is float32[3, 5] on cpu:0 but model.json input expects float32[3, 4]");
}

}  // namespace
}  // namespace sorun
