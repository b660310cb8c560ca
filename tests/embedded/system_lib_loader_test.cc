// System-lib models (docs/embedded.md): the zoo's mlp linked into this test as TVM's `system-lib` build
// links a model (testdata/system_lib: its blob and a global constructor registering blob, kernels and
// context slots with TVMBackendRegisterSystemLibSymbol, twice: without a prefix and under "zoo_mlp_"),
// loaded with Model::LoadSystemLib and compared with the same model loaded from its packed .so. Built
// twice: against //api:sorun_cpu and against the static core //embedded:sorun_core_graph (also under
// --config=aarch64, run by qemu). Only the public API (api/sorun.h) is used.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "api/sorun.h"
#include "runtime/c_runtime_api.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

// Runs `model` once on a fixed non-trivial input and returns its outputs.
std::vector<NDArray> RunOnce(const Model& model) {
  std::vector<NDArray> outputs;
  auto exec = model.NewExecutor();
  EXPECT_TRUE(exec.ok()) << exec.status().ToString();
  if (!exec.ok()) return outputs;
  std::vector<NDArray> inputs;
  for (const TensorInfo& info : model.inputs()) {
    if (info.is_param) continue;
    auto x = NDArray::Empty(info.shape, info.dtype);
    EXPECT_TRUE(x.ok()) << x.status().ToString();
    if (!x.ok()) return outputs;
    EXPECT_EQ(info.dtype.code, kDLFloat);
    for (int64_t i = 0; i < x->num_elements(); ++i) x->data_as<float>()[i] = 0.01f * static_cast<float>(i % 97) - 0.4f;
    Status set = exec->SetInput(info.name, x->dl());
    EXPECT_TRUE(set.ok()) << set.ToString();
    inputs.push_back(*x);
  }
  Status run = exec->Run();
  EXPECT_TRUE(run.ok()) << run.ToString();
  if (!run.ok()) return outputs;
  for (size_t i = 0; i < model.outputs().size(); ++i) {
    auto y = exec->GetOutput(static_cast<int>(i));
    EXPECT_TRUE(y.ok()) << y.status().ToString();
    if (y.ok()) outputs.push_back(*y);
  }
  return outputs;
}

// The system-lib model `prefix` matches the packed mlp.so: same inputs, outputs, and bit-identical
// results (the same kernel objects, the same weights).
void ExpectSameAsPackedLibrary(const std::string& prefix) {
  auto system_lib = Model::LoadSystemLib(prefix);
  ASSERT_TRUE(system_lib.ok()) << system_lib.status().ToString();
  EXPECT_EQ(system_lib->path(), prefix.empty() ? "system-lib" : "system-lib:" + prefix);
  EXPECT_STREQ(system_lib->executor_kind(), "graph executor");
  auto packed = Model::Load(testing::Runfile("testdata/models/mlp.so"));
  ASSERT_TRUE(packed.ok()) << packed.status().ToString();
  ASSERT_EQ(system_lib->inputs().size(), packed->inputs().size());
  for (size_t i = 0; i < packed->inputs().size(); ++i) {
    EXPECT_EQ(system_lib->inputs()[i].name, packed->inputs()[i].name);
    EXPECT_EQ(system_lib->inputs()[i].shape, packed->inputs()[i].shape);
  }
  std::vector<NDArray> expected = RunOnce(*packed);
  std::vector<NDArray> actual = RunOnce(*system_lib);
  ASSERT_EQ(actual.size(), expected.size());
  ASSERT_FALSE(expected.empty());
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(actual[i].shape(), expected[i].shape());
    ASSERT_EQ(actual[i].nbytes(), expected[i].nbytes());
    EXPECT_EQ(std::memcmp(actual[i].data(), expected[i].data(), expected[i].nbytes()), 0) << "output " << i;
    bool any_nonzero = false;
    for (int64_t k = 0; k < expected[i].num_elements(); ++k) any_nonzero |= expected[i].data_as<float>()[k] != 0.0f;
    EXPECT_TRUE(any_nonzero) << "output " << i << " is all zeros: the comparison would prove little";
  }
}

TEST(SystemLibTest, UnprefixedModelMatchesItsPackedLibrary) { ExpectSameAsPackedLibrary(""); }

TEST(SystemLibTest, PrefixedModelMatchesItsPackedLibrary) { ExpectSameAsPackedLibrary("zoo_mlp_"); }

TEST(SystemLibTest, TwoLoadsShareNothingButRunTheSame) {
  auto a = Model::LoadSystemLib();
  auto b = Model::LoadSystemLib();
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<NDArray> ya = RunOnce(*a);
  std::vector<NDArray> yb = RunOnce(*b);
  ASSERT_EQ(ya.size(), 1u);
  ASSERT_EQ(yb.size(), 1u);
  EXPECT_EQ(std::memcmp(ya[0].data(), yb[0].data(), ya[0].nbytes()), 0);
}

TEST(SystemLibTest, NothingRegisteredUnderThePrefixIsNotFound) {
  auto model = Model::LoadSystemLib("no_such_model_");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kNotFound);
  EXPECT_NE(model.status().message().find("system-lib:no_such_model_"), std::string::npos) << model.status().ToString();
  EXPECT_NE(model.status().message().find("no symbol is registered under the prefix 'no_such_model_'"),
            std::string::npos)
      << model.status().ToString();
}

TEST(SystemLibTest, KernelsWithoutBlobAreRefusedAsNoModel) {
  // Only kernels (a prefix whose registrations hold no __tvm_dev_mblob): no graph to run.
  static const char kNotAKernel[] = "x";
  ASSERT_EQ(TVMBackendRegisterSystemLibSymbol("kernels_only_fused_dense", const_cast<char*>(kNotAKernel)), 0);
  auto model = Model::LoadSystemLib("kernels_only_");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kFailedPrecondition) << model.status().ToString();
  EXPECT_NE(model.status().message().find("system-lib:kernels_only_: no kernels_only___tvm_dev_mblob is registered"),
            std::string::npos)
      << model.status().ToString();
}

// A blob whose length prefix claims more than the program's segment holds: refused naming the symbol,
// never read past the end.
alignas(64) const unsigned char kOverlongBlob[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f};

TEST(SystemLibTest, BlobLongerThanItsSegmentIsDataLoss) {
  ASSERT_EQ(TVMBackendRegisterSystemLibSymbol("overlong___tvm_dev_mblob", const_cast<unsigned char*>(kOverlongBlob)),
            0);
  auto model = Model::LoadSystemLib("overlong_");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kDataLoss) << model.status().ToString();
  EXPECT_NE(model.status().message().find("overlong___tvm_dev_mblob"), std::string::npos) << model.status().ToString();
}

// A blob that is well-bounded but malformed inside: its module count claims entries that are not there.
alignas(64) const unsigned char kTruncatedBlob[24] = {8, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0};

TEST(SystemLibTest, MalformedBlobIsDataLossNamingTheSymbol) {
  ASSERT_EQ(TVMBackendRegisterSystemLibSymbol("truncated___tvm_dev_mblob", const_cast<unsigned char*>(kTruncatedBlob)),
            0);
  auto model = Model::LoadSystemLib("truncated_");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kDataLoss) << model.status().ToString();
  EXPECT_NE(model.status().message().find("truncated___tvm_dev_mblob"), std::string::npos) << model.status().ToString();
}

}  // namespace
}  // namespace sorun
