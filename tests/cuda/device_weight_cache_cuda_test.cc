// One device copy of a model's weights per device, whatever the executor count (docs/architecture.md,
// Memory): executors of one model on cuda:0 share the tensor constants of a Relax VM export
// (testdata/relax_cuda) and the weights of a graph-executor model with a CUDA module
// (testdata/models:mlp_cuda); the first executor made for the device uploads them, once even when four
// threads make executors at once; a failed upload keeps nothing; they go with the model; and
// Executor::Memory() reports them as the weights, not as activations.
//
// Measured as the driver sees it. With the stand-in driver (the _fake_driver target): exactly, from its
// live cuMemAlloc bytes (sorun_fake_cuda_live_bytes, testdata/cuda/fake_cuda_driver.c), which also fails
// allocations on request. On a GPU: from cuMemGetInfo_v2 (in use = total - free, in the driver's
// allocation granularity), on a program with a 32 MiB constant so that a second copy would show; the
// exports and the graph model run there and give their reference outputs from every executor. Without a
// driver everything skips ("no CUDA driver/device: ..."); SORUN_REQUIRE_GPU=1 makes that a failure.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/sorun.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_devices.h"
#include "relax/vm_executable.h"
#include "relax/vm_program.h"
#include "runtime/data_type.h"
#include "runtime/tensor.h"
#include "tests/relax/relax_fixtures.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"
#include "tools/npy.h"

namespace sorun {
namespace {

constexpr DLDevice kCuda0{kDLCUDA, 0};
constexpr int kExecutors = 4;

// Device memory in use on cuda:0 as the driver reports it.
class DeviceBytes {
 public:
  // The probe of the loaded driver; "" in `*skip` when there is one, else why not.
  static std::unique_ptr<DeviceBytes> Open(std::string* skip) {
    auto driver = cuda::Driver();
    if (!driver.ok()) {
      *skip = "no CUDA driver/device: " + driver.status().message();
      return nullptr;
    }
    if (cuda::DeviceCount() == 0) {
      *skip = "no CUDA driver/device: the driver reports 0 devices";
      return nullptr;
    }
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);  // the backend's, already loaded
    if (lib == nullptr) {
      *skip = "libcuda.so.1 is not loaded";
      return nullptr;
    }
    auto probe = std::make_unique<DeviceBytes>();
    probe->live_bytes_ = reinterpret_cast<LiveFn>(dlsym(lib, "sorun_fake_cuda_live_bytes"));
    probe->live_allocations_ = reinterpret_cast<LiveFn>(dlsym(lib, "sorun_fake_cuda_live_allocations"));
    probe->fail_after_ = reinterpret_cast<FailFn>(dlsym(lib, "sorun_fake_cuda_fail_allocations_after"));
    probe->mem_get_info_ = reinterpret_cast<MemGetInfoFn>(dlsym(lib, "cuMemGetInfo_v2"));
    if (!probe->exact() && probe->mem_get_info_ == nullptr) {
      *skip = "the driver exports no cuMemGetInfo_v2";
      return nullptr;
    }
    skip->clear();
    return probe;
  }

  // The stand-in driver: exact bytes and counts of live allocations, failures on request.
  bool exact() const { return live_bytes_ != nullptr && live_allocations_ != nullptr && fail_after_ != nullptr; }

  uint64_t used() const {
    if (exact()) return live_bytes_(0);
    EXPECT_TRUE(cuda::ActivateDevice(0).ok());  // cuMemGetInfo reads the current context's device
    size_t free_bytes = 0, total_bytes = 0;
    EXPECT_EQ(mem_get_info_(&free_bytes, &total_bytes), 0);
    return total_bytes - free_bytes;
  }
  uint64_t allocations() const { return exact() ? live_allocations_(0) : 0; }
  // The next `n` cuMemAlloc calls succeed, the later ones fail (n < 0: none fails). Stand-in only.
  void FailAllocationsAfter(long long n) const {
    if (fail_after_ != nullptr) fail_after_(n);
  }

