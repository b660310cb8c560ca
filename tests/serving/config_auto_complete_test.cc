#include "serving/triton/config_auto_complete.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "serving/triton/model_config.h"

namespace sorun::triton {
namespace {

TensorInfo Tensor(std::string name, std::vector<int64_t> shape, bool is_param = false) {
  TensorInfo info;
  info.name = std::move(name);
  info.shape = std::move(shape);
  info.dtype = DLDataType{kDLFloat, 32, 1};
  info.is_param = is_param;
  return info;
}

const std::vector<TensorInfo> kMlpInputs = {Tensor("data", {1, 64}), Tensor("fc1_w", {128, 64}, true)};
const std::vector<TensorInfo> kMlpOutputs = {Tensor("softmax", {1, 10})};

ModelConfig Completed(const std::string& json, const std::vector<TensorInfo>& inputs,
                      const std::vector<TensorInfo>& outputs, int64_t default_max_batch_size = 4) {
  StatusOr<std::optional<std::string>> completed = AutoCompleteConfig(json, inputs, outputs, default_max_batch_size);
  EXPECT_TRUE(completed.ok()) << completed.status().ToString();
  EXPECT_TRUE(completed.ok() && completed->has_value());
  StatusOr<ModelConfig> config = ParseModelConfig(completed.ok() && completed->has_value() ? **completed : "{}");
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return config.ok() ? *config : ModelConfig();
}

TEST(ConfigAutoCompleteTest, BatchOfOneModelGetsDynamicBatching) {
  ModelConfig config =
      Completed(R"({"name": "mlp", "backend": "sorun", "max_batch_size": 0})", kMlpInputs, kMlpOutputs);
  EXPECT_EQ(config.max_batch_size, 4);
  EXPECT_TRUE(config.dynamic_batching);
  ASSERT_EQ(config.inputs.size(), 1u);  // the weight is not an input
  EXPECT_EQ(config.inputs[0].name, "data");
  EXPECT_EQ(config.inputs[0].data_type, TRITONSERVER_TYPE_FP32);
  EXPECT_EQ(config.inputs[0].dims, std::vector<int64_t>({64}));
  ASSERT_EQ(config.outputs.size(), 1u);
  EXPECT_EQ(config.outputs[0].dims, std::vector<int64_t>({10}));
  EXPECT_EQ(config.name, "mlp");  // other fields kept
}

TEST(ConfigAutoCompleteTest, NoBatchingWhenDefaultIsZeroOrFirstDimIsNotOne) {
  ModelConfig off = Completed(R"({"backend": "sorun"})", kMlpInputs, kMlpOutputs, /*default_max_batch_size=*/0);
  EXPECT_EQ(off.max_batch_size, 0);
  EXPECT_FALSE(off.dynamic_batching);
  EXPECT_EQ(off.inputs[0].dims, std::vector<int64_t>({1, 64}));

  ModelConfig wide = Completed(R"({"backend": "sorun"})", {Tensor("x", {8, 3})}, {Tensor("y", {8, 2})});
  EXPECT_EQ(wide.max_batch_size, 0);
  EXPECT_EQ(wide.inputs[0].dims, std::vector<int64_t>({8, 3}));

  ModelConfig scalar_out = Completed(R"({"backend": "sorun"})", {Tensor("x", {1, 3})}, {Tensor("y", {})});
  EXPECT_EQ(scalar_out.max_batch_size, 0);
}

// A Relax export with a dynamic batch (dyn_batch.so: x[n, 8] -> two [n, 4] outputs): batched like a
// batch-1 model, dims without the batch dimension; a mixed fixed/dynamic first dimension is not.
TEST(ConfigAutoCompleteTest, DynamicBatchDimensionIsTritonsBatch) {
  ModelConfig config = Completed(R"({"backend": "sorun"})", {Tensor("x", {-1, 8})},
                                 {Tensor("output_0", {-1, 4}), Tensor("output_1", {-1, 4})});
  EXPECT_EQ(config.max_batch_size, 4);
  EXPECT_TRUE(config.dynamic_batching);
  EXPECT_EQ(config.inputs[0].dims, std::vector<int64_t>({8}));
  ASSERT_EQ(config.outputs.size(), 2u);
  EXPECT_EQ(config.outputs[1].name, "output_1");
  EXPECT_EQ(config.outputs[1].dims, std::vector<int64_t>({4}));

  ModelConfig mixed = Completed(R"({"backend": "sorun"})", {Tensor("x", {-1, 8})}, {Tensor("y", {2, 4})});
  EXPECT_EQ(mixed.max_batch_size, 0);
  EXPECT_EQ(mixed.inputs[0].dims, std::vector<int64_t>({-1, 8}));
}

// Triton has no 0-d tensors (empty dims are refused; an empty reshape only under batching): a 0-d model
// tensor (an R.Prim parameter, a scalar output; or a per-row scalar of a batched model) gets dims [1].
TEST(ConfigAutoCompleteTest, ZeroDimTensorsAreServedAsOneElement) {
  ModelConfig prim = Completed(R"({"backend": "sorun"})", {Tensor("x", {4, 8}), Tensor("k", {})},
                               {Tensor("output_0", {4, 8}), Tensor("loss", {})});
  EXPECT_EQ(prim.max_batch_size, 0);
  EXPECT_EQ(prim.inputs[1].dims, std::vector<int64_t>({1}));
  EXPECT_FALSE(prim.inputs[1].has_reshape);
  EXPECT_EQ(prim.outputs[1].dims, std::vector<int64_t>({1}));

  ModelConfig per_row = Completed(R"({"backend": "sorun"})", {Tensor("x", {-1, 8})}, {Tensor("label", {-1})});
  EXPECT_EQ(per_row.max_batch_size, 4);
  EXPECT_EQ(per_row.inputs[0].dims, std::vector<int64_t>({8}));
  EXPECT_EQ(per_row.outputs[0].dims, std::vector<int64_t>({1}));
}

TEST(ConfigAutoCompleteTest, KeepsTheUsersChoices) {
  // Outputs given: only the inputs are filled, with the configured max_batch_size (0: full shape).
  ModelConfig inputs_only = Completed(R"({"output": [{"name": "softmax", "data_type": "TYPE_FP32", "dims": [1, 10]}]})",
                                      kMlpInputs, kMlpOutputs);
  EXPECT_EQ(inputs_only.max_batch_size, 0);
  EXPECT_EQ(inputs_only.inputs[0].dims, std::vector<int64_t>({1, 64}));
  ASSERT_EQ(inputs_only.outputs.size(), 1u);

  // An explicit max_batch_size and a sequence batcher are not replaced.
  ModelConfig explicit_batch = Completed(R"({"max_batch_size": 2, "sequence_batching": {}})", kMlpInputs, kMlpOutputs);
  EXPECT_EQ(explicit_batch.max_batch_size, 2);
  EXPECT_FALSE(explicit_batch.dynamic_batching);
  EXPECT_EQ(explicit_batch.inputs[0].dims, std::vector<int64_t>({64}));
}

TEST(ConfigAutoCompleteTest, CompleteConfigIsLeftAlone) {
  StatusOr<std::optional<std::string>> completed = AutoCompleteConfig(
      R"({"input": [{"name": "data", "data_type": "TYPE_FP32", "dims": [1, 64]}],
          "output": [{"name": "softmax", "data_type": "TYPE_FP32", "dims": [1, 10]}]})",
      kMlpInputs, kMlpOutputs, 4);
  ASSERT_TRUE(completed.ok()) << completed.status().ToString();
  EXPECT_FALSE(completed->has_value());
}

TEST(ConfigAutoCompleteTest, UnsupportedDtypeNamesTheTensor) {
  TensorInfo vec = Tensor("v", {1, 4});
  vec.dtype = DLDataType{kDLFloat, 32, 4};
  StatusOr<std::optional<std::string>> completed = AutoCompleteConfig("{}", {vec}, kMlpOutputs, 4);
  ASSERT_FALSE(completed.ok());
  EXPECT_NE(completed.status().message().find("tensor 'v'"), std::string::npos) << completed.status().ToString();
  EXPECT_FALSE(AutoCompleteConfig("[", kMlpInputs, kMlpOutputs, 4).ok());
}

}  // namespace
}  // namespace sorun::triton
