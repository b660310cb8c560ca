// The "cuda" module without running kernels: payload round trips of every image format through the
// blob loader (byte-identical re-serialization), malformed payloads, function lookup, and — without
// a driver — clean "no CUDA driver" errors from kernel calls while the module tree still loads and
// its CPU part runs. Works with a driver too: the loader then checks the images on the device.
#include "backends/cuda/cuda_module.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <ostream>
#include <string>
#include <vector>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_devices.h"
#include "format/binary_reader.h"
#include "runtime/blob_loader.h"
#include "runtime/data_type.h"
#include "runtime/library_module.h"
#include "runtime/tensor.h"
#include "tests/cuda/cuda_test_kernels.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using testing::HaveTestKernelImages;
using testing::LoadThroughBlobLoader;
using testing::SaveModule;
using testing::SerializePayload;
using testing::TestKernelImagePath;
using testing::TestKernelPayload;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

struct ImageCase {
  const char* fmt;   // the payload's fmt label
  const char* file;  // nvcc output in testdata/cuda
  const char* sm;    // the only architecture the image runs on, or "" (any sm_80+)
};

// Names the case in gtest's messages.
void PrintTo(const ImageCase& c, std::ostream* os) { *os << c.fmt << " image " << c.file; }

// fmt "cubin" with a fatbin inside is what TVM v0.9+ writes (docs/spec/FORMAT.md section 8.1).
const ImageCase kImages[] = {
    {"ptx", "test_kernels.ptx", ""},
    {"cubin", "test_kernels_sm90.cubin", "sm_90"},
    {"fatbin", "test_kernels.fatbin", ""},
    {"cubin", "test_kernels.fatbin", ""},
};

class CudaModuleTest : public ::testing::TestWithParam<ImageCase> {
 protected:
  void SetUp() override { ASSERT_TRUE(RegisterCudaBackend().ok()); }

  // Why `c` cannot run here: its image would have to be loaded on a device that cannot run it.
  static std::string SkipReason(const ImageCase& c) {
    const bool device = cuda::DeviceCount() > 0;
    if (!HaveTestKernelImages()) {
      return device ? "built without nvcc: no real images to load on the device" : "";
    }
    if (device && c.sm[0] != '\0') {
      auto info = cuda::DeviceInfo(cuda::CurrentDevice());
      if (!info.ok() || info->sm() != c.sm) return std::string(c.file) + " runs on " + c.sm + " only";
    }
    return "";
  }

  // The nvcc-built image, or (built without nvcc) stand-in bytes no driver ever sees.
  static std::string Image(const ImageCase& c) {
    if (!HaveTestKernelImages()) {
      return std::string(c.fmt) == "ptx" ? std::string("//\n.version 8.0\n.target sm_80\n")
                                         : std::string(
                                               "\x7f"
                                               "ELF stand-in image\0\x01\x02",
                                               23);
    }
    return testing::ReadFileOrDie(TestKernelImagePath(c.file));
  }
};

TEST_P(CudaModuleTest, BlobRoundTripIsByteIdentical) {
  const ImageCase c = GetParam();
  const std::string skip = SkipReason(c);
  if (!skip.empty()) GTEST_SKIP() << skip;
  const std::string image = Image(c);
  const DeviceModulePayload payload = TestKernelPayload(c.fmt, image);
  const std::string bytes = SerializePayload(payload);

  auto module = LoadThroughBlobLoader(payload);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_STREQ(module->type_key(), "cuda");
  EXPECT_EQ((*module)->property_mask(), kModuleBinarySerializable | kModuleRunnable);
  EXPECT_EQ((*module)->ListFunctionNames(),
            (std::vector<std::string>{"affine_2d", "barrier_probe", "reverse_dyn_smem", "vector_add"}));
  EXPECT_TRUE(module->GetFunction("vector_add").defined());
  EXPECT_TRUE(module->GetFunction("__tvm_prepare_global_barrier").defined());
  EXPECT_FALSE(module->GetFunction("no_such_kernel").defined());

  const std::string saved = SaveModule(*module);
  EXPECT_EQ(saved.size(), bytes.size());
  EXPECT_TRUE(saved == bytes) << "re-serialized payload differs";
  // And once more from the re-serialized bytes.
  BinaryReader reader(reinterpret_cast<const uint8_t*>(saved.data()), saved.size(), "saved");
  DeviceModulePayload again;
  ASSERT_TRUE(ReadDeviceModulePayload(reader, "cuda", &again).ok());
  EXPECT_EQ(again.fmt, c.fmt);
  EXPECT_TRUE(again.data == image);
}