 private:
  using LiveFn = unsigned long long (*)(int);
  using FailFn = void (*)(long long);
  using MemGetInfoFn = int (*)(size_t*, size_t*);
  LiveFn live_bytes_ = nullptr;
  LiveFn live_allocations_ = nullptr;
  FailFn fail_after_ = nullptr;
  MemGetInfoFn mem_get_info_ = nullptr;
};

bool GpuRequired() {
  const char* v = std::getenv("SORUN_REQUIRE_GPU");
  return v != nullptr && v[0] != '\0' && std::string(v) != "0";
}

// True on device 0 of //testdata/cuda:fake_driver, whose modules run only testdata/cuda/test_kernels.cu.
bool IsStandInDriver() {
  auto info = cuda::DeviceInfo(0);
  return info.ok() && info->name.rfind("sorun fake CUDA device", 0) == 0;
}

Tensor ReadNpy(const std::string& path) {
  auto t = ReadNpyFile(testing::Runfile(path));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Tensor();
}

// `a` and `b` (float32, same size) agree within tol + tol |b| (1e-5: the Relax references; the zoo's 1e-4).
bool Close(const NDArray& a, const Tensor& b, float tol = 1e-5f) {
  if (!a.defined() || !b.defined() || a.nbytes() != b.nbytes()) return false;
  const float* x = static_cast<const float*>(a.data());
  for (int64_t i = 0; i < b.num_elements(); ++i) {
    if (!(std::fabs(x[i] - b.data_as<float>()[i]) <= tol + tol * std::fabs(b.data_as<float>()[i]))) return false;
  }
  return true;
}

class DeviceWeightCacheCudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterCudaBackend().ok());
    std::string skip;
    probe_ = DeviceBytes::Open(&skip);
    if (probe_ == nullptr) {
      if (GpuRequired()) FAIL() << "SORUN_REQUIRE_GPU is set but " << skip;
      GTEST_SKIP() << skip;
    }
    probe_->FailAllocationsAfter(-1);
    base_ = probe_->used();
    base_allocations_ = probe_->allocations();
  }
  void TearDown() override {
    if (probe_) probe_->FailAllocationsAfter(-1);
  }

  // Device bytes in use beyond what was in use when the test began.
  uint64_t Grown() const { return probe_->used() - base_; }
  uint64_t GrownAllocations() const { return probe_->allocations() - base_allocations_; }

  static StatusOr<Executor> OnCuda(const Model& model, std::vector<DLDevice> devices = {kCuda0}) {
    ExecutorOptions options;
    options.devices = std::move(devices);
    return model.NewExecutor(options);
  }

  // `threads` executors of `model` made at once, one per thread.
  static std::vector<Executor> MadeAtOnce(const Model& model, std::vector<DLDevice> devices, int threads) {
    std::vector<std::optional<StatusOr<Executor>>> made(static_cast<size_t>(threads));
    std::atomic<int> ready{0};
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i) {
      pool.emplace_back([&, i] {
        ready.fetch_add(1);
        while (ready.load() < threads) std::this_thread::yield();
        made[static_cast<size_t>(i)].emplace(OnCuda(model, devices));
      });
    }
    for (std::thread& t : pool) t.join();
    std::vector<Executor> out;
    for (auto& e : made) {
      EXPECT_TRUE(e.has_value() && e->ok()) << (e.has_value() ? e->status().ToString() : "not made");
      if (e.has_value() && e->ok()) out.push_back(std::move(**e));
    }
    return out;
  }

  std::unique_ptr<DeviceBytes> probe_;
  uint64_t base_ = 0;
  uint64_t base_allocations_ = 0;
};

// ---- A Relax VM export (TVM 0.27, testdata/relax_cuda/mlp_cubin.so) ----

const char kMlp[] = "testdata/relax_cuda/mlp_cubin.so";
const char kMlpInput[] = "testdata/relax_cuda/mlp.input_0.npy";
const char kMlpOutput[] = "testdata/relax_cuda/mlp.output_0.npy";

// The device memory of one executor: its input copy and the storage its runs made.
uint64_t OwnBytes(const Executor& e, const Tensor& input) { return input.nbytes() + e.Memory()[0].activation_bytes; }

