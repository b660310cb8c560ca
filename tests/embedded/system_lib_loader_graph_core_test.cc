// A Relax system-lib model linked with the graph-executor-only static core (//embedded:sorun_core_graph,
// no Relax VM): Model::LoadSystemLib refuses it as Unimplemented, naming the registered blob and the
// runtimes that run it, instead of misreading the tvm-ffi blob.
#include <gtest/gtest.h>

#include <string>

#include "api/sorun.h"

namespace sorun {
namespace {

TEST(RelaxSystemLibGraphCoreTest, RelaxModelNeedsTheVm) {
  auto model = Model::LoadSystemLib("relax_mlp_");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kUnimplemented) << model.status().ToString();
  EXPECT_NE(model.status().message().find("system-lib:relax_mlp_: relax_mlp___tvm_ffi__library_bin is registered"),
            std::string::npos)
      << model.status().ToString();
  EXPECT_NE(model.status().message().find("does not link the Relax VM"), std::string::npos)
      << model.status().ToString();
}

}  // namespace
}  // namespace sorun
