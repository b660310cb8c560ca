// Runnable CUDA Relax exports of TVM 0.27 (testdata/relax_cuda: target "cuda" with nvcc-compiled ptx,
// cubin and fatbin payloads) through the public API. Anywhere: the payloads are compiled code whose
// kernels are launchable entries, the exports load, a CUDA executor without a driver is refused naming
// the device and the missing driver, and a CPU executor is refused (its kernels are in the cuda module).
// With the stand-in driver (the _fake_driver target): the CUDA executor runs up to the first CUDA
// launch. On a GPU: sorun::Model::Load -> NewExecutor({cuda:0})
// -> Run gives the outputs of the same model built for "llvm" (1e-5), for a dynamic batch too, from two
// executors on two threads. Without a GPU those tests skip with "no CUDA driver/device: <reason>";
// SORUN_REQUIRE_GPU=1 (tests/cuda/stage_gpu_tests.sh's run.sh) makes that a failure.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "api/sorun.h"
#include "backends/cuda/cuda_devices.h"
#include "backends/device_module_payload.h"
#include "format/binary_reader.h"
#include "inspect/elf_reader.h"
#include "relax/library_blob.h"
#include "runtime/registry_keys.h"
#include "runtime/tensor.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"
#include "tools/npy.h"

namespace sorun {
namespace {

constexpr DLDevice kCuda0{kDLCUDA, 0};

std::string Fixture(const std::string& file) { return testing::Runfile("testdata/relax_cuda/" + file); }

Tensor ReadNpy(const std::string& file) {
  auto t = ReadNpyFile(Fixture(file));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Tensor();
}

// One export: its file, the fmt of its cuda payload, the model whose .npy files it runs, its inputs' shape.
struct ExportCase {
  const char* file;  // without ".so"
  const char* fmt;
  const char* model;  // <model>.input_0.npy, <model>.output_<k>.npy
  int outputs;
  std::vector<int64_t> input_shape;  // -1: dynamic
};

// Names the case in gtest's messages.
void PrintTo(const ExportCase& c, std::ostream* os) { *os << c.file << ".so (fmt " << c.fmt << ")"; }

const std::vector<ExportCase>& Exports() {
  static const auto* cases = new std::vector<ExportCase>{
      {"mlp_ptx", "ptx", "mlp", 1, {1, 16}},
      {"mlp_cubin", "cubin", "mlp", 1, {1, 16}},
      {"dyn_batch_fatbin", "fatbin", "dyn_batch", 2, {-1, 8}},
  };
  return *cases;
}

// The export's one "cuda" module payload, read in the tvm-ffi grammar from its __tvm_ffi__library_bin.
StatusOr<DeviceModulePayload> CudaPayloadOf(const std::string& path) {
  SORUN_ASSIGN_OR_RETURN(ElfImage image, ElfImage::ReadFile(path));
  SORUN_ASSIGN_OR_RETURN(ElfSymbolData symbol, image.FindSymbolData(keys::kSymbolFfiLibraryBinV22));
  SORUN_ASSIGN_OR_RETURN(relax::LibraryBlob blob,
                         relax::ParseLibraryBlob(symbol.data, symbol.size, keys::kSymbolFfiLibraryBinV22));
  const relax::LibraryBlobModule* cuda = nullptr;
  for (const relax::LibraryBlobModule& m : blob.modules) {
    if (m.type_key != "cuda") continue;
    if (cuda != nullptr) return DataLoss(path + ": two cuda modules");
    cuda = &m;
  }
  if (cuda == nullptr) return NotFound(path + ": no cuda module");
  BinaryReader reader(cuda->payload, cuda->payload_size, "cuda payload");
  DeviceModulePayload payload;
  SORUN_RETURN_IF_ERROR(ReadDeviceModulePayload(reader, "cuda", &payload, PayloadGrammar::kFfi));
  if (!reader.at_end()) return DataLoss(path + ": trailing bytes after the cuda payload");
  return payload;
}

uint16_t ReadU16(const std::string& bytes, size_t offset) {
  uint16_t v = 0;
  std::memcpy(&v, bytes.data() + offset, sizeof(v));
  return v;
}

uint32_t ReadU32(const std::string& bytes, size_t offset) {
  uint32_t v = 0;
  std::memcpy(&v, bytes.data() + offset, sizeof(v));
  return v;
}

// |got - want| <= 1e-5 + 1e-5 |want| elementwise, float32, same shape; the first difference otherwise.
::testing::AssertionResult Close(const NDArray& got, const Tensor& want) {
  if (!got.defined() || !want.defined()) return ::testing::AssertionFailure() << "undefined tensor";
  if (got.shape() != want.shape()) return ::testing::AssertionFailure() << "shapes differ";
  if (got.dl().dtype.code != kDLFloat || got.dl().dtype.bits != 32 || got.nbytes() != want.nbytes()) {
    return ::testing::AssertionFailure() << "not float32 or sizes differ";
  }
  const float* a = static_cast<const float*>(got.data());
  const float* b = want.data_as<float>();
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    if (!(std::fabs(a[i] - b[i]) <= 1e-5f + 1e-5f * std::fabs(b[i]))) {
      return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " vs reference " << b[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// ---- Anywhere: the fixtures and the driverless paths ----

class CudaRelaxExportTest : public ::testing::TestWithParam<ExportCase> {};

// The payload is nvcc's code in the advertised format, not TVM's CUDA source; every kernel of the
// table is a launchable entry (TVM's own "nvptx" target writes .func, which cannot be launched).
TEST_P(CudaRelaxExportTest, PayloadIsCompiledCode) {
  const ExportCase& c = GetParam();
  auto payload = CudaPayloadOf(Fixture(std::string(c.file) + ".so"));
  ASSERT_TRUE(payload.ok()) << payload.status().ToString();
  EXPECT_EQ(payload->fmt, c.fmt);
  ASSERT_FALSE(payload->functions.empty());
  const std::string& image = payload->data;
  ASSERT_GE(image.size(), 64u);
  if (payload->fmt == "ptx") {
    EXPECT_NE(image.find("\n.target sm_80\n"), std::string::npos) << "compute_80 PTX expected";
    for (const auto& [name, info] : payload->functions) {
      EXPECT_NE(image.find(".visible .entry " + name + "("), std::string::npos) << name;
    }
  } else if (payload->fmt == "cubin") {
    EXPECT_EQ(image.compare(0, 4, "\177ELF"), 0);  // the ELF magic
    EXPECT_EQ(ReadU16(image, 18), 190) << "e_machine EM_CUDA";
    for (const auto& [name, info] : payload->functions) {
      EXPECT_NE(image.find(".text." + name + '\0'), std::string::npos) << name;  // its code section
    }
  } else {
    EXPECT_EQ(ReadU32(image, 0), 0xBA55ED50u) << "fatbin magic";
  }
}

// Parsing, the export check and the cuda module's payload need no driver: the model loads and
// describes main's parameter.
TEST_P(CudaRelaxExportTest, LoadsWithoutTouchingTheGpu) {
  const ExportCase& c = GetParam();
  auto model = Model::Load(Fixture(std::string(c.file) + ".so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_EQ(model->inputs().size(), 1u);
  EXPECT_EQ(model->inputs()[0].name, "x");
  EXPECT_EQ(model->inputs()[0].shape, c.input_shape);
  EXPECT_EQ(model->outputs().size(), static_cast<size_t>(c.outputs));
}

// Without a driver a CUDA executor is refused when it is created, naming the file, the device and why.
TEST_P(CudaRelaxExportTest, CudaExecutorWithoutDriverIsRefused) {
  if (cuda::DeviceCount() > 0) GTEST_SKIP() << "a CUDA driver with a device is present";
  const std::string path = Fixture(std::string(GetParam().file) + ".so");
  auto model = Model::Load(path);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ExecutorOptions options;
  options.devices = {kCuda0};
  auto exec = model->NewExecutor(options);
  EXPECT_ERROR(exec.status(), StatusCode::kUnavailable, path, "device cuda:0 is not present", "no CUDA driver");
}

// Its kernels are in its CUDA module: an executor given only the CPU is refused when it is asked for,
// naming the file, the module, the device type it needs and what it was given (before, it failed at the
// first kernel with the host code's "Mismatched data.device_type"), with or without a driver.
TEST_P(CudaRelaxExportTest, CpuExecutorIsRefused) {
  const std::string path = Fixture(std::string(GetParam().file) + ".so");
  auto model = Model::Load(path);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(model->device_types_needed(), std::vector<DLDeviceType>{kDLCUDA});
  EXPECT_ERROR(model->NewExecutor().status(), StatusCode::kInvalidArgument,
               path + ": its kernels are in a CUDA module: it needs a cuda device, the executor was given cpu:0");
}

// ---- With a driver ----

// True when device 0 is //testdata/cuda:fake_driver's stand-in, whose modules run only the kernels of
// testdata/cuda/test_kernels.cu.
bool IsStandInDriver() {
  auto info = cuda::DeviceInfo(0);
  return info.ok() && info->name.rfind("sorun fake CUDA device", 0) == 0;
}

// The reason the GPU tests cannot run here, or "".
std::string NoGpuReason() {
  auto driver = cuda::Driver();
  if (!driver.ok()) return "no CUDA driver/device: " + driver.status().message();
  if (cuda::DeviceCount() == 0) return "no CUDA driver/device: the driver reports 0 devices";
  return "";
}

bool GpuRequired() {
  const char* v = std::getenv("SORUN_REQUIRE_GPU");
  return v != nullptr && v[0] != '\0' && std::string(v) != "0";
}

// With the stand-in driver (cuda_module_relax_export_test_fake_driver) everything before the first CUDA
// launch is real: the CUDA executor (device storage, constants uploaded), the input copy, the host
// kernel calling into the cuda module, the image loaded (the cubin's sm_90 checked); the stand-in
// then has no such kernel, which must be a clean error naming the kernel and the image.
TEST_P(CudaRelaxExportTest, StandInDriverReachesTheFirstCudaLaunch) {
  if (!IsStandInDriver()) GTEST_SKIP() << "needs //testdata/cuda:fake_driver (the _fake_driver target)";
  const ExportCase& c = GetParam();
  auto model = Model::Load(Fixture(std::string(c.file) + ".so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ExecutorOptions options;
  options.devices = {kCuda0};
  auto exec = model->NewExecutor(options);
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  Tensor input = ReadNpy(std::string(c.model) + ".input_0.npy");
  auto outputs = exec->Run({{"x", input.dl()}});
  ASSERT_FALSE(outputs.ok());
  EXPECT_TRUE(testing::Contains(outputs.status().message(),
                                "CUDA launch of kernel fused_matmul_add_relu_kernel failed: kernel "
                                "fused_matmul_add_relu_kernel is not in the code image of the cuda module (fmt " +
                                    std::string(c.fmt)))
      << outputs.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(Exports, CudaRelaxExportTest, ::testing::ValuesIn(Exports()),
                         [](const auto& info) { return std::string(info.param.file); });

// ---- On a GPU ----

class CudaRelaxGpuTest : public ::testing::TestWithParam<ExportCase> {
 protected:
  void SetUp() override {
    if (IsStandInDriver()) GTEST_SKIP() << "the stand-in driver runs only testdata/cuda/test_kernels.cu";
    const std::string reason = NoGpuReason();
    if (reason.empty()) return;
    if (GpuRequired()) FAIL() << "SORUN_REQUIRE_GPU is set but " << reason;
    GTEST_SKIP() << reason;
  }

  static StatusOr<Executor> CudaExecutor(const Model& model) {
    ExecutorOptions options;
    options.devices = {kCuda0};
    return model.NewExecutor(options);
  }

  // Runs `prefix`.input_0.npy and compares every output with `prefix`.output_<k>.npy.
  static void RunAndCompare(Executor& exec, const std::string& prefix, int num_outputs, const std::string& what) {
    Tensor input = ReadNpy(prefix + ".input_0.npy");
    auto outputs = exec.Run({{"x", input.dl()}});
    ASSERT_TRUE(outputs.ok()) << what << ": " << outputs.status().ToString();
    ASSERT_EQ(static_cast<int>(outputs->size()), num_outputs) << what;
    for (int k = 0; k < num_outputs; ++k) {
      EXPECT_TRUE(Close((*outputs)[static_cast<size_t>(k)], ReadNpy(prefix + ".output_" + std::to_string(k) + ".npy")))
          << what << " output " << k;
    }
  }
};

// TVM's CPU outputs from the GPU, twice (the second run reuses the first run's device memory).
TEST_P(CudaRelaxGpuTest, MatchesTheCpuBuild) {
  const ExportCase& c = GetParam();
  auto model = Model::Load(Fixture(std::string(c.file) + ".so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto exec = CudaExecutor(*model);
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  for (int run = 0; run < 2; ++run) RunAndCompare(*exec, c.model, c.outputs, "run " + std::to_string(run));
}

INSTANTIATE_TEST_SUITE_P(Exports, CudaRelaxGpuTest, ::testing::ValuesIn(Exports()),
                         [](const auto& info) { return std::string(info.param.file); });

// One executor, batch 3, then 5 (more device memory), then 3 again: the shape heap and the kernels'
// int64 extents follow the input.
TEST_F(CudaRelaxGpuTest, DynamicBatchFollowsTheInput) {
  auto model = Model::Load(Fixture("dyn_batch_fatbin.so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto exec = CudaExecutor(*model);
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  RunAndCompare(*exec, "dyn_batch", 2, "batch 3");
  RunAndCompare(*exec, "dyn_batch.b5", 2, "batch 5");
  RunAndCompare(*exec, "dyn_batch", 2, "batch 3 again");
}

// Two executors of one model (its constants shared), each run from its own thread.
TEST_F(CudaRelaxGpuTest, TwoExecutorsOnTwoThreads) {
  auto model = Model::Load(Fixture("mlp_cubin.so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  std::vector<Executor> executors;
  for (int i = 0; i < 2; ++i) {
    auto exec = CudaExecutor(*model);
    ASSERT_TRUE(exec.ok()) << exec.status().ToString();
    executors.push_back(std::move(*exec));
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&executors, i] {
      for (int run = 0; run < 3; ++run) {
        RunAndCompare(executors[static_cast<size_t>(i)], "mlp", 1,
                      "executor " + std::to_string(i) + " run " + std::to_string(run));
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace
}  // namespace sorun
