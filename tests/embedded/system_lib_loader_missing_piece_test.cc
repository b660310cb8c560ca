// A Relax system-lib model with a piece missing from the link (docs/embedded.md): this test links TVM 0.27's
// blob object of the unprefixed MLP without its kernels' object, and the kernels' object of the prefixed
// build ("relax_mlp_") without its blob (testdata/relax_system_lib). Each is refused at load with an
// error naming the prefix and what is missing; nothing runs. Built with the static core
// //embedded:sorun_core_vm.
#include <gtest/gtest.h>

#include <string>

#include "api/sorun.h"

namespace sorun {
namespace {

TEST(RelaxSystemLibPiecesTest, BlobWithoutItsKernelsIsRefusedNamingThem) {
  auto model = Model::LoadSystemLib();
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kUnimplemented) << model.status().ToString();
  EXPECT_EQ(model.status().message().rfind("system-lib: __tvm_ffi__library_bin", 0), 0u) << model.status().ToString();
  EXPECT_NE(model.status().message().find("missing kernel"), std::string::npos) << model.status().ToString();
  EXPECT_NE(model.status().message().find("'__tvm_ffi_matmul'"), std::string::npos) << model.status().ToString();
}

TEST(RelaxSystemLibPiecesTest, KernelsWithoutTheirBlobAreRefusedAsNoModel) {
  auto model = Model::LoadSystemLib("relax_mlp_");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kFailedPrecondition) << model.status().ToString();
  EXPECT_NE(model.status().message().find("system-lib:relax_mlp_: no relax_mlp___tvm_dev_mblob is registered (nor "
                                          "relax_mlp___tvm_ffi__library_bin"),
            std::string::npos)
      << model.status().ToString();
}

}  // namespace
}  // namespace sorun
