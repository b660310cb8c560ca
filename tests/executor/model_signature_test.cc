// ModelSignature (executor/model_signature.h): the naming rules every executor kind shares — inputs by
// exact name, outputs by exact name, "<name>:0", or "output_<k>" when the model does not list its
// outputs; NotFound listing the caller's inputs (parameters left out, at most 16) or the outputs;
// CheckIndex's OutOfRange. Immutable and shared: looked up from many threads at once.
#include "executor/model_signature.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/util/status_matchers.h"

namespace sorun {
namespace {

// The index, or -1 for an error.
int Index(const StatusOr<int>& index) { return index.ok() ? *index : -1; }

TensorInfo Info(const std::string& name, std::vector<int64_t> shape = {1, 4}, bool is_param = false) {
  TensorInfo t;
  t.name = name;
  t.shape = std::move(shape);
  t.is_param = is_param;
  return t;
}

// A graph-executor-like signature: the input "data", two parameters, and TVM's output names (a node's
// first output by its name, a later one as "<node>:<k>").
std::shared_ptr<const ModelSignature> GraphLike() {
  return ModelSignature::Make({Info("data"), Info("fc_w", {4, 4}, true), Info("fc_b", {4}, true)},
                              {Info("softmax"), Info("split:1", {-1, 4})});
}

TEST(ModelSignatureTest, DescribesWhatItWasMadeOf) {
  auto s = GraphLike();
  EXPECT_EQ(s->num_inputs(), 3);
  ASSERT_EQ(s->inputs().size(), 3u);
  EXPECT_TRUE(s->inputs()[1].is_param);
  ASSERT_EQ(s->outputs().size(), 2u);
  EXPECT_EQ(s->outputs()[1].shape, (std::vector<int64_t>{-1, 4}));
  EXPECT_TRUE(s->outputs_known());
}

TEST(ModelSignatureTest, InputsAreFoundByTheirExactName) {
  auto s = GraphLike();
  EXPECT_EQ(Index(s->InputIndex("data")), 0);
  EXPECT_EQ(Index(s->InputIndex("fc_b")), 2);  // a parameter is found too (LoadParams, GetInput)
  for (const char* name : {"Data", "data:0", "data ", "", "output_0"}) {
    EXPECT_ERROR(s->InputIndex(name).status(), StatusCode::kNotFound, std::string("no input named '") + name + "'");
  }
}

TEST(ModelSignatureTest, NotFoundListsTheInputsACallerSets) {
  auto s = GraphLike();
  Status missing = s->InputIndex("x").status();
  EXPECT_ERROR(missing, StatusCode::kNotFound, "no input named 'x' (inputs: data)");
  EXPECT_EQ(missing.message().find("fc_w"), std::string::npos) << missing.message();

  // Only parameters: nothing for a caller to set.
  auto params_only = ModelSignature::Make({Info("w", {4}, true)}, {Info("y")});
  EXPECT_ERROR(params_only->InputIndex("x").status(), StatusCode::kNotFound, "(inputs: none)");
}

TEST(ModelSignatureTest, NotFoundListsAtMostSixteenInputs) {
  // 20 inputs a caller sets, with parameters among them (they neither count nor show).
  std::vector<TensorInfo> inputs;
  for (int i = 0; i < 20; ++i) {
    inputs.push_back(Info("in_" + std::to_string(i) + "_"));
    inputs.push_back(Info("param_" + std::to_string(i), {4}, true));
  }
  auto s = ModelSignature::Make(std::move(inputs), {Info("y")});
  Status missing = s->InputIndex("x").status();
  EXPECT_ERROR(missing, StatusCode::kNotFound, "(inputs: in_0_, in_1_,", "in_15_, ...)");
  EXPECT_EQ(missing.message().find("in_16_"), std::string::npos) << missing.message();
  EXPECT_EQ(missing.message().find("param_"), std::string::npos) << missing.message();

  // Exactly 16: all listed, no "...".
  std::vector<TensorInfo> sixteen;
  for (int i = 0; i < 16; ++i) sixteen.push_back(Info("in_" + std::to_string(i) + "_"));
  Status all = ModelSignature::Make(std::move(sixteen), {Info("y")})->InputIndex("x").status();
  EXPECT_ERROR(all, StatusCode::kNotFound, "in_15_)");
  EXPECT_EQ(all.message().find("..."), std::string::npos) << all.message();
}

TEST(ModelSignatureTest, OutputsByExactNameOrColonZero) {
  auto s = GraphLike();
  EXPECT_EQ(Index(s->OutputIndex("softmax")), 0);
  EXPECT_EQ(Index(s->OutputIndex("softmax:0")), 0);
  EXPECT_EQ(Index(s->OutputIndex("split:1")), 1);    // the exact name, colon and all
  EXPECT_EQ(Index(s->OutputIndex("split:1:0")), 1);  // and its ":0" spelling
  for (const char* name : {"softmax:1", "split", "split:0", ":0", "softmax:00", "output_0", "Softmax"}) {
    EXPECT_ERROR(s->OutputIndex(name).status(), StatusCode::kNotFound,
                 std::string("no output named '") + name + "' (outputs: softmax, split:1)");
  }
  // A model with no outputs lists none (and output_<k> is not a name of its).
  auto none = ModelSignature::Make({Info("x")}, {});
  EXPECT_TRUE(none->outputs_known());
  EXPECT_ERROR(none->OutputIndex("output_0").status(), StatusCode::kNotFound, "(outputs: none)");
}

TEST(ModelSignatureTest, OutputsUnknownUntilARunAreOutputK) {
  auto s = ModelSignature::Make({Info("x")}, {}, /*outputs_known=*/false);
  EXPECT_FALSE(s->outputs_known());
  EXPECT_TRUE(s->outputs().empty());
  EXPECT_EQ(Index(s->OutputIndex("output_0")), 0);
  EXPECT_EQ(Index(s->OutputIndex("output_7")), 7);  // any k: its range is checked when read
  EXPECT_EQ(Index(s->OutputIndex("output_123456789")), 123456789);
  for (const char* name : {"output_", "output_01", "output_-1", "output_+1", "output_1x", "output_1234567890",
                           "Output_0", "output0", "y", "output_0:0"}) {
    EXPECT_ERROR(s->OutputIndex(name).status(), StatusCode::kNotFound, std::string("no output named '") + name + "'",
                 "output_0, output_1, ...");
  }
  // Listed outputs make the outputs known whatever the flag says: output_<k> is then no name.
  auto listed = ModelSignature::Make({Info("x")}, {Info("y")}, /*outputs_known=*/false);
  EXPECT_TRUE(listed->outputs_known());
  EXPECT_ERROR(listed->OutputIndex("output_0").status(), StatusCode::kNotFound, "(outputs: y)");
}

TEST(ModelSignatureTest, TheFirstOfTwoEqualNamesWins) {
  auto s = ModelSignature::Make({Info("x"), Info("x", {2})}, {Info("y"), Info("y")});
  EXPECT_EQ(Index(s->InputIndex("x")), 0);
  EXPECT_EQ(Index(s->OutputIndex("y")), 0);
}

TEST(ModelSignatureTest, CheckIndex) {
  EXPECT_TRUE(ModelSignature::CheckIndex(0, 3, "input").ok());
  EXPECT_TRUE(ModelSignature::CheckIndex(2, 3, "input").ok());
  EXPECT_ERROR(ModelSignature::CheckIndex(3, 3, "input"), StatusCode::kOutOfRange,
               "input index 3 out of range (the model has 3 inputs)");
  EXPECT_ERROR(ModelSignature::CheckIndex(-1, 3, "output"), StatusCode::kOutOfRange,
               "output index -1 out of range (the model has 3 outputs)");
  EXPECT_ERROR(ModelSignature::CheckIndex(0, 0, "output"), StatusCode::kOutOfRange, "(the model has 0 outputs)");
}

// Shared by every executor of a model: lookups from many threads at once (TSan in CI).
TEST(ModelSignatureTest, LookupsFromManyThreads) {
  auto s = GraphLike();
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        if (Index(s->InputIndex("fc_w")) != 1 || Index(s->OutputIndex("split:1:0")) != 1 ||
            s->InputIndex("nope").ok() || s->inputs().size() != 3) {
          ++wrong;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace sorun
