#include "backends/cuda/cuda_module.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backends/cuda/cuda_devices.h"
#include "backends/cuda/kernel_args.h"
#include "runtime/registry_keys.h"
#include "runtime/startup_timings.h"

namespace sorun {
namespace {

using cuda::CudaDriver;
using cuda::CUdeviceptr;
using cuda::CUfunction;
using cuda::CUmodule;
using cuda::CUresult;
using cuda::kMaxCudaDevices;

constexpr char kGlobalBarrierState[] = "__tvm_global_barrier_state";
constexpr char kPrepareGlobalBarrier[] = "__tvm_prepare_global_barrier";
// Dynamic shared memory a kernel may use without raising its limit.
constexpr int64_t kDefaultDynSharedBytes = 48 * 1024;
// Size of the buffer receiving the PTX JIT's error log.
constexpr size_t kJitLogBytes = 8192;

std::string DeviceName(int device_id) { return "cuda:" + std::to_string(device_id); }

// "grid (4, 1, 1), block (256, 1, 1), 0 bytes of dynamic shared memory, on cuda:0".
std::string DescribeLaunch(const LaunchDims& dims, int device_id) {
  auto triple = [](const int64_t* d) {
    return "(" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + ")";
  };
  return "grid " + triple(dims.grid) + ", block " + triple(dims.block) + ", " + std::to_string(dims.dyn_shared_bytes) +
         " bytes of dynamic shared memory, on " + DeviceName(device_id);
}

// One kernel of the module and its per-device launch state.
struct Kernel {
  std::string name;
  const FunctionInfo* info = nullptr;  // points into the module's payload
  LaunchConfig config;
  std::array<std::atomic<CUfunction>, kMaxCudaDevices> functions;
  // Dynamic shared-memory limit set with cuFuncSetAttribute so far (0 = never raised).
  std::array<std::atomic<int64_t>, kMaxCudaDevices> dyn_shared_limit;

  Kernel() {
    for (auto& f : functions) f.store(nullptr, std::memory_order_relaxed);
    for (auto& l : dyn_shared_limit) l.store(0, std::memory_order_relaxed);
  }
};

class CudaModuleNode final : public ModuleNode {
 public:
  CudaModuleNode(DeviceModulePayload payload, const std::vector<LaunchConfig>& configs) : payload_(std::move(payload)) {
    kernels_.reserve(payload_.functions.size());
    for (size_t i = 0; i < payload_.functions.size(); ++i) {
      auto kernel = std::make_unique<Kernel>();
      kernel->name = payload_.functions[i].first;
      kernel->info = &payload_.functions[i].second;
      kernel->config = configs[i];
      by_name_.emplace(kernel->name, kernel.get());
      kernels_.push_back(std::move(kernel));
    }
    for (auto& m : modules_) m.store(nullptr, std::memory_order_relaxed);
  }

  ~CudaModuleNode() override {
    auto driver = CudaDriver::Get();
    if (!driver.ok()) return;  // then nothing was ever loaded
    const cuda::CudaDriverApi& api = (*driver)->api();
    for (int d = 0; d < kMaxCudaDevices; ++d) {
      CUmodule module = modules_[d].load(std::memory_order_acquire);
      if (module == nullptr) continue;
      auto context = cuda::PrimaryContext(d);
      if (!context.ok()) continue;
      // Unload in the module's context without disturbing the calling thread's current one. Errors
      // (driver already shut down at exit) leave nothing to clean up.
      if (api.cuCtxPushCurrent_v2(*context) != cuda::CUDA_SUCCESS) continue;
      api.cuModuleUnload(module);
      cuda::CUcontext popped = nullptr;
      api.cuCtxPopCurrent_v2(&popped);
    }
  }

  const char* type_key() const override { return keys::kTypeKeyCuda; }
  const void* class_id() const override { return &kClassId; }
  static constexpr char kClassId = 0;
  int property_mask() const override { return kModuleBinarySerializable | kModuleRunnable; }
  // Its kernels check their own arguments, so a graph node may name them (runtime/module.h, "Kernels").
  bool provides_kernels() const override { return true; }

  Status SaveToBinary(BinaryWriter* writer) const override {
    WriteDeviceModulePayload(payload_, writer);
    return Status::Ok();
  }

  std::vector<std::string> ListFunctionNames() const override {
    std::vector<std::string> names;
    names.reserve(kernels_.size());
    for (const auto& k : kernels_) names.push_back(k->name);
    return names;
  }

