// Texture memory on a real OpenCL device (PoCL in CI): TVM's image layout rule (TextureShapeFor), image2d
// allocation through OpenclDeviceApi and TVM's "device_api.opencl.alloc_nd" / "free_nd", copies between
// host, buffers and images (round trips that compare every value), pooling, and the errors.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "backends/opencl/opencl_device_api.h"
#include "runtime/data_type.h"
#include "runtime/function_registry.h"
#include "runtime/registry_keys.h"
#include "runtime/tensor.h"
#include "runtime/texture_layout.h"
#include "tests/opencl/opencl_test_util.h"
#include "tests/util/status_matchers.h"

namespace sorun {
namespace {

constexpr DLDevice kCl0{kDLOpenCL, 0};
constexpr DLDevice kCpu{kDLCPU, 0};

OpenclDeviceApi* Api() {
  testing::SetUpOpenclTestEnvironment();
  auto api = GetDeviceApi(kDLOpenCL);
  EXPECT_TRUE(api.ok()) << api.status().ToString();
  return api.ok() ? static_cast<OpenclDeviceApi*>(*api) : nullptr;
}

// A float32 DLTensor of `shape` over `data` on `device`.
DLTensor Floats(void* data, DLDevice device, std::vector<int64_t>& shape) {
  DLTensor t{};
  t.data = data;
  t.device = device;
  t.ndim = static_cast<int>(shape.size());
  t.dtype = Float32();
  t.shape = shape.data();
  return t;
}

std::vector<float> Iota(size_t n, float start) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

TextureShape Shape(std::string_view scope, std::vector<int64_t> shape) {
  auto t = TextureShapeFor(scope, shape.data(), static_cast<int>(shape.size()));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : TextureShape{};
}

// TVM's DefaultTextureLayoutSeparator + ApplyTexture2DFlattening (src/runtime/texture.h), on the
// shapes TVM 0.16's Adreno build of testdata/opencl_texture gives its entries.
TEST(TextureLayoutTest, FollowsTvmsFlatteningRules) {
  TextureShape a = Shape("global.texture", {1, 4, 16, 16, 4});  // [N,C,H,W,c] -> height N*C*H, width W
  EXPECT_EQ(a.height, 64);
  EXPECT_EQ(a.width, 16);
  EXPECT_EQ(a.channels, 4);
  TextureShape w = Shape("global.texture-weight", {4, 16, 3, 3, 4});  // [O,I,H,W,o] -> height O, width I*H*W
  EXPECT_EQ(w.height, 4);
  EXPECT_EQ(w.width, 144);
  TextureShape n = Shape("global.texture-nhwc", {1, 16, 16, 4, 4});  // [N,H,W,C,c] -> height N*H, width W*C
  EXPECT_EQ(n.height, 16);
  EXPECT_EQ(n.width, 64);
  TextureShape n3 = Shape("global.texture-nhwc", {16, 8, 4});  // rank 3: separator 1
  EXPECT_EQ(n3.height, 16);
  EXPECT_EQ(n3.width, 8);
  TextureShape two = Shape("global.texture", {5, 4});  // rank 2: everything in the width
  EXPECT_EQ(two.height, 1);
  EXPECT_EQ(two.width, 5);

  EXPECT_TRUE(IsTextureScope("global.texture-weight"));
  EXPECT_FALSE(IsTextureScope("global"));
  EXPECT_FALSE(IsTextureScope(""));
}

TEST(TextureLayoutTest, RefusesUnknownScopesAndShortShapes) {
  int64_t shape[5] = {1, 4, 16, 16, 4};
  EXPECT_ERROR(TextureShapeFor("global.texture-foo", shape, 5).status(), StatusCode::kInvalidArgument,
               "memory scope 'global.texture-foo'", "unknown texture scope", "[1, 4, 16, 16, 4]");
  EXPECT_ERROR(TextureShapeFor("global.texture-nhwc", shape, 2).status(), StatusCode::kInvalidArgument,
               "'global.texture-nhwc'", "at least 3 dimensions");
  int64_t negative[3] = {2, -1, 4};
  EXPECT_ERROR(TextureShapeFor("global.texture", negative, 3).status(), StatusCode::kInvalidArgument,
               "dimension 1 is negative");
}

// Host -> image -> host, and host -> buffer -> image -> image -> buffer -> host on the device: every
// value survives, and the image covers exactly the tensor's texels.
TEST(OpenclTextureTest, CopiesRoundTripThroughImages) {
  SORUN_REQUIRE_OPENCL();
  OpenclDeviceApi* api = Api();
  ASSERT_NE(api, nullptr);
  std::vector<int64_t> shape = {1, 2, 3, 5, 4};  // "global.texture": 6 rows of 5 RGBA texels
  const size_t n = 2 * 3 * 5 * 4;
  auto image = api->AllocTexture(kCl0, "global.texture", 5, 6, Float32());
  ASSERT_TRUE(image.ok()) << image.status().ToString();

  std::vector<float> in = Iota(n, 0.5f), out(n, -1.f);
  ASSERT_TRUE(api->Copy(Floats(in.data(), kCpu, shape), Floats(*image, kCl0, shape), nullptr).ok());
  Status read = api->Copy(Floats(*image, kCl0, shape), Floats(out.data(), kCpu, shape), nullptr);
  ASSERT_TRUE(read.ok()) << read.ToString();
  EXPECT_EQ(out, in);

  // Through device buffers and a second image.
  auto buffer = Tensor::Empty(shape, Float32(), kCl0);
  auto buffer2 = Tensor::Empty(shape, Float32(), kCl0);
  ASSERT_TRUE(buffer.ok() && buffer2.ok());
  auto image2 = api->AllocTexture(kCl0, "global.texture", 5, 6, Float32());
  ASSERT_TRUE(image2.ok()) << image2.status().ToString();
  EXPECT_NE(*image2, *image);
  std::vector<float> in2 = Iota(n, -40.f);
  ASSERT_TRUE(api->Copy(Floats(in2.data(), kCpu, shape), *buffer->dl(), nullptr).ok());
  Status to_image = api->Copy(*buffer->dl(), Floats(*image, kCl0, shape), nullptr);
  ASSERT_TRUE(to_image.ok()) << to_image.ToString();
  Status image_to_image = api->Copy(Floats(*image, kCl0, shape), Floats(*image2, kCl0, shape), nullptr);
  ASSERT_TRUE(image_to_image.ok()) << image_to_image.ToString();
  Status to_buffer = api->Copy(Floats(*image2, kCl0, shape), *buffer2->dl(), nullptr);
  ASSERT_TRUE(to_buffer.ok()) << to_buffer.ToString();
  EXPECT_EQ(testing::HostFloats(*buffer2), in2);

  ASSERT_TRUE(api->FreeTexture(kCl0, *image).ok());
  ASSERT_TRUE(api->FreeTexture(kCl0, *image2).ok());
}

// A smaller tensor in a larger image covers its top-left texels (TVM's pooled 2-d storage): what is
// written through the small view is read back through it, and the rest of the image is untouched.
TEST(OpenclTextureTest, SmallerViewsCoverTheTopLeftRegion) {
  SORUN_REQUIRE_OPENCL();
  OpenclDeviceApi* api = Api();
  ASSERT_NE(api, nullptr);
  auto image = api->AllocTexture(kCl0, "global.texture-weight", 4, 3, Float32());
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  std::vector<int64_t> full = {3, 4, 4};   // weight layout: height 3, width 4
  std::vector<int64_t> small = {2, 2, 4};  // height 2, width 2
  std::vector<float> zeros(3 * 4 * 4, 0.f), ones(2 * 2 * 4, 1.f), back(3 * 4 * 4, -1.f);
  ASSERT_TRUE(api->Copy(Floats(zeros.data(), kCpu, full), Floats(*image, kCl0, full), nullptr).ok());
  ASSERT_TRUE(api->Copy(Floats(ones.data(), kCpu, small), Floats(*image, kCl0, small), nullptr).ok());
  ASSERT_TRUE(api->Copy(Floats(*image, kCl0, full), Floats(back.data(), kCpu, full), nullptr).ok());
  for (int row = 0; row < 3; ++row) {
    for (int col = 0; col < 4; ++col) {
      const float expected = row < 2 && col < 2 ? 1.f : 0.f;
      for (int c = 0; c < 4; ++c) EXPECT_EQ(back[(row * 4 + col) * 4 + c], expected) << row << "," << col;
    }
  }
  ASSERT_TRUE(api->FreeTexture(kCl0, *image).ok());
}

// TVM's global functions: alloc_nd returns an image that free_nd hands back to the pool, and the
// next request of the same scope and dtype that fits gets it again (no new image).
TEST(OpenclTextureTest, AllocNdPoolsImages) {
  SORUN_REQUIRE_OPENCL();
  OpenclDeviceApi* api = Api();
  ASSERT_NE(api, nullptr);
  PackedFunc alloc_nd = FunctionRegistry::Global().Get(keys::kOpenclAllocNd);
  PackedFunc free_nd = FunctionRegistry::Global().Get(keys::kOpenclFreeNd);
  ASSERT_TRUE(alloc_nd.defined() && free_nd.defined());
  int64_t big[2] = {32, 8}, small[2] = {16, 8};
  auto a = alloc_nd(int64_t{kDLOpenCL}, int64_t{0}, int64_t{kDLFloat}, int64_t{32}, "global.texture-nhwc", int64_t{2},
                    static_cast<void*>(big));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  void* first = a->raw().v_handle;
  const size_t images = api->texture_count(0);
  const size_t in_use = api->textures_in_use(0);
  auto freed = free_nd(int64_t{kDLOpenCL}, int64_t{0}, "global.texture-nhwc", first);
  ASSERT_TRUE(freed.ok()) << freed.status().ToString();
  EXPECT_EQ(api->textures_in_use(0), in_use - 1);

  auto b = alloc_nd(int64_t{kDLOpenCL}, int64_t{0}, int64_t{kDLFloat}, int64_t{32}, "global.texture-nhwc", int64_t{2},
                    static_cast<void*>(small));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->raw().v_handle, first);  // 32 x 8 fits 16 x 8: reused
  EXPECT_EQ(api->texture_count(0), images);
  // A float16 request does not take the float32 image.
  auto half = alloc_nd(int64_t{kDLOpenCL}, int64_t{0}, int64_t{kDLFloat}, int64_t{16}, "global.texture-nhwc",
                       int64_t{2}, static_cast<void*>(small));
  ASSERT_TRUE(half.ok()) << half.status().ToString();
  EXPECT_NE(half->raw().v_handle, first);
  EXPECT_EQ(api->texture_count(0), images + 1);
  EXPECT_TRUE(free_nd(int64_t{kDLOpenCL}, int64_t{0}, "global.texture-nhwc", b->raw().v_handle).ok());
  EXPECT_TRUE(free_nd(int64_t{kDLOpenCL}, int64_t{0}, "global.texture-nhwc", half->raw().v_handle).ok());
  // Freed twice: refused.
  EXPECT_ERROR(free_nd(int64_t{kDLOpenCL}, int64_t{0}, "global.texture-nhwc", first).status(),
               StatusCode::kInvalidArgument, "device_api.opencl.free_nd", "was not allocated as texture memory",
               "opencl:0");
}

TEST(OpenclTextureTest, BadRequestsAreErrorsNamingWhatIsWrong) {
  SORUN_REQUIRE_OPENCL();
  OpenclDeviceApi* api = Api();
  ASSERT_NE(api, nullptr);
  PackedFunc alloc_nd = FunctionRegistry::Global().Get(keys::kOpenclAllocNd);
  ASSERT_TRUE(alloc_nd.defined());
  int64_t extent[2] = {4, 4};
  auto call = [&](const char* scope, int64_t ndim, int64_t code, int64_t bits) {
    return alloc_nd(int64_t{kDLOpenCL}, int64_t{0}, code, bits, scope, ndim, static_cast<void*>(extent)).status();
  };
  EXPECT_ERROR(call("global.shared", 2, kDLFloat, 32), StatusCode::kInvalidArgument, "device_api.opencl.alloc_nd",
               "'global.shared'", "not a texture memory scope");
  EXPECT_ERROR(call("global.texture-bogus", 2, kDLFloat, 32), StatusCode::kInvalidArgument, "'global.texture-bogus'",
               "unknown texture scope");
  EXPECT_ERROR(call("global.texture", 1, kDLFloat, 32), StatusCode::kInvalidArgument, "2-d {width, height}", "ndim 1");
  // TVM 0.20+ asks for image2d_array textures: {width, height, depth} plus a channel size.
  EXPECT_ERROR(call("global.texture", 3, kDLFloat, 32), StatusCode::kUnimplemented, "3-d (image2d_array)");
  EXPECT_ERROR(call("global.texture", 2, kDLFloat, 64), StatusCode::kInvalidArgument, "dtype float64", "not supported");
  EXPECT_ERROR(api->AllocTexture(kCl0, "global.texture", 0, 4, Float32()).status(), StatusCode::kInvalidArgument,
               "sizes must be positive");
  EXPECT_ERROR(api->AllocTexture(kCl0, "global.texture", int64_t{1} << 40, 1, Float32()).status(),
               StatusCode::kResourceExhausted, "largest image2d");
  EXPECT_ERROR(api->FreeTexture(kCl0, reinterpret_cast<void*>(0x1000)), StatusCode::kInvalidArgument,
               "not allocated as texture memory");

  // Copies into an image the tensor does not fit: 3 channels, a larger region, a byte offset, another dtype.
  auto image = api->AllocTexture(kCl0, "global.texture", 2, 2, Float32());
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  // (The pool may hand out a larger cached image: `wide` is wider than any image these tests make.)
  std::vector<float> host(1024, 0.f);
  std::vector<int64_t> rgb = {1, 2, 2, 3}, wide = {1, 2, 100, 4}, fits = {1, 2, 2, 4};
  EXPECT_ERROR(api->Copy(Floats(host.data(), kCpu, rgb), Floats(*image, kCl0, rgb), nullptr),
               StatusCode::kInvalidArgument, "last dimension is 3", "4 values per texel");
  EXPECT_ERROR(api->Copy(Floats(host.data(), kCpu, wide), Floats(*image, kCl0, wide), nullptr),
               StatusCode::kInvalidArgument, "an image2d of", "needs 100 x 2 texels");
  DLTensor offset = Floats(*image, kCl0, fits);
  offset.byte_offset = 16;
  EXPECT_ERROR(api->Copy(Floats(host.data(), kCpu, fits), offset, nullptr), StatusCode::kInvalidArgument,
               "byte_offset 16 into an image");
  DLTensor as_int = Floats(*image, kCl0, fits);
  as_int.dtype = Int32();
  DLTensor host_int = Floats(host.data(), kCpu, fits);
  host_int.dtype = Int32();
  EXPECT_ERROR(api->Copy(host_int, as_int, nullptr), StatusCode::kInvalidArgument, "dtype is not the image's");
  ASSERT_TRUE(api->FreeTexture(kCl0, *image).ok());
}

}  // namespace
}  // namespace sorun
