// LoadOptions::prefetch and GraphExecutor::Warmup(), checked through what they promise about memory
// (deterministic, so unit tests; their effect on time is measured in bench/, docs/performance.md):
// the resident size of the library mapping holding the blob (/proc/self/smaps) after Load with each
// prefetch mode, after Warmup, and that neither changes a result or an input already set.
// The model: two 1024x1024 float32 dense layers (8 MiB of weights, 64-byte aligned: used in place),
// exported once and copied to one file per case (a copy is another inode, so dlopen maps it afresh).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "api/model_loading.h"
#include "graph_executor/graph_builder.h"
#include "graph_executor/graph_executable.h"
#include "packer/exporter.h"
#include "packer/host_code_module.h"
#include "runtime/data_type.h"
#include "tests/util/host_build.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

constexpr int64_t kWidth = 1024;
constexpr long kWeightsKib = 2 * kWidth * kWidth * 4 / 1024;

HostCode NnKernels() {
  HostCode code;
  code.files = {testing::Runfile("testdata/kernels/nn_kernels.c")};
  code.compile_flags = {testing::KernelIncludeFlag(), "-std=c11", "-D_GNU_SOURCE"};
  return code;
}

class WarmupPrefetchTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(Initialize().ok());
    dir_ = new std::string(testing::MakeTempDir("warmup_prefetch"));
    GraphBuilder b;
    int x = b.Input("data", {1, kWidth});
    NamedTensors params;
    for (int i = 0; i < 2; ++i) {
      const std::string name = "fc" + std::to_string(i);
      Tensor w = *Tensor::Empty({kWidth, kWidth}, Float32(), CpuDevice());
      Tensor bias = *Tensor::Empty({kWidth}, Float32(), CpuDevice());
      for (int64_t k = 0; k < kWidth * kWidth; ++k)
        w.data_as<float>()[k] = static_cast<float>((k * 7 + i) % 13) / 4096.0f;
      for (int64_t k = 0; k < kWidth; ++k) bias.data_as<float>()[k] = 0.25f;
      params.emplace_back(name + "_w", w);
      params.emplace_back(name + "_b", bias);
      x = b.Op("sorun_dense_bias_relu", {x, b.Input(name + "_w", {kWidth, kWidth}), b.Input(name + "_b", {kWidth})},
               {1, kWidth}, Float32(), name);
    }
    b.Output(x);
    auto factory = MakeGraphExecutorFactory(*b.BuildJson(), params, MakeHostCodeModule(NnKernels()));
    ASSERT_TRUE(factory.ok()) << factory.status().ToString();
    ASSERT_TRUE(ExportLibrary(*factory, *dir_ + "/model.so").ok());
  }

  static std::string* dir_;

 public:
  // A fresh copy of the exported model (its own inode: a new mapping when loaded).
  static std::string Copy(const std::string& name) {
    const std::string path = *dir_ + "/" + name + ".so";
    std::filesystem::copy_file(*dir_ + "/model.so", path, std::filesystem::copy_options::overwrite_existing);
    return path;
  }

  // The blob's address in the loaded library `path`.
  static const void* BlobOf(const std::string& path) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    EXPECT_NE(handle, nullptr) << path << " is not loaded";
    if (handle == nullptr) return nullptr;
    const void* blob = dlsym(handle, "__tvm_dev_mblob");
    dlclose(handle);  // drops the reference NOLOAD took; the model still holds the library
    return blob;
  }

  // Sets data = 0.5 everywhere, runs, returns output 0.
  static std::vector<float> RunOnce(GraphExecutor& e, bool warm_after_input) {
    Tensor in = *Tensor::Empty({1, kWidth}, Float32(), CpuDevice());
    for (int64_t k = 0; k < kWidth; ++k) in.data_as<float>()[k] = 0.5f;
    EXPECT_TRUE(e.SetInput("data", *in.dl()).ok());
    if (warm_after_input) {
      EXPECT_TRUE(e.Warmup().ok());
    }
    EXPECT_TRUE(e.Run().ok());
    Tensor out = *e.GetOutput(0);
    return std::vector<float>(out.data_as<float>(), out.data_as<float>() + kWidth);
  }
};
std::string* WarmupPrefetchTest::dir_ = nullptr;

