// The OpenCL module of a real TVM 0.27 Relax export (testdata/relax_device/mlp_opencl.payload, ffi
// grammar) through both loaders: "ffi.Module.load_from_bytes.opencl" (TVM 0.22+ containers) and the
// stream loader "runtime.module.loadbinary_opencl" (legacy containers, grammar detected). Its three
// kernels are built and run on the OpenCL device (PoCL in CI) and compared with the same MLP computed
// on the host.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backends/device_module_payload.h"
#include "backends/opencl/opencl_module.h"
#include "format/binary_reader.h"
#include "runtime/blob_loader.h"
#include "runtime/function_registry.h"
#include "runtime/packed_func.h"
#include "tests/opencl/opencl_test_util.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using testing::DeviceFloats;
using testing::DeviceZeros;
using testing::HostFloats;

std::string RealPayload() {
  return testing::ReadFileOrDie(testing::Runfile("testdata/relax_device/mlp_opencl.payload"));
}

StatusOr<Module> LoadFromBytes(const std::string& bytes) {
  PackedFunc load = FunctionRegistry::Global().Get(std::string(kFfiLoadFromBytesPrefix) + "opencl");
  if (!load.defined()) return NotFound("ffi.Module.load_from_bytes.opencl is not registered");
  SORUN_ASSIGN_OR_RETURN(Value v, load(Value::Bytes(bytes)));
  return v.AsModule();
}

class OpenclRelaxPayloadTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::SetUpOpenclTestEnvironment(); }
};

TEST_F(OpenclRelaxPayloadTest, FfiBytesLoaderCreatesTheModule) {
  auto module = LoadFromBytes(RealPayload());
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  auto* node = dynamic_cast<OpenclModuleNode*>(module->get());
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->payload().grammar, PayloadGrammar::kFfi);
  EXPECT_EQ(node->num_programs(), 3u);  // split on "// Function:" lines
  EXPECT_EQ(node->ListFunctionNames(), (std::vector<std::string>{"fused_matmul_add_relu_kernel",
                                                                 "fused_matmul_add_relu_kernel_1", "matmul1_kernel"}));
}

TEST_F(OpenclRelaxPayloadTest, StreamLoaderDetectsTheFfiGrammar) {
  const std::string bytes = RealPayload() + "next module";  // a container goes on after the payload
  BinaryReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "__tvm_ffi_library_bin");
  auto module = RunBlobLoader("opencl", reader);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_EQ(reader.remaining(), std::string("next module").size());
  EXPECT_EQ(dynamic_cast<OpenclModuleNode*>(module->get())->payload().grammar, PayloadGrammar::kFfi);
}

TEST_F(OpenclRelaxPayloadTest, FfiBytesLoaderRefusesTrailingBytesAndBadArguments) {
  auto module = LoadFromBytes(RealPayload() + "xyz");
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(module.status().message().find("opencl payload byte 3577: 3 trailing bytes after the opencl payload"),
            std::string::npos)
      << module.status().ToString();

  PackedFunc load = FunctionRegistry::Global().Get(std::string(kFfiLoadFromBytesPrefix) + "opencl");
  auto none = load();
  EXPECT_FALSE(none.ok());
  auto number = load(int64_t{7});
  EXPECT_FALSE(number.ok());
}

TEST_F(OpenclRelaxPayloadTest, RealKernelsBuildAndComputeTheMlp) {
  SORUN_REQUIRE_OPENCL();
  auto module = LoadFromBytes(RealPayload());
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  auto* node = dynamic_cast<OpenclModuleNode*>(module->get());
  Status built = node->BuildPrograms(0);
  ASSERT_TRUE(built.ok()) << built.ToString();

  // x[16] -> relu(x @ w0[16x32] + b0[32]) -> @ w1[32x10], as the export's host code chains the kernels.
  std::vector<float> x(16), w0(16 * 32), b0(32), w1(32 * 10);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  for (size_t i = 0; i < w0.size(); ++i) w0[i] = 0.01f * static_cast<float>(static_cast<int>(i % 13) - 6);
  for (size_t i = 0; i < b0.size(); ++i) b0[i] = 0.1f * static_cast<float>(static_cast<int>(i % 5) - 2);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = 0.02f * static_cast<float>(static_cast<int>(i % 11) - 5);
  std::vector<float> want(10, 0.0f), h(32);
  for (int j = 0; j < 32; ++j) {
    float acc = 0.0f;
    for (int k = 0; k < 16; ++k) acc += x[k] * w0[k * 32 + j];
    h[j] = std::max(acc + b0[j], 0.0f);
  }
  for (int j = 0; j < 10; ++j) {
    for (int k = 0; k < 32; ++k) want[j] += h[k] * w1[k * 10 + j];
  }

  Tensor tx = DeviceFloats(x), tw0 = DeviceFloats(w0), tb0 = DeviceFloats(b0), tw1 = DeviceFloats(w1);
  Tensor t_mm = DeviceZeros(32), t_relu = DeviceZeros(32), t_out = DeviceZeros(10);
  // Launch values: blockIdx.x = 1, threadIdx.x = 32 (the kernels guard their own extents).
  auto r = module->GetFunction("fused_matmul_add_relu_kernel")(t_mm.data(), tw0.data(), tx.data(), 1, 32);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  r = module->GetFunction("fused_matmul_add_relu_kernel_1")(t_relu.data(), t_mm.data(), tb0.data(), 1, 32);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  r = module->GetFunction("matmul1_kernel")(tw1.data(), t_relu.data(), t_out.data(), 1, 32);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<float> got = HostFloats(t_out);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << "output " << i;
}

}  // namespace
}  // namespace sorun