  PackedFunc GetFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) override {
    if (name == kPrepareGlobalBarrier) {
      return PackedFunc::FromBody(kPrepareGlobalBarrier, [this, self](PackedArgs args, Value* ret) -> Status {
        SORUN_RETURN_IF_ERROR(args.ExpectCount(0, kPrepareGlobalBarrier));
        return PrepareGlobalBarrier();
      });
    }
    auto it = by_name_.find(std::string(name));
    if (it == by_name_.end()) return PackedFunc();
    Kernel* kernel = it->second;
    return PackedFunc::FromBody(
        kernel->name, [this, self, kernel](PackedArgs args, Value* ret) -> Status { return Launch(*kernel, args); });
  }

  // The image loaded on `device_id` (whose context the caller made current), loading it first.
  StatusOr<CUmodule> ModuleOn(const CudaDriver* driver, int device_id) {
    CUmodule module = modules_[device_id].load(std::memory_order_acquire);
    if (module != nullptr) return module;
    std::lock_guard<std::mutex> lock(mutex_);
    module = modules_[device_id].load(std::memory_order_acquire);
    if (module != nullptr) return module;
    const cuda::CudaDriverApi& api = driver->api();
    // c_str(): the image always ends in a NUL byte, which the driver needs to find the end of PTX.
    std::array<char, kJitLogBytes> log{};
    // CU_JIT_WALL_TIME: the driver overwrites the value with the milliseconds its compiler ran (a float).
    cuda::CUjit_option options[3] = {cuda::CU_JIT_ERROR_LOG_BUFFER, cuda::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                                     cuda::CU_JIT_WALL_TIME};
    void* values[3] = {log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(log.size() - 1)), nullptr};
    const auto start = std::chrono::steady_clock::now();
    CUresult result = api.cuModuleLoadDataEx(&module, payload_.data.c_str(), 3, options, values);
    AddStartupTime(StartupPhase::kModuleLoad,
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
                   result == cuda::CUDA_SUCCESS ? 1 : 0);
    if (result != cuda::CUDA_SUCCESS) {
      log.back() = '\0';
      return LoadError(driver, device_id, result, log.data());
    }
    float jit_ms = 0;
    std::memcpy(&jit_ms, &values[2], sizeof(jit_ms));  // the float in the low bytes of the slot
    AddModuleJit(payload_.fmt == "ptx", jit_ms > 0 && jit_ms < 1e7f ? jit_ms : 0.0);
    // TVM's global barrier counter, when the code has one.
    CUdeviceptr barrier = 0;
    size_t barrier_bytes = 0;
    if (api.cuModuleGetGlobal_v2(&barrier, &barrier_bytes, module, kGlobalBarrierState) != cuda::CUDA_SUCCESS) {
      barrier = 0;
      barrier_bytes = 0;
    }
    barrier_state_[device_id] = barrier;
    barrier_state_bytes_[device_id] = barrier_bytes;
    modules_[device_id].store(module, std::memory_order_release);
    return module;
  }

 private:
  std::string Describe() const {
    return "cuda module (fmt " + payload_.fmt + ", " + std::to_string(payload_.data.size()) + " bytes, " +
           std::to_string(kernels_.size()) + " kernel(s))";
  }

  Status LoadError(const CudaDriver* driver, int device_id, CUresult result, const char* jit_log) const {
    auto info = cuda::DeviceInfo(device_id);
    const std::string device = DeviceName(device_id) + " (" + (info.ok() ? info->Summary() : "unknown device") + ")";
    std::string message = "cannot load the " + Describe() + " on " + device + ": " + driver->ErrorText(result);
    const std::string sm = info.ok() ? info->sm() : "this GPU";
    switch (result) {
      case cuda::CUDA_ERROR_NO_BINARY_FOR_GPU:
        message += payload_.fmt == "ptx"
                       ? "; the driver could not compile the PTX for " + sm +
                             " (is its PTX JIT compiler, libnvidia-ptxjitcompiler.so.1, installed?)"
                       : "; the image holds no machine code for " + sm + " and no PTX the driver can compile for it";
        break;
      case cuda::CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
        message += "; the PTX was generated by a newer CUDA toolkit than this driver (CUDA " +
                   std::to_string(driver->version() / 1000) + "." + std::to_string(driver->version() % 1000 / 10) +
                   ") supports";
        break;
      default: break;
    }
    if (jit_log != nullptr && jit_log[0] != '\0') message += "; JIT log: " + std::string(jit_log);
    return Status(cuda::CudaResultStatusCode(result), std::move(message));
  }