// Sets `input` and, on a GPU, runs. Not on the stand-in: its run would stop at the first CUDA launch
// (it lacks TVM's kernels), where TVM's host code returns without giving back the kernel workspace it
// took (a 4 KiB page of the thread's workspace pool per failed run), which is no executor's memory.
void SetAndRun(Executor& e, const Tensor& input, bool stand_in) {
  ASSERT_TRUE(e.SetInput("x", *input.dl()).ok());
  if (!stand_in) {
    Status run = e.Run();
    ASSERT_TRUE(run.ok()) << run.ToString();
  }
}

TEST_F(DeviceWeightCacheCudaTest, RelaxExportFourExecutorsHoldOneCopyOfTheConstants) {
  auto model = Model::Load(testing::Runfile(kMlp));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const Tensor input = ReadNpy(kMlpInput);
  const bool stand_in = IsStandInDriver();

  auto first = OnCuda(*model);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const uint64_t constants = first->Memory()[0].weight_bytes;
  EXPECT_GT(constants, 0u);
  EXPECT_EQ(first->Memory()[0].device, kCuda0);
  EXPECT_EQ(first->Memory()[0].activation_bytes, 0u) << "the constants are weights, not this executor's";
  if (probe_->exact()) {
    EXPECT_EQ(Grown(), constants) << "the first executor uploads the constants, nothing else";
  }
  const uint64_t constant_allocations = GrownAllocations();

  std::vector<Executor> executors;
  executors.push_back(std::move(*first));
  for (int i = 1; i < kExecutors; ++i) {
    auto e = OnCuda(*model);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EXPECT_EQ(e->Memory()[0].weight_bytes, constants);
    executors.push_back(std::move(*e));
  }
  if (probe_->exact()) {
    EXPECT_EQ(Grown(), constants) << "executors 2-4 upload nothing";
    EXPECT_EQ(GrownAllocations(), constant_allocations);
  }

  // Each executor's own memory comes on top of the one copy: 1 executor vs 4.
  SetAndRun(executors[0], input, stand_in);
  const uint64_t own = OwnBytes(executors[0], input);
  const uint64_t one = Grown();
  for (int i = 1; i < kExecutors; ++i) SetAndRun(executors[static_cast<size_t>(i)], input, stand_in);
  const uint64_t four = Grown();
  std::printf("relax %s: constants %llu B; own %llu B per executor; device bytes with 1 executor %llu, with 4 %llu\n",
              kMlp, static_cast<unsigned long long>(constants), static_cast<unsigned long long>(own),
              static_cast<unsigned long long>(one), static_cast<unsigned long long>(four));
  for (const Executor& e : executors) EXPECT_EQ(OwnBytes(e, input), own);
  if (probe_->exact()) {
    EXPECT_EQ(one, constants + own);
    EXPECT_EQ(four, constants + kExecutors * own) << "the constants' bytes are not multiplied";
  }
  if (!stand_in) {  // on a GPU: every executor gives the reference output
    const Tensor want = ReadNpy(kMlpOutput);
    for (Executor& e : executors) {
      auto out = e.Run({{"x", input.dl()}});
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_TRUE(Close((*out)[0], want));
    }
  }
}

// Four threads make the executors at once: one upload; each executor's input stays its own (and, on a
// GPU, its result: two run the reference input, two a doubled one).
TEST_F(DeviceWeightCacheCudaTest, RelaxExportExecutorsMadeOnFourThreadsUploadOnce) {
  auto model = Model::Load(testing::Runfile(kMlp));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  std::vector<Executor> executors = MadeAtOnce(*model, {kCuda0}, kExecutors);
  ASSERT_EQ(executors.size(), static_cast<size_t>(kExecutors));
  const uint64_t constants = executors[0].Memory()[0].weight_bytes;
  if (probe_->exact()) {
    EXPECT_EQ(Grown(), constants) << "one upload for four executors made at once";
  }

  const Tensor input = ReadNpy(kMlpInput);
  auto doubled = input.CopyToDevice(CpuDevice());
  ASSERT_TRUE(doubled.ok());
  for (int64_t i = 0; i < doubled->num_elements(); ++i) doubled->data_as<float>()[i] *= 2;
  for (int i = 0; i < kExecutors; ++i) {
    const Tensor& x = i % 2 == 0 ? input : *doubled;
    ASSERT_TRUE(executors[static_cast<size_t>(i)].SetInput("x", *x.dl()).ok());
  }
  for (int i = 0; i < kExecutors; ++i) {
    auto back = executors[static_cast<size_t>(i)].GetInput(0);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    auto host = back->CopyTo(CpuDevice());
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    const Tensor& x = i % 2 == 0 ? input : *doubled;
    EXPECT_EQ(std::memcmp(host->data(), x.data(), x.nbytes()), 0) << "executor " << i;
  }
  if (IsStandInDriver()) return;
  const Tensor want = ReadNpy(kMlpOutput);
  for (int i = 0; i < kExecutors; ++i) ASSERT_TRUE(executors[static_cast<size_t>(i)].Run().ok());
  for (int i = 0; i < kExecutors; ++i) {
    auto out = executors[static_cast<size_t>(i)].GetOutput(0);
    ASSERT_TRUE(out.ok());
    auto host = out->CopyTo(CpuDevice());
    ASSERT_TRUE(host.ok());
    EXPECT_EQ(Close(*host, want), i % 2 == 0) << "executor " << i;
  }
}

