// TVM 0.27 Relax exports cross-compiled for aarch64 with NEON (testdata/relax_aarch64, written by its
// make_relax_aarch64_fixtures.py): on aarch64 (natively or under qemu-aarch64, --config=aarch64) sorun runs
// each and matches the outputs of the same model built for x86-64 and run by TVM's runtime (max relative
// error <= 1e-5 per element: |a - e| / max(|e|, 1e-6), the same top class); on any other machine the load
// is refused with a message naming both architectures. The .tar export is linked at load by $CC (the cross
// compiler under --config=aarch64).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "api/sorun.h"
#include "tests/util/test_util.h"
#include "tools/npy.h"

namespace sorun {
namespace {

constexpr double kTolerance = 1e-5;

std::string Fixture(const std::string& file) { return testing::Runfile("testdata/relax_aarch64/" + file); }

#if defined(__aarch64__)
// max |a - e| / max(|e|, 1e-6) over two float32 arrays of the same element count; infinity otherwise.
double MaxRelativeError(const float* a, const float* e, int64_t count) {
  double worst = 0;
  for (int64_t k = 0; k < count; ++k) {
    const double d = std::fabs(double{a[k]} - double{e[k]}) / std::max(1e-6, std::fabs(double{e[k]}));
    if (!(d <= worst)) worst = std::isnan(d) ? INFINITY : d;
  }
  return worst;
}

int64_t ArgMax(const float* x, int64_t count) { return std::max_element(x, x + count) - x; }
#endif

struct Case {
  const char* file;    // the model
  const char* prefix;  // its <prefix>.input_<k>.npy / .output_<k>.npy
  int outputs;
};

class Aarch64ExportsTest : public ::testing::TestWithParam<Case> {};

TEST_P(Aarch64ExportsTest, RunsOnAarch64AndIsRefusedElsewhere) {
  const Case& c = GetParam();
  StatusOr<Model> model = Model::Load(Fixture(c.file));
#if !defined(__aarch64__)
  ASSERT_FALSE(model.ok());
  std::printf("%s: %s\n", c.file, model.status().ToString().c_str());
  EXPECT_NE(model.status().ToString().find("built for aarch64, this machine is x86_64"), std::string::npos)
      << model.status().ToString();
#else
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_STREQ(model->executor_kind(), "Relax VM");
  StatusOr<Tensor> x = ReadNpyFile(Fixture(std::string(c.prefix) + ".input_0.npy"));
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  StatusOr<Executor> exec = model->NewExecutor();
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  StatusOr<std::vector<NDArray> > y = exec->Run({{model->inputs()[0].name, x->dl()}});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(static_cast<int>(y->size()), c.outputs);
  for (int k = 0; k < c.outputs; ++k) {
    StatusOr<Tensor> want = ReadNpyFile(Fixture(std::string(c.prefix) + ".output_" + std::to_string(k) + ".npy"));
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    const NDArray& got = (*y)[k];
    ASSERT_EQ(got.num_elements(), want->num_elements()) << "output " << k;
    const float* e = static_cast<const float*>(want->data());
    const double err = MaxRelativeError(got.data_as<float>(), e, got.num_elements());
    EXPECT_LE(err, kTolerance) << c.file << " output " << k;
    EXPECT_EQ(ArgMax(got.data_as<float>(), got.num_elements()), ArgMax(e, want->num_elements()))
        << c.file << " output " << k;
    std::printf("%s output %d: max relative difference %.3g\n", c.file, k, err);
  }
#endif
}

INSTANTIATE_TEST_SUITE_P(Exports, Aarch64ExportsTest,
                         ::testing::Values(Case{"mlp.so", "mlp", 1}, Case{"cnn.so", "cnn", 1},
                                           Case{"dyn_tuple.so", "dyn_tuple", 2}, Case{"mlp_tar.tar", "mlp", 1}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = info.param.file;
                           std::replace(name.begin(), name.end(), '.', '_');
                           return name;
                         });

}  // namespace
}  // namespace sorun
