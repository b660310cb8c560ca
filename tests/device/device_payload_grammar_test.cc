// The device-module payload codec in both FunctionInfo grammars (backends/device_module_payload.h):
// real TVM 0.27 payloads (testdata/relax_device: opencl, cuda source, nvptx ptx) in the ffi grammar,
// detection between the grammars, and hand-built ffi payloads carrying each launch feature sorun
// refuses. No driver is touched.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/device_module_payload.h"
#include "format/binary_reader.h"
#include "format/binary_writer.h"
#include "runtime/data_type.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

std::string RealPayload(const std::string& name) {
  return testing::ReadFileOrDie(testing::Runfile("testdata/relax_device/" + name + ".payload"));
}

Status Read(const std::string& bytes, PayloadGrammar grammar, DeviceModulePayload* out, bool* at_end = nullptr) {
  BinaryReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "payload");
  Status s = ReadDeviceModulePayload(reader, "opencl", out, grammar);
  if (at_end) *at_end = reader.at_end();
  return s;
}

std::string Write(const DeviceModulePayload& payload) {
  BinaryWriter w;
  WriteDeviceModulePayload(payload, &w);
  return std::string(w.bytes().data(), w.size());
}

DLDataType Handle64() { return DLDataType{kDTypeHandle, 64, 1}; }

// One kernel "k" (two handle arguments, extra tags {0, 0}) with `tags`, in `grammar`.
DeviceModulePayload OneKernel(PayloadGrammar grammar, std::vector<std::string> tags,
                              std::vector<int32_t> extra = {kArgExtraTagNone, kArgExtraTagNone}) {
  DeviceModulePayload p;
  p.grammar = grammar;
  p.fmt = "cl";
  FunctionInfo info;
  info.name = "k";
  info.arg_types = {Handle64(), Handle64()};
  info.launch_param_tags = std::move(tags);
  if (grammar == PayloadGrammar::kFfi) info.arg_extra_tags = std::move(extra);
  p.functions.emplace_back("k", info);
  p.data = "__kernel void k(__global float* a, __global float* b) {}";
  return p;
}

TEST(DevicePayloadGrammarTest, RealOpenclPayloadOfTvm027) {
  const std::string bytes = RealPayload("mlp_opencl");
  DeviceModulePayload p;
  bool at_end = false;
  ASSERT_TRUE(Read(bytes, PayloadGrammar::kFfi, &p, &at_end).ok());
  EXPECT_TRUE(at_end);
  EXPECT_EQ(p.grammar, PayloadGrammar::kFfi);
  EXPECT_EQ(p.fmt, "cl");
  ASSERT_EQ(p.functions.size(), 3u);
  const char* names[] = {"fused_matmul_add_relu_kernel", "fused_matmul_add_relu_kernel_1", "matmul1_kernel"};
  for (size_t i = 0; i < 3; ++i) {
    const auto& [key, info] = p.functions[i];
    EXPECT_EQ(key, names[i]);
    EXPECT_EQ(info.name, key);  // filled in since 0.21
    ASSERT_EQ(info.arg_types.size(), 3u) << key;
    for (DLDataType t : info.arg_types) EXPECT_EQ(DTypeToString(t), DTypeToString(Handle64())) << key;
    EXPECT_EQ(info.launch_param_tags, (std::vector<std::string>{"blockIdx.x", "threadIdx.x"})) << key;
    EXPECT_EQ(info.arg_extra_tags, (std::vector<int32_t>{0, 0, 0})) << key;
    auto config = LaunchConfig::FromFunctionInfo(key, info);
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    EXPECT_EQ(config->num_packed_args(), 5);
    EXPECT_NE(p.data.find(std::string("// Function: ") + names[i]), std::string::npos);
  }
}

TEST(DevicePayloadGrammarTest, DetectTellsTheRealPayloadsApart) {
  for (const char* name : {"mlp_opencl", "mlp_cuda", "mlp_nvptx"}) {
    const std::string bytes = RealPayload(name);
    DeviceModulePayload ffi, detected;
    ASSERT_TRUE(Read(bytes, PayloadGrammar::kFfi, &ffi).ok()) << name;
    bool at_end = false;
    Status s = Read(bytes, PayloadGrammar::kDetect, &detected, &at_end);
    ASSERT_TRUE(s.ok()) << name << ": " << s.ToString();
    EXPECT_TRUE(at_end) << name;
    EXPECT_EQ(detected.grammar, PayloadGrammar::kFfi) << name;
    EXPECT_EQ(detected.functions.size(), ffi.functions.size()) << name;
    EXPECT_EQ(detected.data, ffi.data) << name;
    // The legacy grammar cannot read them to their end.
    DeviceModulePayload legacy;
    at_end = false;
    s = Read(bytes, PayloadGrammar::kLegacy, &legacy, &at_end);
    EXPECT_FALSE(s.ok() && at_end) << name;
  }
}