  StatusOr<CUfunction> FunctionOn(const CudaDriver* driver, Kernel& kernel, int device_id) {
    CUfunction function = kernel.functions[device_id].load(std::memory_order_acquire);
    if (function != nullptr) return function;
    SORUN_ASSIGN_OR_RETURN(CUmodule module, ModuleOn(driver, device_id));
    CUresult result = driver->api().cuModuleGetFunction(&function, module, kernel.name.c_str());
    if (result == cuda::CUDA_ERROR_NOT_FOUND) {
      return NotFound("kernel " + kernel.name + " is not in the code image of the " + Describe());
    }
    SORUN_RETURN_IF_ERROR(driver->Check(result, "cuModuleGetFunction(" + kernel.name + ")"));
    kernel.functions[device_id].store(function, std::memory_order_release);  // racing stores agree
    return function;
  }

  // Raises the kernel's dynamic shared-memory limit on `device_id` to `bytes` when a launch needs
  // more than the default 48 KiB and more than any earlier launch did.
  Status RaiseDynSharedLimit(const CudaDriver* driver, Kernel& kernel, int device_id, CUfunction function,
                             int64_t bytes) {
    if (bytes < kDefaultDynSharedBytes) return Status::Ok();
    if (bytes <= kernel.dyn_shared_limit[device_id].load(std::memory_order_acquire)) return Status::Ok();
    std::lock_guard<std::mutex> lock(mutex_);
    if (bytes <= kernel.dyn_shared_limit[device_id].load(std::memory_order_acquire)) return Status::Ok();
    SORUN_ASSIGN_OR_RETURN(cuda::CudaDeviceInfo info, cuda::DeviceInfo(device_id));
    if (bytes > info.max_shared_memory_per_block) {
      return InvalidArgument("kernel " + kernel.name + " asks for " + std::to_string(bytes) +
                             " bytes of dynamic shared memory; " + DeviceName(device_id) + " (" + info.Summary() +
                             ") allows at most " + std::to_string(info.max_shared_memory_per_block) +
                             " bytes per block");
    }
    SORUN_RETURN_IF_ERROR(
        driver->Check(driver->api().cuFuncSetAttribute(function, cuda::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                       static_cast<int>(bytes)),
                      "CUDA launch of kernel " + kernel.name + " failed: cannot allow " + std::to_string(bytes) +
                          " bytes of dynamic shared memory"));
    kernel.dyn_shared_limit[device_id].store(bytes, std::memory_order_release);
    return Status::Ok();
  }

  Status Launch(Kernel& kernel, PackedArgs args) {
    thread_local KernelArgs kernel_args;  // reused: no allocation per launch
    SORUN_RETURN_IF_ERROR(
        MarshalKernelArgs(kernel.name, *kernel.info, args.values(), args.codes(), args.size(), &kernel_args));
    SORUN_ASSIGN_OR_RETURN(LaunchDims dims,
                           ExtractLaunchDims(kernel.name, kernel.config, args.values(), args.codes(), args.size()));
    const int device_id = cuda::CurrentDevice();
    const std::string failed = "CUDA launch of kernel " + kernel.name + " failed";
    for (int64_t extent : {dims.grid[0], dims.grid[1], dims.grid[2], dims.block[0], dims.block[1], dims.block[2],
                           dims.dyn_shared_bytes}) {
      if (extent > static_cast<int64_t>(UINT32_MAX)) {
        return InvalidArgument(failed + ": launch value " + std::to_string(extent) + " exceeds 32 bits (" +
                               DescribeLaunch(dims, device_id) + ")");
      }
    }
    auto driver_or = cuda::ActivateDevice(device_id);
    if (!driver_or.ok()) return std::move(driver_or).status().Annotate(failed);
    const CudaDriver* driver = *driver_or;
    auto function = FunctionOn(driver, kernel, device_id);
    if (!function.ok()) return std::move(function).status().Annotate(failed);
    SORUN_RETURN_IF_ERROR(RaiseDynSharedLimit(driver, kernel, device_id, *function, dims.dyn_shared_bytes));
    CUresult result = driver->api().cuLaunchKernel(
        *function, static_cast<unsigned>(dims.grid[0]), static_cast<unsigned>(dims.grid[1]),
        static_cast<unsigned>(dims.grid[2]), static_cast<unsigned>(dims.block[0]), static_cast<unsigned>(dims.block[1]),
        static_cast<unsigned>(dims.block[2]), static_cast<unsigned>(dims.dyn_shared_bytes),
        cuda::CurrentStream(device_id), kernel_args.kernel_params(), nullptr);
    if (result != cuda::CUDA_SUCCESS) {
      return Status(cuda::CudaResultStatusCode(result),
                    failed + ": " + driver->ErrorText(result) + " (" + DescribeLaunch(dims, device_id) + ")");
    }
    return Status::Ok();
  }