// An upload that fails part-way keeps nothing; the next executor uploads all and works. Stand-in only.
TEST_F(DeviceWeightCacheCudaTest, RelaxExportFailedUploadKeepsNothing) {
  if (!probe_->exact()) GTEST_SKIP() << "failing allocations needs the stand-in driver";
  const std::string path = testing::Runfile(kMlp);
  auto model = Model::Load(path);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  probe_->FailAllocationsAfter(1);
  auto failed = OnCuda(*model);
  EXPECT_ERROR(failed.status(), StatusCode::kResourceExhausted, path, "uploading constant", "to cuda:0",
               "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_EQ(Grown(), 0u) << "the constant uploaded before the failure went with it";
  probe_->FailAllocationsAfter(-1);
  auto e = OnCuda(*model);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(Grown(), e->Memory()[0].weight_bytes);
}

// The copy belongs to the model and its executors: it goes when the last of them does.
TEST_F(DeviceWeightCacheCudaTest, RelaxExportConstantsGoWithTheModel) {
  if (!probe_->exact()) GTEST_SKIP() << "exact bytes need the stand-in driver (see LargeConstant below)";
  {
    auto loaded = Model::Load(testing::Runfile(kMlp));
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    std::optional<Model> model(std::move(*loaded));
    auto e = OnCuda(*model);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    model.reset();  // the executor keeps the model, and so the copy, alive
    EXPECT_EQ(Grown(), e->Memory()[0].weight_bytes);
  }
  EXPECT_EQ(Grown(), 0u);
}

// ---- A program with a 32 MiB constant: the measurement a GPU can make too ----

constexpr int64_t kLargeFloats = int64_t{8} << 20;  // 32 MiB

// main(x) = x, with constants: 32 MiB of float32 and a small tensor. No kernels: the executors only
// place the constants.
StatusOr<ObjectPtr<relax::VmProgram>> LargeConstantProgram(std::shared_ptr<std::string>* bytes) {
  namespace t = relax::testing;
  t::FixtureExecutable e;
  e.functions = {{1, "main", 0, 1, 1, 1, {"x"}}};
  e.AddTensorF32({kLargeFloats}, std::vector<float>(static_cast<size_t>(kLargeFloats), 0.5f));
  e.AddTensorF32({4}, {1, 2, 3, 4});
  e.AddInt(7);
  e.instructions = {{2, 0}};
  *bytes = std::make_shared<std::string>(e.Serialize());
  SORUN_ASSIGN_OR_RETURN(auto exec,
                         relax::ParseVmExecutable(reinterpret_cast<const uint8_t*>((*bytes)->data()), (*bytes)->size(),
                                                  relax::ConstantTagDialect::kFfiTypeIndex));
  return relax::VmProgram::Create(std::make_shared<const relax::VmExecutable>(std::move(exec)), nullptr, Module(),
                                  relax::KernelAbi::kFfi, "large_constant.so");
}

TEST_F(DeviceWeightCacheCudaTest, LargeConstantIsOnTheDeviceOnce) {
  const uint64_t constants = kLargeFloats * 4 + 16;
  // The driver's granularity (2 MiB pages on a GPU) and other users of the device: a second copy is 16x that.
  const uint64_t slack = probe_->exact() ? 0 : constants / 8;
  std::shared_ptr<std::string> bytes;
  {
    auto program = LargeConstantProgram(&bytes);
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    std::vector<std::unique_ptr<ModelExecutor>> executors;
    for (int i = 0; i < kExecutors; ++i) {
      auto e = (*program)->NewExecutor({kCuda0}, nullptr);
      ASSERT_TRUE(e.ok()) << e.status().ToString();
      EXPECT_EQ((*e)->Memory()[0].weight_bytes, constants);
      EXPECT_EQ((*e)->Memory()[0].activation_bytes, 0u);
      executors.push_back(std::move(*e));
      const uint64_t grown = Grown();
      std::printf("large constant: %d executor(s) on cuda:0: device bytes in use +%llu (constants %llu)\n", i + 1,
                  static_cast<unsigned long long>(grown), static_cast<unsigned long long>(constants));
      EXPECT_GE(grown + slack, constants) << i + 1 << " executor(s)";
      EXPECT_LE(grown, constants + slack) << i + 1 << " executor(s): the constant is not copied again";
    }
    EXPECT_EQ((*program)->constant_bytes_on(kCuda0), constants);
  }
  EXPECT_LE(Grown(), slack) << "freed with the program and its executors";

  // Four threads at once on a new program: one upload.
  auto program = LargeConstantProgram(&bytes);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  std::vector<std::unique_ptr<ModelExecutor>> made(kExecutors);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kExecutors; ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < kExecutors) std::this_thread::yield();
      auto e = (*program)->NewExecutor({kCuda0}, nullptr);
      if (e.ok()) made[static_cast<size_t>(i)] = std::move(*e);
    });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& e : made) EXPECT_NE(e, nullptr);
  EXPECT_GE(Grown() + slack, constants);
  EXPECT_LE(Grown(), constants + slack) << "four executors made at once: one upload";
}