long ResidentAfterLoad(const std::string& path, LoadOptions::Prefetch mode, Module* model) {
  LoadOptions options;
  options.verify_checksum = false;
  options.prefetch = mode;
  auto loaded = Load(path, options);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (!loaded.ok()) return -1;
  *model = *loaded;
  const void* blob = WarmupPrefetchTest::BlobOf(path);
  return blob ? testing::ResidentKibOfMappingAt(blob) : -1;
}

// Why the residency checks skip under qemu-user (toolchains/aarch64/qemu_run.sh).
constexpr char kNoGuestResidency[] =
    "the resident pages of the emulated program's mappings are not its own (measured: 152 KiB resident "
    "after kPopulate of 8 MiB)";

TEST_F(WarmupPrefetchTest, DefaultIsWillNeed) { EXPECT_EQ(LoadOptions{}.prefetch, LoadOptions::Prefetch::kWillNeed); }

// kNone and kWillNeed map none of the weights into the process (no RSS); kPopulate maps them all.
TEST_F(WarmupPrefetchTest, OnlyPopulateMapsTheWeightsAtLoad) {
  SORUN_SKIP_UNDER_EMULATION(kNoGuestResidency);
  Module none, willneed, populate;
  const long none_kib = ResidentAfterLoad(Copy("none"), LoadOptions::Prefetch::kNone, &none);
  const long willneed_kib = ResidentAfterLoad(Copy("willneed"), LoadOptions::Prefetch::kWillNeed, &willneed);
  const long populate_kib = ResidentAfterLoad(Copy("populate"), LoadOptions::Prefetch::kPopulate, &populate);
  EXPECT_GE(none_kib, 0);
  EXPECT_LT(none_kib, kWeightsKib / 4) << "a plain load maps only headers and the pages around them";
  EXPECT_LT(willneed_kib, kWeightsKib / 4) << "MADV_WILLNEED must not add the weights to the RSS";
  EXPECT_GE(populate_kib, kWeightsKib) << "kPopulate maps every blob page";
}

// Warmup maps the in-place weights (and the activation pools) without running anything, and keeps an
// input that was set before it: the run after it gives the same result as a run without it.
TEST_F(WarmupPrefetchTest, WarmupMapsTheWeightsAndChangesNoResult) {
  Module cold_model, warm_model;
  const std::string warm_path = Copy("warm");
  ASSERT_LT(ResidentAfterLoad(Copy("cold"), LoadOptions::Prefetch::kNone, &cold_model), kWeightsKib / 4);
  ASSERT_LT(ResidentAfterLoad(warm_path, LoadOptions::Prefetch::kNone, &warm_model), kWeightsKib / 4);
  auto cold = CreateExecutor(cold_model, {CpuDevice()});
  auto warm = CreateExecutor(warm_model, {CpuDevice()});
  ASSERT_TRUE(cold.ok() && warm.ok());
  ASSERT_TRUE((*warm)->Warmup().ok());
  if (testing::TestEmulator().empty()) {
    EXPECT_GE(testing::ResidentKibOfMappingAt(BlobOf(warm_path)), kWeightsKib)
        << "Warmup maps the weights read in place";
  } else {
    std::printf("residency not checked under %s: %s\n", testing::TestEmulator().c_str(), kNoGuestResidency);
  }
  const std::vector<float> want = RunOnce(**cold, /*warm_after_input=*/false);
  EXPECT_EQ(RunOnce(**warm, /*warm_after_input=*/true), want) << "Warmup after SetInput changed the input";
  EXPECT_NE(want[0], 0.0f);  // the model computes something (the comparison is not of two zero vectors)
  EXPECT_TRUE((*warm)->Warmup().ok()) << "Warmup may be called again, after runs";
  EXPECT_EQ(RunOnce(**warm, /*warm_after_input=*/false), want);
}

}  // namespace
}  // namespace sorun