  Status PrepareGlobalBarrier() {
    const int device_id = cuda::CurrentDevice();
    auto driver_or = cuda::ActivateDevice(device_id);
    if (!driver_or.ok()) return std::move(driver_or).status().Annotate(kPrepareGlobalBarrier);
    const CudaDriver* driver = *driver_or;
    auto module = ModuleOn(driver, device_id);
    if (!module.ok()) return std::move(module).status().Annotate(kPrepareGlobalBarrier);
    // Published together with the module (release/acquire on modules_).
    const CUdeviceptr state = barrier_state_[device_id];
    if (state == 0) return Status::Ok();  // no global barrier in this code
    if (barrier_state_bytes_[device_id] < sizeof(uint32_t)) {
      return DataLoss(std::string(kPrepareGlobalBarrier) + ": " + kGlobalBarrierState + " has " +
                      std::to_string(barrier_state_bytes_[device_id]) + " bytes, expected 4");
    }
    return driver->Check(driver->api().cuMemsetD32Async(state, 0, 1, cuda::CurrentStream(device_id)),
                         std::string(kPrepareGlobalBarrier) + " on " + DeviceName(device_id));
  }

  const DeviceModulePayload payload_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
  std::unordered_map<std::string, Kernel*> by_name_;
  std::mutex mutex_;  // guards loading images and raising shared-memory limits
  std::array<std::atomic<CUmodule>, kMaxCudaDevices> modules_;
  // Written under mutex_ before modules_[d] is published.
  std::array<CUdeviceptr, kMaxCudaDevices> barrier_state_{};
  std::array<size_t, kMaxCudaDevices> barrier_state_bytes_{};
};

}  // namespace

StatusOr<Module> CreateCudaModule(DeviceModulePayload payload) {
  SORUN_RETURN_IF_ERROR(CheckCudaCodeFormat(payload.fmt, payload.data.size()));
  std::vector<LaunchConfig> configs;
  configs.reserve(payload.functions.size());
  std::unordered_map<std::string, int> seen;
  for (const auto& [name, info] : payload.functions) {
    if (name.empty()) return InvalidArgument("cuda module: a kernel has an empty name");
    if (!seen.emplace(name, 0).second) return InvalidArgument("cuda module: duplicate kernel '" + name + "'");
    auto config = LaunchConfig::FromFunctionInfo(name, info);
    if (!config.ok()) return Status(config.status().code(), "cuda module: " + config.status().message());
    configs.push_back(std::move(*config));
  }
  return Module(MakeObject<CudaModuleNode>(std::move(payload), configs));
}

Status PrepareCudaModule(const Module& module, int device_id) {
  auto* node = ModuleNodeAs<CudaModuleNode>(module);
  if (node == nullptr) {
    return InvalidArgument(std::string("PrepareCudaModule: not a cuda module (") +
                           (module.defined() ? module.type_key() : "null") + ")");
  }
  SORUN_ASSIGN_OR_RETURN(const CudaDriver* driver, cuda::ActivateDevice(device_id));
  return node->ModuleOn(driver, device_id).status();
}

StatusOr<Module> LoadCudaModuleFromBlob(BinaryReader& reader, PayloadGrammar grammar) {
  const uint64_t start = reader.offset();
  DeviceModulePayload payload;
  SORUN_RETURN_IF_ERROR(ReadDeviceModulePayload(reader, "cuda", &payload, grammar));
  auto module = CreateCudaModule(std::move(payload));
  if (!module.ok()) {
    Status at = reader.ErrorAt(start, module.status().message());
    if (module.status().code() == StatusCode::kUnimplemented) return Status(StatusCode::kUnimplemented, at.message());
    return at;
  }
  // Load-time check where the driver allows it; without a driver the image is checked at first use.
  if (cuda::DeviceCount() > 0) SORUN_RETURN_IF_ERROR(PrepareCudaModule(*module, cuda::CurrentDevice()));
  return module;
}

}  // namespace sorun
