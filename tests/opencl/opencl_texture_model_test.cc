// Graph-executor models whose OpenCL kernels use texture memory: real TVM 0.16 exports built for
// "opencl -device=adreno" (testdata/opencl_texture: storage scopes global.texture, -weight, -nhwc; the
// fused kernels call device_api.opencl.alloc_nd) run through sorun::Model on a real OpenCL device and
// give the output of TVM's llvm build within 1e-5; images are reused across runs and handed back when
// executors go. Plus the memory plan of texture storage (pure: no device needed) and its errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "api/sorun.h"
#include "backends/opencl/opencl_device_api.h"
#include "graph_executor/graph_builder.h"
#include "graph_executor/memory_plan.h"
#include "runtime/data_type.h"
#include "runtime/device_api.h"
#include "tests/opencl/opencl_test_util.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"
#include "tools/npy.h"

namespace sorun {
namespace {

constexpr DLDevice kCl0{kDLOpenCL, 0};

std::string Fixture(const std::string& file) { return testing::Runfile("testdata/opencl_texture/" + file); }

Tensor ReadNpy(const std::string& file) {
  auto t = ReadNpyFile(Fixture(file));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Tensor();
}

OpenclDeviceApi* Api() {
  auto api = GetDeviceApi(kDLOpenCL);
  EXPECT_TRUE(api.ok()) << api.status().ToString();
  return api.ok() ? static_cast<OpenclDeviceApi*>(*api) : nullptr;
}

// Largest |a - b| over the elements, or +inf when shapes or dtypes differ.
double MaxAbsDiff(const NDArray& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.shape() != b.shape() || !(a.dl().dtype == Float32()) ||
      !(b.dl()->dtype == Float32())) {
    return INFINITY;
  }
  const float* x = a.data_as<float>();
  const float* y = static_cast<const float*>(b.data());
  double worst = 0;
  for (uint64_t i = 0; i < b.nbytes() / sizeof(float); ++i) worst = std::fmax(worst, std::fabs(double(x[i]) - y[i]));
  return worst;
}

class TextureModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TextureModelTest, MatchesTvmWithinTolerance) {
  SORUN_REQUIRE_OPENCL();
  const std::string& name = GetParam();
  auto model = Model::Load(Fixture(name + ".so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  OpenclDeviceApi* api = Api();
  ASSERT_NE(api, nullptr);
  const size_t in_use_before = api->textures_in_use(0);
  Tensor input = ReadNpy(name + ".input_0.npy");
  Tensor expected = ReadNpy(name + ".output_0.npy");
  {
    ExecutorOptions options;
    options.devices = {kCl0};
    auto exec = model->NewExecutor(options);
    ASSERT_TRUE(exec.ok()) << exec.status().ToString();
    // The graph's texture storage is images held by the executor.
    EXPECT_GT(api->textures_in_use(0), in_use_before);
    // Parameter p1 (the first conv's bias, packed [.., 4]) lives in texture memory: kernels read it as
    // an image, so a buffer cannot stand in for it.
    std::vector<int64_t> p1_shape = {1, 4, 1, 1, 4};
    if (name == "conv_nhwc_texture") p1_shape = {1, 1, 1, 4, 4};
    auto p1 = NDArray::Empty(p1_shape, Float32(), kCl0);
    ASSERT_TRUE(p1.ok()) << p1.status().ToString();
    EXPECT_ERROR(exec->SetInputZeroCopy("p1", p1->dl()), StatusCode::kInvalidArgument,
                 "texture memory ('global.texture-weight')", "SetInput");
    size_t images_after_first_run = 0;
    for (int run = 0; run < 3; ++run) {
      auto outputs = exec->Run({{"data", input.dl()}});
      ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
      ASSERT_EQ(outputs->size(), 1u);
      EXPECT_LE(MaxAbsDiff((*outputs)[0], expected), 1e-5) << name << " run " << run;
      // Images the kernels take with alloc_nd come back with free_nd: later runs create none.
      if (run == 0) images_after_first_run = api->texture_count(0);
      EXPECT_EQ(api->texture_count(0), images_after_first_run) << "run " << run;
    }
  }
  // The executor gave its storage images back to the pool.
  EXPECT_EQ(api->textures_in_use(0), in_use_before);
}

INSTANTIATE_TEST_SUITE_P(TvmAdrenoExports, TextureModelTest,
                         ::testing::Values("conv_nchw_texture", "conv_nhwc_texture"));

// x -> a -> b, every entry float32 [1, 2, 3, 4, 4], with storage ids and scopes set by each test.
GraphSpec ThreeEntries() {
  GraphBuilder b;
  int x = b.Input("x", {1, 2, 3, 4, 4});
  int a = b.Op("f", {x}, {1, 2, 3, 4, 4});
  int c = b.Op("g", {a}, {1, 2, 3, 4, 4});
  b.Output(c);
  auto g = b.Build();
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? *g : GraphSpec();
}

TEST(TextureMemoryPlanTest, SizesImagesLikeTvm) {
  GraphSpec g = ThreeEntries();
  ASSERT_EQ(g.num_entries(), 3u);
  g.storage_scope = {"", "global.texture", "global.texture"};
  g.storage_id = {0, 1, 1};      // entries 1 and 2 share one image
  g.shape[2] = {1, 1, 8, 2, 4};  // height 8, width 2 next to entry 1's height 6, width 4
  auto plan = PlanMemory(g, {kCl0}, {false, false, false});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->pools.size(), 2u);
  const StoragePool& buffer = plan->pools[0];
  EXPECT_EQ(buffer.texture_scope, "");
  EXPECT_EQ(buffer.bytes, 2u * 3 * 4 * 4 * 4);
  const StoragePool& image = plan->pools[1];
  EXPECT_EQ(image.texture_scope, "global.texture");
  EXPECT_EQ(image.texture_width, 4);
  EXPECT_EQ(image.texture_height, 8);
  EXPECT_EQ(image.bytes, 4u * 8 * 4 * sizeof(float));
  EXPECT_FALSE(image.weights_only);
}

TEST(TextureMemoryPlanTest, BadScopesAreErrorsNamingThem) {
  GraphSpec g = ThreeEntries();
  g.storage_scope = {"", "global.shared", ""};
  EXPECT_ERROR(PlanMemory(g, {kCl0}, {}).status(), StatusCode::kInvalidArgument, "graph entry 1",
               "storage_scope 'global.shared' is not supported");
  g.storage_scope = {"", "global.texture-foo", ""};
  EXPECT_ERROR(PlanMemory(g, {kCl0}, {}).status(), StatusCode::kInvalidArgument, "graph entry 1",
               "'global.texture-foo'", "unknown texture scope");
  g.storage_scope = {"", "global.texture", ""};
  EXPECT_ERROR(PlanMemory(g, {DLDevice{kDLCPU, 0}}, {}).status(), StatusCode::kInvalidArgument, "graph entry 1",
               "only OpenCL devices have", "cpu:0");
  GraphSpec rgb = ThreeEntries();
  rgb.storage_scope = {"", "global.texture", ""};
  rgb.shape[1] = {1, 2, 3, 4, 3};
  EXPECT_ERROR(PlanMemory(rgb, {kCl0}, {}).status(), StatusCode::kInvalidArgument, "graph entry 1",
               "last dimension is 3");
  GraphSpec mixed = ThreeEntries();
  mixed.storage_scope = {"", "global.texture", "global.texture-nhwc"};
  mixed.storage_id = {0, 1, 1};
  EXPECT_ERROR(PlanMemory(mixed, {kCl0}, {}).status(), StatusCode::kInvalidArgument,
               "storage 1 holds entries of storage_scope 'global.texture' and 'global.texture-nhwc'");
}

}  // namespace
}  // namespace sorun