INSTANTIATE_TEST_SUITE_P(AllFormats, CudaModuleTest, ::testing::ValuesIn(kImages),
                         [](const ::testing::TestParamInfo<ImageCase>& info) {
                           std::string name = std::string(info.param.fmt) + "_" + info.param.file;
                           std::replace_if(
                               name.begin(), name.end(), [](char ch) { return !std::isalnum(ch); }, '_');
                           return name;
                         });

// Hand-built payloads; never loaded on a device.
class CudaPayloadTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(RegisterCudaBackend().ok()); }
  static DeviceModulePayload StandIn(const std::string& fmt) { return TestKernelPayload(fmt, "// stand-in\n"); }
};

TEST_F(CudaPayloadTest, CreateCudaModuleSavesWhatItWasGiven) {
  DeviceModulePayload payload = StandIn("ptx");
  std::reverse(payload.functions.begin(), payload.functions.end());  // hand-written order is kept
  const std::string expected = SerializePayload(payload);
  auto module = CreateCudaModule(payload);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_TRUE(SaveModule(*module) == expected);
  EXPECT_EQ((*module)->ListFunctionNames().front(), "vector_add");
}

TEST_F(CudaPayloadTest, BadPayloadsAreRefused) {
  struct Case {
    DeviceModulePayload payload;
    const char* expected;
  };
  std::vector<Case> cases;
  cases.push_back({StandIn("hsaco"), "unknown code format 'hsaco' (expected ptx, cubin or fatbin)"});
  cases.push_back({TestKernelPayload("cubin", ""), "the code image (fmt cubin) is empty"});
  DeviceModulePayload duplicate = StandIn("ptx");
  duplicate.functions.push_back(duplicate.functions[0]);
  cases.push_back({duplicate, "duplicate kernel 'affine_2d'"});
  DeviceModulePayload bad_type = StandIn("ptx");
  bad_type.functions[0].second.arg_types[2] = MakeDType(kDLFloat, 16);
  cases.push_back({bad_type, "argument 2: argument type float16 cannot be passed to a kernel"});
  for (const Case& c : cases) {
    auto created = CreateCudaModule(c.payload);
    ASSERT_FALSE(created.ok()) << c.expected;
    EXPECT_EQ(created.status().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(Contains(created.status().message(), c.expected)) << created.status().message();
  }
  // Through the blob loader the same problems are DataLoss at the payload's byte offset.
  auto loaded = LoadThroughBlobLoader(StandIn("hsaco"));
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE(Contains(loaded.status().message(), "test blob byte 0: cuda module: unknown code format 'hsaco'"))
      << loaded.status().message();
  auto unknown_tag = StandIn("ptx");
  unknown_tag.functions[1].second.launch_param_tags = {"blockIdx.w"};
  loaded = LoadThroughBlobLoader(unknown_tag);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE(Contains(loaded.status().message(), "unknown launch tag 'blockIdx.w'")) << loaded.status().message();
}

TEST_F(CudaPayloadTest, EveryTruncationIsDataLoss) {
  const std::string bytes = SerializePayload(StandIn("ptx"));
  for (size_t n = 0; n < bytes.size(); ++n) {
    BinaryReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), n, "truncated blob");
    auto module = RunBlobLoader("cuda", reader);
    ASSERT_FALSE(module.ok()) << "accepted a payload cut at byte " << n;
    EXPECT_EQ(module.status().code(), StatusCode::kDataLoss) << module.status().ToString();
  }
}