TEST(DevicePayloadGrammarTest, RealCudaPayloadsOfTvm027) {
  DeviceModulePayload source, ptx;
  ASSERT_TRUE(Read(RealPayload("mlp_cuda"), PayloadGrammar::kFfi, &source).ok());
  EXPECT_EQ(source.fmt, "cuda");  // no CUDA driver at export: CUDA C++ source
  EXPECT_NE(source.data.find("__global__"), std::string::npos);
  EXPECT_EQ(source.functions.size(), 3u);
  ASSERT_TRUE(Read(RealPayload("mlp_nvptx"), PayloadGrammar::kFfi, &ptx).ok());
  EXPECT_EQ(ptx.fmt, "ptx");
  // TVM 0.27's nvptx target (its bundled LLVM) declares the kernels ".func", not ".entry": the driver
  // cannot launch them (cuModuleGetFunction finds no such kernel). What TVM writes, recorded here.
  EXPECT_NE(ptx.data.find(".visible .func matmul1_kernel("), std::string::npos);
  EXPECT_EQ(ptx.data.find(".entry"), std::string::npos);
  ASSERT_NE(ptx.Find("matmul1_kernel"), nullptr);
  EXPECT_EQ(ptx.Find("matmul1_kernel")->arg_extra_tags, (std::vector<int32_t>{0, 0, 0}));
}

TEST(DevicePayloadGrammarTest, EveryTruncationOfTheRealPayloadIsRefused) {
  const std::string bytes = RealPayload("mlp_opencl");
  for (size_t n = 0; n < bytes.size(); ++n) {
    DeviceModulePayload p;
    Status s = Read(bytes.substr(0, n), PayloadGrammar::kDetect, &p);
    ASSERT_FALSE(s.ok()) << "prefix of " << n << " bytes";
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.ToString();
  }
}

TEST(DevicePayloadGrammarTest, RoundTripsInTheirOwnGrammar) {
  DeviceModulePayload real;
  ASSERT_TRUE(Read(RealPayload("mlp_opencl"), PayloadGrammar::kFfi, &real).ok());
  const std::string written = Write(real);
  DeviceModulePayload back;
  ASSERT_TRUE(Read(written, PayloadGrammar::kDetect, &back).ok());
  EXPECT_EQ(back.grammar, PayloadGrammar::kFfi);
  EXPECT_EQ(Write(back), written);

  // Legacy payloads keep their bytes and are detected as legacy, with one kernel or several, with
  // arguments or none.
  DeviceModulePayload legacy = OneKernel(PayloadGrammar::kLegacy, {"blockIdx.x", "tir.use_dyn_shared_memory"});
  FunctionInfo none;
  legacy.functions.emplace_back("l_no_args", none);
  for (size_t kernels : {1u, 2u}) {
    DeviceModulePayload p = legacy;
    p.functions.resize(kernels);
    const std::string bytes = Write(p);
    DeviceModulePayload again;
    bool at_end = false;
    Status s = Read(bytes, PayloadGrammar::kDetect, &again, &at_end);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(at_end);
    EXPECT_EQ(again.grammar, PayloadGrammar::kLegacy);
    EXPECT_TRUE(again.functions[0].second.arg_extra_tags.empty());
    EXPECT_EQ(Write(again), bytes);
  }
}

TEST(DevicePayloadGrammarTest, FfiGrammarAcceptsTirxDynamicSharedMemoryAndNoExtraTags) {
  for (const char* tag : {"tir.use_dyn_shared_memory", "tirx.use_dyn_shared_memory"}) {
    DeviceModulePayload p;
    ASSERT_TRUE(Read(Write(OneKernel(PayloadGrammar::kFfi, {"threadIdx.x", tag})), PayloadGrammar::kDetect, &p).ok());
    auto config = LaunchConfig::FromFunctionInfo("k", p.functions[0].second);
    ASSERT_TRUE(config.ok());
    EXPECT_TRUE(config->use_dyn_shared_memory) << tag;
    EXPECT_EQ(config->num_packed_args(), 4);
  }
  DeviceModulePayload p;
  ASSERT_TRUE(Read(Write(OneKernel(PayloadGrammar::kFfi, {"blockIdx.x"}, {})), PayloadGrammar::kDetect, &p).ok());
  EXPECT_EQ(p.grammar, PayloadGrammar::kFfi);
  Status s = Read(Write(OneKernel(PayloadGrammar::kFfi, {"tirx.use_dyn_shared_memory", "blockIdx.x"})),
                  PayloadGrammar::kFfi, &p);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("'tirx.use_dyn_shared_memory' must be the last tag"), std::string::npos) << s.ToString();
}

