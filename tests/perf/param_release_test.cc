// Parameters of a foreign-style library (unaligned, as TVM's exporter writes them) are copied ONCE and
// the source pages in the mapped library are released from the process as the copy passes them, so
// peak memory is the copy plus about one chunk. Checked through the library mapping's resident size
// (/proc/self/smaps) right after Load, with checksum verification on (every blob page faulted in
// first) and off; aligned parameters of sorun's own export stay in place instead. Memory, not time:
// deterministic, so it is a unit test (the peak itself is measured by bench/run_memory.sh).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "api/model_loading.h"
#include "format/binary_writer.h"
#include "graph_executor/graph_builder.h"
#include "graph_executor/graph_executable.h"
#include "packer/exporter.h"
#include "packer/host_code_module.h"
#include "runtime/data_type.h"
#include "runtime/tensor_io.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

constexpr int64_t kWidth = 1024;  // two 4 MiB weights

HostCode NnKernels() {
  HostCode code;
  code.files = {testing::Runfile("testdata/kernels/nn_kernels.c")};
  code.compile_flags = {testing::KernelIncludeFlag(), "-std=c11", "-D_GNU_SOURCE"};
  return code;
}

struct Model {
  std::string json;
  NamedTensors params;
};

Model MakeModel() {
  GraphBuilder b;
  int x = b.Input("data", {1, kWidth});
  Model m;
  for (int i = 0; i < 2; ++i) {
    std::string name = "fc" + std::to_string(i);
    Tensor w = *Tensor::Empty({kWidth, kWidth}, Float32(), CpuDevice());
    Tensor bias = *Tensor::Empty({kWidth}, Float32(), CpuDevice());
    for (int64_t k = 0; k < kWidth * kWidth; ++k)
      w.data_as<float>()[k] = static_cast<float>((k * 7 + i) % 13) / 1024.0f;
    for (int64_t k = 0; k < kWidth; ++k) bias.data_as<float>()[k] = 0.5f;
    m.params.emplace_back(name + "_w", w);
    m.params.emplace_back(name + "_b", bias);
    x = b.Op("sorun_dense_bias_relu", {x, b.Input(name + "_w", {kWidth, kWidth}), b.Input(name + "_b", {kWidth})},
             {1, kWidth}, Float32(), name);
  }
  b.Output(x);
  m.json = *b.BuildJson();
  return m;
}

// TVM's layout: no alignment pads; the JSON padded so every tensor's data sits at 2 mod 4 in the file.
std::string ForeignPayload(Model m) {
  BinaryWriter w(/*origin=*/8);
  w.WriteU64(3);
  w.WriteString("GraphExecutorFactory");
  uint64_t names = 16;
  for (const auto& kv : m.params) names += 8 + kv.first.size();
  uint64_t first_data = w.AbsolutePosition() + 8 + m.json.size() + names + NDArrayHeaderBytes(2);
  m.json.append(static_cast<size_t>((6 - first_data % 4) % 4), ' ');
  w.WriteString(m.json);
  EXPECT_TRUE(WriteNamedTensorSection(m.params, &w, /*align_data=*/false, /*leading_count=*/true).ok());
  w.WriteString("default");
  w.WriteString("_lib");
  w.WriteString("_import_tree");
  w.WriteU64Vector({0, 1, 1});
  w.WriteU64Vector({1});
  return w.TakeBytes();
}

class ParamReleaseTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(Initialize().ok());
    dir_ = new std::string(testing::MakeTempDir("param_release"));
    Model m = MakeModel();
    std::string payload = ForeignPayload(m);
    ASSERT_TRUE(LinkLibraryWithBlob(&payload, {NnKernels()}, *dir_ + "/foreign.so").ok());
    auto factory = MakeGraphExecutorFactory(m.json, m.params, MakeHostCodeModule(NnKernels()));
    ASSERT_TRUE(factory.ok());
    ASSERT_TRUE(ExportLibrary(*factory, *dir_ + "/aligned.so").ok());
  }
  static std::string* dir_;
};
std::string* ParamReleaseTest::dir_ = nullptr;

// Loads `file`, checks the params (in place or copied, values intact, one run) and returns the
// resident KiB of the library mapping holding the blob right after the load.
long LoadAndMeasure(const std::string& path, bool verify, bool expect_in_place) {
  LoadOptions options;
  options.verify_checksum = verify;
  auto model = Load(path, options);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return -1;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(handle, nullptr);
  const void* blob = handle ? dlsym(handle, "__tvm_dev_mblob") : nullptr;
  EXPECT_NE(blob, nullptr);
  long kib = testing::ResidentKibOfMappingAt(blob);
  auto factory = GetFactory(*model);
  EXPECT_TRUE(factory.ok());
  Model reference = MakeModel();
  for (const auto& kv : (*factory)->weights()->params()) {
    EXPECT_EQ(kv.second.node()->read_only, expect_in_place) << kv.first;
    const Tensor* want = nullptr;
    for (const auto& r : reference.params) want = r.first == kv.first ? &r.second : want;
    EXPECT_TRUE(want && std::memcmp(want->data(), kv.second.data(), want->nbytes()) == 0) << kv.first;
  }
  auto exec = CreateExecutor(*model, {CpuDevice()});
  EXPECT_TRUE(exec.ok());
  EXPECT_TRUE((*exec)->Run().ok());
  if (handle) dlclose(handle);
  return kib;
}

TEST_F(ParamReleaseTest, CopiedParamsReleaseTheirSourcePages) {
  for (bool verify : {true, false}) {
    long kib = LoadAndMeasure(*dir_ + "/foreign.so", verify, /*expect_in_place=*/false);
    // 8 MiB of weights were read; what stays mapped is headers, boundary pages and the code.
    EXPECT_GE(kib, 0);
    EXPECT_LT(kib, 1024) << "verify " << verify << ": the copied params' source pages are still resident";
  }
}

TEST_F(ParamReleaseTest, AlignedParamsAreUsedInPlace) {
  long kib = LoadAndMeasure(*dir_ + "/aligned.so", /*verify=*/true, /*expect_in_place=*/true);
  // Verification read every page of the blob, and nothing releases pages that are in use.
  EXPECT_GT(kib, 8 * 1024);
}

}  // namespace
}  // namespace sorun