TEST_F(CudaPayloadTest, KernelArgumentsAreCheckedBeforeTheDriver) {
  auto module = CreateCudaModule(StandIn("ptx"));
  ASSERT_TRUE(module.ok());
  PackedFunc vector_add = module->GetFunction("vector_add");
  auto r = vector_add(nullptr, nullptr, nullptr, 16);  // no launch values
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status().message(), "kernel 'vector_add' expects 6 packed arguments")) << r.status().message();
  r = vector_add(nullptr, nullptr, "oops", 16, 1, 16);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "argument 2: expected a device pointer (handle), got str"))
      << r.status().message();
  r = vector_add(nullptr, nullptr, nullptr, 16, int64_t{1} << 40, 16);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "launch value 1099511627776 exceeds 32 bits")) << r.status().message();
  auto barrier = module->GetFunction("__tvm_prepare_global_barrier");
  EXPECT_FALSE(barrier(1).ok());
  Status not_cuda = PrepareCudaModule(Module(), 0);
  EXPECT_EQ(not_cuda.code(), StatusCode::kInvalidArgument);
}

TEST_F(CudaPayloadTest, WithoutDriverKernelCallsSayNoCudaDriver) {
  if (cuda::Driver().ok()) GTEST_SKIP() << "a CUDA driver is installed here (covered by cuda_gpu_test)";
  // Loading succeeds without a driver: the image check is deferred.
  auto module = LoadThroughBlobLoader(StandIn("ptx"));
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  PackedFunc vector_add = module->GetFunction("vector_add");
  auto r = vector_add(nullptr, nullptr, nullptr, 16, 1, 16);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(r.status().message(),
                       "CUDA launch of kernel vector_add failed: no CUDA driver: libcuda.so.1 not found ("))
      << r.status().message();
  auto barrier = module->GetFunction("__tvm_prepare_global_barrier")();
  ASSERT_FALSE(barrier.ok());
  EXPECT_TRUE(Contains(barrier.status().message(), "no CUDA driver")) << barrier.status().message();
  Status prepare = PrepareCudaModule(*module, 0);
  EXPECT_EQ(prepare.code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(prepare.message(), "no CUDA driver")) << prepare.message();
}

// A model tree: the kernel library (host code) importing a cuda module. It loads and its CPU
// functions run whether or not a driver exists; host code finds the kernels through the imports.
TEST_F(CudaPayloadTest, ModelTreeWithCudaModuleLoadsAndRunsItsCpuPart) {
  std::string image = "// stand-in\n";
  if (cuda::DeviceCount() > 0) {
    if (!HaveTestKernelImages()) GTEST_SKIP() << "built without nvcc: no real image to load on the device";
    image = testing::ReadFileOrDie(TestKernelImagePath("test_kernels.ptx"));
  }
  auto cuda_module = LoadThroughBlobLoader(TestKernelPayload("ptx", image));
  ASSERT_TRUE(cuda_module.ok()) << cuda_module.status().ToString();
  auto opened = LibraryModuleNode::Open(testing::Runfile("testdata/kernels/libabi_test_kernels.so"));
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  ASSERT_FALSE(opened->reused);
  Module lib(ObjectPtr<ModuleNode>(opened->module));
  ASSERT_TRUE(lib.Import(*cuda_module).ok());

  auto in = Tensor::Empty({3}, Float32(), CpuDevice());
  auto out = Tensor::Empty({3}, Float32(), CpuDevice());
  ASSERT_TRUE(in.ok() && out.ok());
  for (int i = 0; i < 3; ++i) in->data_as<float>()[i] = static_cast<float>(i);
  ASSERT_TRUE(lib.GetFunction("add_one")(*in, *out).ok());
  EXPECT_EQ(out->data_as<float>()[2], 3.0f);

  auto kernel = lib->GetFuncFromEnv("vector_add");
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  EXPECT_EQ(kernel->name(), "vector_add");
}

}  // namespace
}  // namespace sorun
