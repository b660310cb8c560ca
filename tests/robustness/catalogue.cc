#include "tests/robustness/catalogue.h"

#include <cctype>
#include <cstdio>
#include <set>

#include "base/subprocess.h"
#include "format/binary_writer.h"
#include "graph_executor/graph_builder.h"
#include "packer/exporter.h"
#include "packer/module_serializer.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace catalogue {

CatalogueEnv& CatalogueEnv::Get() {
  static CatalogueEnv* env = [] {
    auto* e = new CatalogueEnv();
    EXPECT_TRUE(Initialize().ok());
    e->dir = testing::MakeTempDir("catalogue");
    e->kernels_o = e->dir + "/nn_kernels.o";
    Status s = RunCommand({CCompiler(), "-c", "-fPIC", "-O2", "-std=c11", "-D_GNU_SOURCE", testing::KernelIncludeFlag(),
                           testing::Runfile("testdata/kernels/nn_kernels.c"), "-o", e->kernels_o});
    EXPECT_TRUE(s.ok()) << s.ToString();
    GraphBuilder b;
    int x = b.Input("data", {1, 8});
    int h = b.Op("sorun_dense_bias_relu", {x, b.Input("w", {4, 8}), b.Input("b", {4})}, {1, 4}, Float32(), "fc");
    b.Output(b.Op("sorun_softmax", {h}, {1, 4}, Float32(), "softmax"));
    auto json = b.BuildJson();
    EXPECT_TRUE(json.ok()) << json.status().ToString();
    if (json.ok()) e->good_json = *json;
    auto w = Tensor::Empty({4, 8}, Float32(), CpuDevice());
    auto bias = Tensor::Empty({4}, Float32(), CpuDevice());
    EXPECT_TRUE(w.ok() && bias.ok());
    for (int i = 0; i < 32; ++i) w->data_as<float>()[i] = 0.1f * static_cast<float>(i % 5);
    for (int i = 0; i < 4; ++i) bias->data_as<float>()[i] = 0.01f * static_cast<float>(i);
    e->params = {{"w", *w}, {"b", *bias}};
    e->good_so = e->dir + "/good.so";
    auto f = MakeGraphExecutorFactory(e->good_json, e->params, e->Host());
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    if (f.ok()) {
      EXPECT_TRUE(ExportLibrary(*f, e->good_so).ok());
    }
    return e;
  }();
  return *env;
}

Module CatalogueEnv::Host() const { return MakeHostCodeModule(HostCode{{kernels_o}, {}, {}}); }

std::string CatalogueEnv::Path(const std::string& name) { return dir + "/" + std::to_string(count++) + "_" + name; }

std::string CatalogueEnv::WithBlob(const std::string& payload, const std::string& name) {
  std::string path = Path(name);
  EXPECT_TRUE(LinkLibraryWithBlob(&payload, {HostCode{{kernels_o}, {}, {}}}, path).ok());
  return path;
}

std::string CatalogueEnv::WithFactory(const std::string& json, const NamedTensors& p, const std::string& name) {
  BinaryWriter w(8);
  w.WriteU64(3);
  w.WriteString("GraphExecutorFactory");
  w.WriteString(json);
  EXPECT_TRUE(WriteNamedTensorSection(p, &w, true, true).ok());
  w.WriteString("default");
  w.WriteString("_lib");
  w.WriteString("_import_tree");
  w.WriteU64Vector({0, 1, 1});
  w.WriteU64Vector({1});
  return WithBlob(w.bytes(), name);
}

std::string CatalogueEnv::Str(const std::string& s) {
  BinaryWriter w;
  w.WriteString(s);
  return w.bytes();
}

std::string CatalogueEnv::U64(uint64_t v) {
  BinaryWriter w;
  w.WriteU64(v);
  return w.bytes();
}

Status LoadStatus(const std::string& path) { return Load(path).status(); }

Status RunGood(const std::function<Status(GraphExecutor&)>& body) {
  auto model = Load(CatalogueEnv::Get().good_so);
  if (!model.ok()) return model.status();
  auto exec = CreateExecutor(*model, {CpuDevice()});
  if (!exec.ok()) return exec.status();
  return body(**exec);
}

void ExpectGoodModelStillWorks() {
  CatalogueEnv& env = CatalogueEnv::Get();
  auto model = Load(env.good_so);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto exec = CreateExecutor(*model, {CpuDevice()});
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  auto x = Tensor::Empty({1, 8}, Float32(), CpuDevice());
  ASSERT_TRUE(x.ok());
  for (int i = 0; i < 8; ++i) x->data_as<float>()[i] = 1.0f;
  ASSERT_TRUE((*exec)->SetInput("data", *x->dl()).ok());
  ASSERT_TRUE((*exec)->Run().ok());
  auto out = (*exec)->GetOutput(0);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  float sum = 0;
  for (int i = 0; i < 4; ++i) sum += out->data_as<float>()[i];
  EXPECT_NEAR(sum, 1.0f, 1e-5);
}

std::string CaseName(const ::testing::TestParamInfo<CatalogueCase>& info) {
  std::string name;
  for (char c : info.param.name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      name += c;
    } else if (!name.empty() && name.back() != '_') {
      name += '_';
    }
  }
  while (!name.empty() && name.back() == '_') name.pop_back();
  // GoogleTest needs unique names within one instantiation: suffix the index.
  return name + "_" + std::to_string(info.index);
}

// Binaries that link the catalogue's helpers without instantiating it (tests/tools) are fine.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BadInputCatalogueTest);

TEST_P(BadInputCatalogueTest, IsAClearErrorAndTheProcessStaysHealthy) {
  const CatalogueCase& c = GetParam();
  ASSERT_TRUE(c.run) << c.name << " has no body";
  Status s = c.run();
  ASSERT_FALSE(s.ok()) << c.name << " was accepted";
  EXPECT_FALSE(s.message().empty());
  EXPECT_NE(s.message().find(c.expected), std::string::npos) << c.name << ": got '" << s.message() << "'";
  ExpectGoodModelStillWorks();
}

}  // namespace catalogue
}  // namespace sorun
