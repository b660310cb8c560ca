// The "cuda" modules of real TVM 0.27 Relax exports (testdata/relax_device, tvm-ffi grammar) through
// both loaders: "ffi.Module.load_from_bytes.cuda" (TVM 0.22+ containers) and the stream loader
// "runtime.module.loadbinary_cuda" (legacy containers, grammar detected). Target "cuda" exported
// without a driver is CUDA C++ source (fmt "cuda"), refused at load; target "nvptx" is fmt "ptx".
// Runs anywhere: without a driver the image check is deferred, with a GPU the PTX is JIT-loaded.
#include <gtest/gtest.h>

#include <string>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_module.h"
#include "backends/device_module_payload.h"
#include "format/binary_reader.h"
#include "runtime/blob_loader.h"
#include "runtime/data_type.h"
#include "runtime/function_registry.h"
#include "runtime/packed_func.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

constexpr char kSourceRefusal[] =
    "cuda module: fmt 'cuda' is CUDA C++ source (TVM exported it without a CUDA driver); sorun loads ptx, cubin "
    "or fatbin: re-export on a machine with a CUDA driver";

std::string RealPayload(const std::string& name) {
  return testing::ReadFileOrDie(testing::Runfile("testdata/relax_device/" + name + ".payload"));
}

StatusOr<Module> LoadFromBytes(const std::string& bytes) {
  PackedFunc load = FunctionRegistry::Global().Get(std::string(kFfiLoadFromBytesPrefix) + "cuda");
  if (!load.defined()) return NotFound("ffi.Module.load_from_bytes.cuda is not registered");
  SORUN_ASSIGN_OR_RETURN(Value v, load(Value::Bytes(bytes)));
  return v.AsModule();
}

class CudaRelaxPayloadTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(RegisterCudaBackend().ok()); }
};

TEST_F(CudaRelaxPayloadTest, CudaSourceIsRefusedByTheFfiBytesLoader) {
  auto module = LoadFromBytes(RealPayload("mlp_cuda"));
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(module.status().message().find(std::string("cuda payload byte 0: ") + kSourceRefusal), std::string::npos)
      << module.status().ToString();
}

TEST_F(CudaRelaxPayloadTest, CudaSourceIsRefusedByTheStreamLoader) {
  const std::string bytes = std::string(16, 'p') + RealPayload("mlp_cuda");
  BinaryReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "__tvm_ffi_library_bin");
  ASSERT_TRUE(reader.Skip(16).ok());
  auto module = RunBlobLoader("cuda", reader);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(module.status().message().find(std::string("__tvm_ffi_library_bin byte 16: ") + kSourceRefusal),
            std::string::npos)
      << module.status().ToString();
}

TEST_F(CudaRelaxPayloadTest, PtxPayloadLoadsThroughBothLoaders) {
  const std::string bytes = RealPayload("mlp_nvptx");
  auto module = LoadFromBytes(bytes);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_STREQ(module->type_key(), "cuda");
  EXPECT_TRUE(module->GetFunction("matmul1_kernel").defined());
  EXPECT_FALSE(module->GetFunction("no_such_kernel").defined());

  BinaryReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "__tvm_ffi_library_bin");
  auto streamed = RunBlobLoader("cuda", reader);
  ASSERT_TRUE(streamed.ok()) << streamed.status().ToString();
  EXPECT_TRUE(reader.at_end());
}

TEST_F(CudaRelaxPayloadTest, RefusedLaunchFeaturesKeepTheirCode) {
  DeviceModulePayload payload;
  payload.grammar = PayloadGrammar::kFfi;
  payload.fmt = "ptx";
  payload.data = ".version 8.0\n.target sm_90\n";
  FunctionInfo info;
  info.arg_types = {DLDataType{kDTypeHandle, 64, 1}};
  info.launch_param_tags = {"blockIdx.x", "tirx.use_cooperative_launch"};
  info.arg_extra_tags = {0};
  payload.functions.emplace_back("coop", info);
  auto module = CreateCudaModule(payload);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(module.status().message().find("kernel 'coop': launch tag 'tirx.use_cooperative_launch'"),
            std::string::npos)
      << module.status().ToString();
}

}  // namespace
}  // namespace sorun
