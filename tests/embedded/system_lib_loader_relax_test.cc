// Relax system-lib models (docs/embedded.md): TVM 0.27's own objects of the MLP built with
// relax.build(..., system_lib=True, system_lib_prefix "relax_mlp_") linked into this test
// (testdata/relax_system_lib: the kernels' lib0.o and the blob's devc.o, registering themselves with
// TVMFFIEnvModRegisterSystemLibSymbol), loaded with Model::LoadSystemLib and compared with TVM's outputs
// and with the same model exported as an ordinary .so. Then the refusals: a wrong prefix, a kernel the
// executable names but nothing registered, a blob cut short or longer than its segment, two generations
// under one prefix. Built against //api:sorun_cpu and the static cores with the Relax VM
// (//embedded:sorun_core, //embedded:sorun_core_vm; also under --config=aarch64, run by qemu). Only the
// public API (api/sorun.h) and the registration function TVM's generated code calls are used.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "api/sorun.h"
#include "tests/util/test_util.h"

// What TVM 0.21+ system-lib objects call from their constructors (runtime/ffi_c_api.h).
extern "C" int TVMFFIEnvModRegisterSystemLibSymbol(const char* name, void* symbol);
// The module blob of the linked fixture (TVM's <prefix>devc.o defines it).
extern "C" const unsigned char relax_mlp___tvm_ffi__library_bin[];

namespace sorun {
namespace {

constexpr char kPrefix[] = "relax_mlp_";

// The float32 payload of a little-endian .npy file (version 1 or 2 header), or empty.
std::vector<float> ReadNpyFloats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 12 || bytes.compare(0, 6, "\x93NUMPY") != 0) return {};
  const bool v1 = bytes[6] == 1;
  const size_t header_at = v1 ? 10 : 12;
  size_t header_len = static_cast<unsigned char>(bytes[8]) | static_cast<size_t>(static_cast<unsigned char>(bytes[9]))
                                                                 << 8;
  if (!v1) header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[10])) << 16;
  if (header_at + header_len > bytes.size() || bytes.find("'<f4'", header_at) == std::string::npos) return {};
  std::vector<float> values((bytes.size() - header_at - header_len) / sizeof(float));
  std::memcpy(values.data(), bytes.data() + header_at + header_len, values.size() * sizeof(float));
  return values;
}

// Runs `model` once on `x` (main's one input) and returns its one output.
std::vector<float> RunOnce(const Model& model, const std::vector<float>& x) {
  auto exec = model.NewExecutor();
  EXPECT_TRUE(exec.ok()) << exec.status().ToString();
  if (!exec.ok()) return {};
  EXPECT_EQ(model.inputs().size(), 1u);
  EXPECT_EQ(model.outputs().size(), 1u);
  auto input = NDArray::Empty(model.inputs()[0].shape, model.inputs()[0].dtype);
  EXPECT_TRUE(input.ok()) << input.status().ToString();
  if (!input.ok() || static_cast<size_t>(input->num_elements()) != x.size()) return {};
  std::memcpy(input->data(), x.data(), x.size() * sizeof(float));
  Status set = exec->SetInput(0, input->dl());
  EXPECT_TRUE(set.ok()) << set.ToString();
  Status run = exec->Run();
  EXPECT_TRUE(run.ok()) << run.ToString();
  if (!run.ok()) return {};
  auto y = exec->GetOutput(0);
  EXPECT_TRUE(y.ok()) << y.status().ToString();
  if (!y.ok()) return {};
  return std::vector<float>(y->data_as<float>(), y->data_as<float>() + y->num_elements());
}

std::string Fixture(const std::string& name) { return testing::Runfile("testdata/relax_system_lib/" + name); }

TEST(RelaxSystemLibTest, PrefixedModelMatchesTvmAndItsSharedLibrary) {
  auto model = Model::LoadSystemLib(kPrefix);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(model->path(), std::string("system-lib:") + kPrefix);
  EXPECT_STREQ(model->executor_kind(), "Relax VM");
  ASSERT_EQ(model->inputs().size(), 1u);
  EXPECT_EQ(model->inputs()[0].name, "x");
  EXPECT_EQ(model->inputs()[0].shape, (std::vector<int64_t>{1, 16}));
  const std::vector<float> x = ReadNpyFloats(Fixture("mlp.input_0.npy"));
  const std::vector<float> expected = ReadNpyFloats(Fixture("mlp.output_0.npy"));
  ASSERT_EQ(x.size(), 16u);
  ASSERT_EQ(expected.size(), 10u);
  const std::vector<float> actual = RunOnce(*model, x);
  ASSERT_EQ(actual.size(), expected.size());
#if defined(__x86_64__)
  // The same kernels TVM ran (x86-64 objects): TVM's outputs exactly, and those of the .so export run by sorun.
  EXPECT_EQ(std::memcmp(actual.data(), expected.data(), expected.size() * sizeof(float)), 0);
  auto shared = Model::Load(Fixture("mlp.so"));
  ASSERT_TRUE(shared.ok()) << shared.status().ToString();
  const std::vector<float> from_so = RunOnce(*shared, x);
  ASSERT_EQ(from_so.size(), actual.size());
  EXPECT_EQ(std::memcmp(actual.data(), from_so.data(), actual.size() * sizeof(float)), 0);
#else
  // Other architectures run their own objects: TVM's x86-64 outputs up to rounding.
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], 1e-5 * (1.0 + std::fabs(expected[i]))) << "output element " << i;
  }
