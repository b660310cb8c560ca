#include "serving/triton/output_probe.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/util/host_build.h"
#include "tests/util/test_util.h"

namespace sorun::triton {
namespace {

// The probe's answer for `file`: names output_<k>, float32, `shapes`; and where the bytecode tells the
// outputs (Model::outputs() not empty) the same as that.
void ExpectProbe(const std::string& file, const std::vector<std::vector<int64_t>>& shapes) {
  StatusOr<sorun::Model> model = sorun::Model::Load(testing::Runfile(testing::HostBuild("testdata/relax/" + file)));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  StatusOr<std::vector<TensorInfo>> probed = ProbeOutputs(*model);
  ASSERT_TRUE(probed.ok()) << probed.status().ToString();
  ASSERT_EQ(probed->size(), shapes.size()) << file;
  for (size_t k = 0; k < shapes.size(); ++k) {
    const TensorInfo& info = (*probed)[k];
    EXPECT_EQ(info.name, "output_" + std::to_string(k)) << file;
    EXPECT_EQ(info.shape, shapes[k]) << file << " output " << k;
    EXPECT_TRUE(info.dtype.code == kDLFloat && info.dtype.bits == 32 && info.dtype.lanes == 1) << file;
  }
  const std::vector<TensorInfo>& told = model->outputs();
  if (told.empty()) return;  // the bytecode does not tell: the probe is the only source
  ASSERT_EQ(told.size(), probed->size()) << file;
  for (size_t k = 0; k < told.size(); ++k) {
    EXPECT_EQ(told[k].name, (*probed)[k].name) << file;
    EXPECT_EQ(told[k].shape, (*probed)[k].shape) << file << " output " << k;
  }
}

TEST(OutputProbeTest, StaticExportsHaveTvmsShapes) {
  ExpectProbe("mlp.so", {{1, 10}});
  ExpectProbe("cnn.so", {{1, 10}});
}

TEST(OutputProbeTest, Tvm016StaticExportHasTvmsShapes) {
  SORUN_SKIP_IF_FOREIGN_BUILD(testing::Runfile("testdata/relax/legacy_mlp.so"));  // x86-64 only
  ExpectProbe("legacy_mlp.so", {{1, 10}});
}

// dyn_batch.so: x[n, 8] -> (h[n, 4], softmax(h)[n, 4]); n is 1 then 2 in the probe's runs.
TEST(OutputProbeTest, DynamicBatchDimensionIsMinusOne) { ExpectProbe("dyn_batch.so", {{-1, 4}, {-1, 4}}); }

// RunOnZeros leaves the executor with outputs of the dynamic size it was given.
TEST(OutputProbeTest, RunOnZerosUsesTheDynamicSize) {
  StatusOr<sorun::Model> model =
      sorun::Model::Load(testing::Runfile(testing::HostBuild("testdata/relax/dyn_batch.so")));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  StatusOr<Executor> executor = model->NewExecutor();
  ASSERT_TRUE(executor.ok()) << executor.status().ToString();
  ASSERT_TRUE(RunOnZeros(*executor, 7).ok());
  ASSERT_EQ(executor->num_outputs(), 2);
  // outputs() stays the static description; the run's shape is the output array's.
  EXPECT_EQ(executor->outputs()[1].shape, std::vector<int64_t>({-1, 4}));
  StatusOr<NDArray> softmax = executor->GetOutput(1);
  ASSERT_TRUE(softmax.ok());
  EXPECT_EQ(softmax->shape(), std::vector<int64_t>({7, 4}));
  StatusOr<NDArray> h = executor->GetOutput(0);
  ASSERT_TRUE(h.ok());
  // relu(0 * W + b) of the zero rows: every row equal.
  const float* values = h->data_as<float>();
  for (int r = 1; r < 7; ++r) {
    for (int c = 0; c < 4; ++c) EXPECT_EQ(values[r * 4 + c], values[c]) << "row " << r;
  }
}

}  // namespace
}  // namespace sorun::triton
