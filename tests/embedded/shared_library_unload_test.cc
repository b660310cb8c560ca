// A Relax system-lib build linked into a shared library (testdata/relax_system_lib:mlp_system_lib.so, TVM
// 0.27's objects of the unprefixed MLP) and loaded with Model::Load: it runs as an ordinary export, its
// constructors having registered its symbols with TVMFFIEnvModRegisterSystemLibSymbol on the way. Once the
// model is gone and ld.so has unmapped the library, those registrations are forgotten: Model::LoadSystemLib
// finds nothing instead of reading unmapped memory. Built against //api:sorun_cpu.
#include <gtest/gtest.h>

#include <string>

#include "api/sorun.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

TEST(RelaxSystemLibUnloadTest, RegistrationsGoWithTheUnloadedLibrary) {
  {
    auto model = Model::Load(testing::Runfile("testdata/relax_system_lib/mlp_system_lib.so"));
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    EXPECT_STREQ(model->executor_kind(), "Relax VM");
    auto exec = model->NewExecutor();
    ASSERT_TRUE(exec.ok()) << exec.status().ToString();
    auto x = NDArray::Empty(model->inputs()[0].shape, model->inputs()[0].dtype);
    ASSERT_TRUE(x.ok());
    for (int64_t i = 0; i < x->num_elements(); ++i) x->data_as<float>()[i] = 0.5f;
    ASSERT_TRUE(exec->SetInput(0, x->dl()).ok());
    Status run = exec->Run();
    ASSERT_TRUE(run.ok()) << run.ToString();
  }
  auto after = Model::LoadSystemLib();
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.status().code(), StatusCode::kNotFound) << after.status().ToString();
}

}  // namespace
}  // namespace sorun