#endif
}

TEST(RelaxSystemLibTest, TwoLoadsRunTheSame) {
  auto a = Model::LoadSystemLib(kPrefix);
  auto b = Model::LoadSystemLib(kPrefix);
  ASSERT_TRUE(a.ok() && b.ok());
  const std::vector<float> x = ReadNpyFloats(Fixture("mlp.input_0.npy"));
  const std::vector<float> ya = RunOnce(*a, x);
  const std::vector<float> yb = RunOnce(*b, x);
  ASSERT_EQ(ya.size(), 10u);
  ASSERT_EQ(yb.size(), 10u);
  EXPECT_EQ(std::memcmp(ya.data(), yb.data(), ya.size() * sizeof(float)), 0);
}

TEST(RelaxSystemLibTest, WrongPrefixIsNotFoundNamingIt) {
  auto model = Model::LoadSystemLib("relax_mlq_");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kNotFound) << model.status().ToString();
  EXPECT_NE(model.status().message().find("no symbol is registered under the prefix 'relax_mlq_'"), std::string::npos)
      << model.status().ToString();
}

// A copy of the linked blob (length prefix + payload), for edits.
std::vector<unsigned char> BlobCopy() {
  uint64_t nbytes = 0;
  for (int i = 0; i < 8; ++i) nbytes |= static_cast<uint64_t>(relax_mlp___tvm_ffi__library_bin[i]) << (8 * i);
  return std::vector<unsigned char>(relax_mlp___tvm_ffi__library_bin, relax_mlp___tvm_ffi__library_bin + 8 + nbytes);
}

TEST(RelaxSystemLibTest, KernelNobodyRegisteredIsRefusedNamingItsSymbol) {
  // The executable's function table renamed to a kernel nothing registers: relax_mlp_relu -> relax_mlp_relv.
  static std::vector<unsigned char> blob = BlobCopy();
  const std::string from = "relax_mlp_relu";
  auto at = std::search(blob.begin(), blob.end(), from.begin(), from.end());
  ASSERT_NE(at, blob.end());
  at[from.size() - 1] = 'v';
  ASSERT_EQ(TVMFFIEnvModRegisterSystemLibSymbol("missing_kernel___tvm_ffi__library_bin", blob.data()), 0);
  auto model = Model::LoadSystemLib("missing_kernel_");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kUnimplemented) << model.status().ToString();
  EXPECT_NE(model.status().message().find("system-lib:missing_kernel_"), std::string::npos)
      << model.status().ToString();
  EXPECT_NE(model.status().message().find("missing kernel"), std::string::npos) << model.status().ToString();
  EXPECT_NE(model.status().message().find("__tvm_ffi_relax_mlp_relv"), std::string::npos) << model.status().ToString();
}

TEST(RelaxSystemLibTest, BlobCutShortIsDataLossNamingTheSymbol) {
  // The length prefix says 40 payload bytes: the import tree fits, the first module's payload does not.
  static std::vector<unsigned char> blob = BlobCopy();
  blob[0] = 40;
  for (int i = 1; i < 8; ++i) blob[static_cast<size_t>(i)] = 0;
  ASSERT_EQ(TVMFFIEnvModRegisterSystemLibSymbol("cut_short___tvm_ffi__library_bin", blob.data()), 0);
  auto model = Model::LoadSystemLib("cut_short_");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kDataLoss) << model.status().ToString();
  EXPECT_NE(model.status().message().find("cut_short___tvm_ffi__library_bin"), std::string::npos)
      << model.status().ToString();
  EXPECT_NE(model.status().message().find("byte"), std::string::npos) << model.status().ToString();
}

// A blob whose length prefix claims more than the program's segment holds: never read past the end.
alignas(64) const unsigned char kOverlongBlob[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f};

TEST(RelaxSystemLibTest, BlobLongerThanItsSegmentIsDataLoss) {
  ASSERT_EQ(TVMFFIEnvModRegisterSystemLibSymbol("overlong_relax___tvm_ffi__library_bin",
                                                const_cast<unsigned char*>(kOverlongBlob)),
            0);
  auto model = Model::LoadSystemLib("overlong_relax_");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kDataLoss) << model.status().ToString();
  EXPECT_NE(model.status().message().find("overlong_relax___tvm_ffi__library_bin"), std::string::npos)
      << model.status().ToString();
}

TEST(RelaxSystemLibTest, TwoGenerationsUnderOnePrefixAreRefused) {
  ASSERT_EQ(TVMFFIEnvModRegisterSystemLibSymbol("two_gen___tvm_ffi__library_bin",
                                                const_cast<unsigned char*>(relax_mlp___tvm_ffi__library_bin)),
            0);
  ASSERT_EQ(TVMFFIEnvModRegisterSystemLibSymbol("two_gen___tvm_dev_mblob", const_cast<unsigned char*>(kOverlongBlob)),
            0);
  auto model = Model::LoadSystemLib("two_gen_");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kFailedPrecondition) << model.status().ToString();
  EXPECT_NE(model.status().message().find("two_gen___tvm_dev_mblob and two_gen___tvm_ffi__library_bin"),
            std::string::npos)
      << model.status().ToString();
}

}  // namespace
}  // namespace sorun