// ---- A graph-executor model with a CUDA module (testdata/models:mlp_cuda: fc2 and its bias on cuda:0) ----

TEST_F(DeviceWeightCacheCudaTest, GraphModelFourExecutorsShareTheWeights) {
  const std::string path = testing::Runfile("testdata/models/mlp_cuda.so");
  if (!testing::FileExists(path)) GTEST_SKIP() << "no CUDA toolkit at build time: mlp_cuda was not built";
  auto model = Model::Load(path);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const std::vector<DLDevice> devices = {CpuDevice(), kCuda0};
  std::vector<Executor> executors;
  for (int i = 0; i < kExecutors; ++i) {
    auto e = OnCuda(*model, devices);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    executors.push_back(std::move(*e));
  }
  DeviceMemory cuda{};
  for (const DeviceMemory& m : executors[0].Memory()) {
    if (m.device == kCuda0) cuda = m;
  }
  EXPECT_EQ(cuda.weight_bytes, (128u * 64 + 64) * 4) << "fc2's weight and bias";
  EXPECT_GT(cuda.activation_bytes, 0u);
  std::printf("graph mlp_cuda on cuda:0: weights %llu B, activations %llu B per executor; 4 executors: +%llu\n",
              static_cast<unsigned long long>(cuda.weight_bytes),
              static_cast<unsigned long long>(cuda.activation_bytes), static_cast<unsigned long long>(Grown()));
  if (probe_->exact()) {
    EXPECT_EQ(Grown(), cuda.weight_bytes + kExecutors * cuda.activation_bytes);
  }
  // And four more made on four threads at once.
  std::vector<Executor> more = MadeAtOnce(*model, devices, kExecutors);
  EXPECT_EQ(more.size(), static_cast<size_t>(kExecutors));
  if (probe_->exact()) {
    EXPECT_EQ(Grown(), cuda.weight_bytes + 2 * kExecutors * cuda.activation_bytes);
  }
  if (IsStandInDriver()) return;  // it lacks the model's kernels
  for (Executor& e : more) executors.push_back(std::move(e));
  const Tensor input = ReadNpy("testdata/models/mlp_cuda_input.npy");
  const Tensor want = ReadNpy("testdata/models/mlp_cuda_expected.npy");
  for (Executor& e : executors) {
    auto out = e.Run({{"data", input.dl()}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(Close((*out)[0], want, 1e-4f));
  }
}

}  // namespace
}  // namespace sorun
