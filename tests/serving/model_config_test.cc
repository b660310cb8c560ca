#include "serving/triton/model_config.h"

#include <gtest/gtest.h>

namespace sorun::triton {
namespace {

// The shape Triton 2.51 hands to TRITONBACKEND_ModelConfig (abridged): dims as numbers, defaults
// printed, parameters as {key: {string_value}}.
constexpr char kTritonJson[] = R"({
  "name": "mlp", "platform": "", "backend": "sorun", "max_batch_size": 8,
  "input": [{"name": "data", "data_type": "TYPE_FP32", "format": "FORMAT_NONE", "dims": [64],
             "is_shape_tensor": false, "optional": false}],
  "output": [{"name": "softmax", "data_type": "TYPE_FP32", "dims": ["10"], "label_filename": ""}],
  "dynamic_batching": {"preferred_batch_size": [8], "max_queue_delay_microseconds": 0},
  "instance_group": [{"name": "mlp_0", "kind": "KIND_CPU", "count": 2, "gpus": []},
                     {"name": "mlp_1", "kind": "KIND_GPU", "count": 1, "gpus": [0, 1]}],
  "default_model_filename": "",
  "parameters": {"num_threads": {"string_value": "2"}, "device": {"string_value": "cpu"}}
})";

TEST(ModelConfigTest, ParsesTritonJson) {
  StatusOr<ModelConfig> config = ParseModelConfig(kTritonJson);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->name, "mlp");
  EXPECT_EQ(config->max_batch_size, 8);
  ASSERT_EQ(config->inputs.size(), 1u);
  EXPECT_EQ(config->inputs[0].name, "data");
  EXPECT_EQ(config->inputs[0].data_type, TRITONSERVER_TYPE_FP32);
  EXPECT_EQ(config->inputs[0].dims, std::vector<int64_t>({64}));
  EXPECT_FALSE(config->inputs[0].has_reshape);
  ASSERT_EQ(config->outputs.size(), 1u);
  EXPECT_EQ(config->outputs[0].dims, std::vector<int64_t>({10}));  // "10": protobuf's int64 as a string
  EXPECT_TRUE(config->dynamic_batching);
  EXPECT_FALSE(config->sequence_batching);
  EXPECT_EQ(config->parameters.at("num_threads"), "2");
  EXPECT_EQ(config->parameters.at("device"), "cpu");
  ASSERT_EQ(config->instance_groups.size(), 2u);
  EXPECT_EQ(config->instance_groups[1].gpu_count, 2);
  EXPECT_EQ(config->CpuInstanceCount(), 2);  // the GPU group does not count
}

TEST(ModelConfigTest, MinimalConfigHasDefaults) {
  StatusOr<ModelConfig> config = ParseModelConfig(R"({"name": "m", "backend": "sorun"})");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->max_batch_size, 0);
  EXPECT_TRUE(config->inputs.empty());
  EXPECT_TRUE(config->outputs.empty());
  EXPECT_EQ(config->CpuInstanceCount(), 1);
}

TEST(ModelConfigTest, ReshapeIsRecorded) {
  StatusOr<ModelConfig> config = ParseModelConfig(
      R"({"input": [{"name": "x", "data_type": "TYPE_INT64", "dims": [4], "reshape": {"shape": [2, 2]}}]})");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_TRUE(config->inputs[0].has_reshape);
  EXPECT_EQ(config->inputs[0].reshape, std::vector<int64_t>({2, 2}));
  EXPECT_EQ(config->inputs[0].data_type, TRITONSERVER_TYPE_INT64);

  // An empty shape is left out of Triton's JSON: {} is the reshape to a 0-d tensor.
  config = ParseModelConfig(R"({"max_batch_size": 8, "output": [{"name": "y", "data_type": "TYPE_FP32",
                                "dims": [1], "reshape": {}}]})");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_TRUE(config->outputs[0].has_reshape);
  EXPECT_TRUE(config->outputs[0].reshape.empty());

  config = ParseModelConfig(R"({"input": [{"name": "x", "data_type": "TYPE_FP32", "dims": [4], "reshape": [4]}]})");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("input 'x'.reshape is not an object"), std::string::npos)
      << config.status().ToString();
  config = ParseModelConfig(
      R"({"input": [{"name": "x", "data_type": "TYPE_FP32", "dims": [4], "reshape": {"shape": [2, "two"]}}]})");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("input 'x'.reshape.shape[1] is not an integer"), std::string::npos)
      << config.status().ToString();
}

TEST(ModelConfigTest, ErrorsNameTheField) {
  StatusOr<ModelConfig> bad_json = ParseModelConfig("{");
  ASSERT_FALSE(bad_json.ok());
  EXPECT_EQ(bad_json.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(bad_json.status().message().find("model config JSON"), std::string::npos);

  StatusOr<ModelConfig> bad_type =
      ParseModelConfig(R"({"input": [{"name": "x", "data_type": "TYPE_FLOAT", "dims": [4]}]})");
  ASSERT_FALSE(bad_type.ok());
  EXPECT_NE(bad_type.status().message().find("input 'x' has data_type 'TYPE_FLOAT'"), std::string::npos)
      << bad_type.status().ToString();

  StatusOr<ModelConfig> bad_dim = ParseModelConfig(R"({"output": [{"name": "y", "data_type": "TYPE_FP32",
                                                                   "dims": ["ten"]}]})");
  ASSERT_FALSE(bad_dim.ok());
  EXPECT_NE(bad_dim.status().message().find("output 'y'.dims[0] is not an integer"), std::string::npos)
      << bad_dim.status().ToString();

  StatusOr<ModelConfig> negative = ParseModelConfig(R"({"max_batch_size": -1})");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("max_batch_size is -1"), std::string::npos);

  StatusOr<ModelConfig> bad_params = ParseModelConfig(R"({"parameters": {"device": "cpu"}})");
  ASSERT_FALSE(bad_params.ok());
  EXPECT_NE(bad_params.status().message().find("parameters 'device' is not an object"), std::string::npos);
}

}  // namespace
}  // namespace sorun::triton
