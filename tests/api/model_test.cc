// sorun::Model (api/sorun.h) on the zoo's real models: both load forms, metadata without running,
// the options, copies and errors.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <string>
#include <vector>

#include "api/sorun.h"
#include "tests/api/api_test_util.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using testing::ReadZooBytes;
using testing::ReadZooNpy;
using testing::ZooFile;

std::string KernelLibrary() { return testing::Runfile("testdata/kernels/libnn_kernels.so"); }

// Runs `model` once on the zoo sample input of `name` and returns the error against the expected output.
double RunSample(const Model& model, const std::string& name) {
  auto exec = model.NewExecutor();
  EXPECT_TRUE(exec.ok()) << exec.status().ToString();
  if (!exec.ok()) return INFINITY;
  NDArray input = ReadZooNpy(name + "_input.npy");
  auto outputs = exec->Run({{"data", &input.dl()}});
  EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
  if (!outputs.ok() || outputs->size() != 1) return INFINITY;
  return testing::MaxRelativeError((*outputs)[0], ReadZooNpy(name + "_expected.npy"));
}

TEST(ModelTest, PackedModelDescribesItsGraphWithoutRunning) {
  auto model = Model::Load(ZooFile("mlp.so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(model->path(), ZooFile("mlp.so"));
  const std::vector<TensorInfo>& in = model->inputs();
  ASSERT_EQ(in.size(), 7u);
  EXPECT_EQ(in[0].name, "data");
  EXPECT_EQ(in[0].shape, (std::vector<int64_t>{1, 64}));
  EXPECT_EQ(DataTypeName(in[0].dtype), "float32");
  EXPECT_FALSE(in[0].is_param);
  EXPECT_EQ(in[1].name, "fc1_w");
  EXPECT_EQ(in[1].shape, (std::vector<int64_t>{128, 64}));
  for (size_t i = 1; i < in.size(); ++i) EXPECT_TRUE(in[i].is_param) << in[i].name;
  ASSERT_EQ(model->outputs().size(), 1u);
  EXPECT_EQ(model->outputs()[0].name, "softmax");
  EXPECT_EQ(model->outputs()[0].shape, (std::vector<int64_t>{1, 10}));
  EXPECT_FALSE(model->outputs()[0].is_param);
  EXPECT_LE(RunSample(*model, "mlp"), testing::kZooTolerance);
}

TEST(ModelTest, EveryZooModelRunsThroughTheFrontDoor) {
  for (const char* name : {"mlp", "cnn", "resblock", "digits"}) {
    auto model = Model::Load(ZooFile(std::string(name) + ".so"));
    ASSERT_TRUE(model.ok()) << name << ": " << model.status().ToString();
    EXPECT_LE(RunSample(*model, name), testing::kZooTolerance) << name;
  }
}

TEST(ModelTest, ThreeFilesGiveTheSameModelAsThePackedFile) {
  auto packed = Model::Load(ZooFile("mlp.so"));
  auto files = Model::LoadFromFiles(ZooFile("mlp.json"), KernelLibrary(), ZooFile("mlp.params"));
  ASSERT_TRUE(packed.ok()) << packed.status().ToString();
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(files->path(), KernelLibrary());
  ASSERT_EQ(files->inputs().size(), packed->inputs().size());
  for (size_t i = 0; i < files->inputs().size(); ++i) {
    EXPECT_EQ(files->inputs()[i].name, packed->inputs()[i].name);
    EXPECT_EQ(files->inputs()[i].shape, packed->inputs()[i].shape);
    EXPECT_EQ(files->inputs()[i].is_param, packed->inputs()[i].is_param) << files->inputs()[i].name;
  }
  EXPECT_LE(RunSample(*files, "mlp"), testing::kZooTolerance);
}

TEST(ModelTest, ExecutorsOfOneModelShareOneCopyOfTheWeights) {
  auto model = Model::LoadFromFiles(ZooFile("mlp.json"), KernelLibrary(), ZooFile("mlp.params"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto a = model->NewExecutor();
  auto b = model->NewExecutor();
  ASSERT_TRUE(a.ok() && b.ok());
  // A weight is bound in place: both executors see the same memory.
  auto wa = a->GetInput(1);
  auto wb = b->GetInput(1);
  ASSERT_TRUE(wa.ok() && wb.ok());
  EXPECT_EQ(wa->data(), wb->data());
  ASSERT_EQ(a->Memory().size(), 1u);
  EXPECT_GT(a->Memory()[0].weight_bytes, 0u);
}

TEST(ModelTest, ThreeFilesWithoutParamsTakeThemThroughLoadParams) {
  auto model = Model::LoadFromFiles(ZooFile("mlp.json"), KernelLibrary(), "");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  for (const TensorInfo& t : model->inputs()) EXPECT_FALSE(t.is_param) << t.name;
  auto exec = model->NewExecutor();
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  ASSERT_TRUE(exec->LoadParams(ReadZooBytes("mlp.params")).ok());
  NDArray input = ReadZooNpy("mlp_input.npy");
  auto outputs = exec->Run({{"data", &input.dl()}});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_LE(testing::MaxRelativeError((*outputs)[0], ReadZooNpy("mlp_expected.npy")), testing::kZooTolerance);
}

TEST(ModelTest, RuntimeOptionsLoadTheSameModel) {
  for (auto prefetch :
       {RuntimeOptions::Prefetch::kNone, RuntimeOptions::Prefetch::kWillNeed, RuntimeOptions::Prefetch::kPopulate}) {
    RuntimeOptions options;
    options.verify_checksum = true;
    options.prefetch = prefetch;
    auto model = Model::Load(ZooFile("mlp.so"), options);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    EXPECT_LE(RunSample(*model, "mlp"), testing::kZooTolerance);
  }
}

TEST(ModelTest, AnExplicitChecksumChoiceWinsOverTheEnvironment) {
  ASSERT_TRUE(Initialize().ok());  // validates the environment once, before it is spoiled below
  setenv("SORUN_VERIFY_CHECKSUM", "maybe", 1);
  RuntimeOptions explicit_choice;
  explicit_choice.verify_checksum = false;
  auto chosen = Model::Load(ZooFile("mlp.so"), explicit_choice);
  auto from_env = Model::Load(ZooFile("mlp.so"));
  unsetenv("SORUN_VERIFY_CHECKSUM");
  EXPECT_TRUE(chosen.ok()) << chosen.status().ToString();
  EXPECT_ERROR(from_env.status(), StatusCode::kInvalidArgument, "SORUN_VERIFY_CHECKSUM");
}

TEST(ModelTest, CopiesShareTheModelAndOutliveTheOriginal) {
  auto loaded = Model::Load(ZooFile("mlp.so"));
  ASSERT_TRUE(loaded.ok());
  Model copy = *loaded;
  EXPECT_EQ(&copy.inputs(), &loaded->inputs());  // one shared state, not a copy of it
  Model moved = std::move(*loaded);
  EXPECT_TRUE(loaded->inputs().empty());  // NOLINT(bugprone-use-after-move): moved-from state is defined
  EXPECT_ERROR(loaded->NewExecutor().status(), StatusCode::kFailedPrecondition, "moved-from");
  EXPECT_LE(RunSample(copy, "mlp"), testing::kZooTolerance);
  EXPECT_LE(RunSample(moved, "mlp"), testing::kZooTolerance);
}

TEST(ModelTest, LoadErrorsNameTheFileAndTheProblem) {
  const std::string missing = ZooFile("no_such_model.so");
  auto m = Model::Load(missing);
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(testing::Contains(m.status().message(), "no_such_model.so")) << m.status().ToString();

  // A bare kernel library is not a packed model.
  EXPECT_ERROR(Model::Load(KernelLibrary()).status(), StatusCode::kFailedPrecondition, "libnn_kernels.so",
               "not a GraphExecutorFactory");

  // Three files: another model's params, a missing graph.
  EXPECT_ERROR(Model::LoadFromFiles(ZooFile("mlp.json"), KernelLibrary(), ZooFile("cnn.params")).status(),
               StatusCode::kInvalidArgument, "cnn.params", "is not an input of", "mlp.json");
  auto no_graph = Model::LoadFromFiles(ZooFile("no_such_graph.json"), KernelLibrary(), "");
  ASSERT_FALSE(no_graph.ok());
  EXPECT_TRUE(testing::Contains(no_graph.status().message(), "no_such_graph.json")) << no_graph.status().ToString();
}

}  // namespace
}  // namespace sorun