TEST(DevicePayloadGrammarTest, RefusesLaunchFeaturesSorunCannotHonour) {
  const struct {
    const char* tag;
    const char* what;
  } kCases[] = {
      {"tirx.use_cooperative_launch", "cooperative launch"},
      {"tir.use_cooperative_launch", "cooperative launch"},
      {"tirx.use_programtic_dependent_launch", "programmatic dependent launch"},
      {"tir.use_programtic_dependent_launch", "programmatic dependent launch"},
      {"tirx.use_required_block_dimension", "required block dimension"},
      {"clusterCtaIdx.x", "cluster"},
      {"preferredClusterCtaIdx.y", "cluster"},
  };
  for (const auto& c : kCases) {
    for (PayloadGrammar grammar : {PayloadGrammar::kFfi, PayloadGrammar::kDetect}) {
      DeviceModulePayload p;
      Status s = Read(Write(OneKernel(PayloadGrammar::kFfi, {"blockIdx.x", c.tag, "threadIdx.x"})), grammar, &p);
      ASSERT_EQ(s.code(), StatusCode::kUnimplemented) << c.tag << ": " << s.ToString();
      EXPECT_NE(s.message().find("payload byte 18: opencl payload: kernel 'k': launch tag '" + std::string(c.tag) +
                                 "' asks for "),
                std::string::npos)
          << s.ToString();
      EXPECT_NE(s.message().find(c.what), std::string::npos) << s.ToString();
    }
  }
}

TEST(DevicePayloadGrammarTest, RefusesTensorMapAndUnknownExtraTags) {
  DeviceModulePayload p;
  Status s = Read(Write(OneKernel(PayloadGrammar::kFfi, {"blockIdx.x"}, {kArgExtraTagNone, kArgExtraTagTensorMap})),
                  PayloadGrammar::kFfi, &p);
  ASSERT_EQ(s.code(), StatusCode::kUnimplemented) << s.ToString();
  EXPECT_NE(s.message().find("kernel 'k' argument 1: arg_extra_tags 1 (TensorMap"), std::string::npos) << s.ToString();

  s = Read(Write(OneKernel(PayloadGrammar::kFfi, {"blockIdx.x"}, {7})), PayloadGrammar::kFfi, &p);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("argument 0: unknown arg_extra_tags value 7"), std::string::npos) << s.ToString();

  s = Read(Write(OneKernel(PayloadGrammar::kFfi, {"blockIdx.x"}, {0, 0, 0})), PayloadGrammar::kFfi, &p);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("3 arg_extra_tags for 2 arguments"), std::string::npos) << s.ToString();

  // An impossible count is refused before anything is allocated.
  std::string bytes = Write(OneKernel(PayloadGrammar::kFfi, {"blockIdx.x"}, {}));
  const std::string zero_count(8, '\0');
  const size_t at = bytes.find(zero_count, bytes.find("blockIdx.x"));
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 8, std::string("\xff\xff\xff\xff\xff\xff\xff\x0f", 8));
  s = Read(bytes, PayloadGrammar::kFfi, &p);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("arg_extra_tags: count"), std::string::npos) << s.ToString();
}

TEST(DevicePayloadGrammarTest, LegacyGrammarIsUnchanged) {
  // tirx.* flags and extra tags do not exist there: the legacy reader reads what it always read.
  DeviceModulePayload p;
  const std::string legacy = Write(OneKernel(PayloadGrammar::kLegacy, {"blockIdx.x", "threadIdx.x"}));
  bool at_end = false;
  ASSERT_TRUE(Read(legacy, PayloadGrammar::kLegacy, &p, &at_end).ok());
  EXPECT_TRUE(at_end);
  Status s = Read(Write(OneKernel(PayloadGrammar::kLegacy, {"vthread"})), PayloadGrammar::kLegacy, &p);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("unknown launch tag 'vthread'"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace sorun
