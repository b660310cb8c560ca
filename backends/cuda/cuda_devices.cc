#include "backends/cuda/cuda_devices.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include "runtime/startup_timings.h"

namespace sorun {
namespace cuda {
namespace {

struct DeviceTable {
  std::mutex mutex;  // guards retaining contexts and `infos`
  std::array<std::atomic<CUcontext>, kMaxCudaDevices> contexts;
  std::array<std::unique_ptr<CudaDeviceInfo>, kMaxCudaDevices> infos;

  DeviceTable() {
    for (auto& c : contexts) c.store(nullptr, std::memory_order_relaxed);
  }
};

DeviceTable& Table() {
  static DeviceTable* table = new DeviceTable();  // lives until exit, like the contexts it holds
  return *table;
}

// Constant-initialized thread-local state (no constructors run).
thread_local int tls_current_device = 0;
thread_local CUstream tls_streams[kMaxCudaDevices] = {};

bool InRange(int device_id) { return device_id >= 0 && device_id < kMaxCudaDevices; }

std::string DeviceName(int device_id) { return "cuda:" + std::to_string(device_id); }

}  // namespace

StatusOr<const CudaDriver*> Driver() { return CudaDriver::Get(); }

int DeviceCount() {
  auto driver = CudaDriver::Get();
  if (!driver.ok()) return 0;
  return std::min((*driver)->device_count(), kMaxCudaDevices);
}

Status CheckDevice(int device_id) {
  SORUN_ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Get());
  int count = std::min(driver->device_count(), kMaxCudaDevices);
  if (device_id < 0 || device_id >= count) {
    return Unavailable("device " + DeviceName(device_id) + " is not present (" + std::to_string(count) +
                       " CUDA device(s) found)");
  }
  return Status::Ok();
}

StatusOr<CUcontext> PrimaryContext(int device_id) {
  DeviceTable& table = Table();
  if (InRange(device_id)) {
    CUcontext context = table.contexts[device_id].load(std::memory_order_acquire);
    if (context != nullptr) return context;
  }
  SORUN_RETURN_IF_ERROR(CheckDevice(device_id));
  SORUN_ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Get());
  std::lock_guard<std::mutex> lock(table.mutex);
  CUcontext context = table.contexts[device_id].load(std::memory_order_acquire);
  if (context != nullptr) return context;
  CUdevice device = 0;
  SORUN_RETURN_IF_ERROR(
      driver->Check(driver->api().cuDeviceGet(&device, device_id), "cuDeviceGet(" + std::to_string(device_id) + ")"));
  const auto start = std::chrono::steady_clock::now();  // the driver makes the context here
  SORUN_RETURN_IF_ERROR(driver->Check(driver->api().cuDevicePrimaryCtxRetain(&context, device),
                                      "cannot retain the primary context of " + DeviceName(device_id)));
  AddStartupTime(StartupPhase::kDeviceContext,
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  table.contexts[device_id].store(context, std::memory_order_release);
  return context;
}

StatusOr<const CudaDriver*> ActivateDevice(int device_id) {
  SORUN_ASSIGN_OR_RETURN(CUcontext context, PrimaryContext(device_id));
  SORUN_ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Get());
  SORUN_RETURN_IF_ERROR(
      driver->Check(driver->api().cuCtxSetCurrent(context), "cannot make " + DeviceName(device_id) + " current"));
  return driver;
}

StatusOr<CudaDeviceInfo> DeviceInfo(int device_id) {
  SORUN_RETURN_IF_ERROR(CheckDevice(device_id));
  SORUN_ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Get());
  DeviceTable& table = Table();
  std::lock_guard<std::mutex> lock(table.mutex);
  if (table.infos[device_id]) return *table.infos[device_id];
  const CudaDriverApi& api = driver->api();
  const std::string where = "reading the properties of " + DeviceName(device_id);
  CUdevice device = 0;
  SORUN_RETURN_IF_ERROR(driver->Check(api.cuDeviceGet(&device, device_id), where));
  auto info = std::make_unique<CudaDeviceInfo>();
  char name[256] = {};
  SORUN_RETURN_IF_ERROR(driver->Check(api.cuDeviceGetName(name, sizeof(name) - 1, device), where));
  info->name = name;
  struct {
    CUdevice_attribute attribute;
    int* out;
  } attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info->cc_major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info->cc_minor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info->multiprocessors},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &info->max_shared_memory_per_block},
  };
  for (const auto& a : attributes) {
    SORUN_RETURN_IF_ERROR(driver->Check(api.cuDeviceGetAttribute(a.out, a.attribute, device), where));
  }
  size_t total = 0;
  SORUN_RETURN_IF_ERROR(driver->Check(api.cuDeviceTotalMem_v2(&total, device), where));
  info->total_memory = total;
  table.infos[device_id] = std::move(info);
  return *table.infos[device_id];
}

int CurrentDevice() { return tls_current_device; }

Status SetCurrentDevice(int device_id) {
  SORUN_RETURN_IF_ERROR(ActivateDevice(device_id).status());
  tls_current_device = device_id;
  return Status::Ok();
}

CUstream CurrentStream(int device_id) { return InRange(device_id) ? tls_streams[device_id] : nullptr; }

Status SetCurrentStream(int device_id, CUstream stream) {
  if (!InRange(device_id)) {
    return InvalidArgument("cannot set the stream of " + DeviceName(device_id) + ": device ids are 0.." +
                           std::to_string(kMaxCudaDevices - 1));
  }
  tls_streams[device_id] = stream;
  return Status::Ok();
}

StatusOr<CUstream> CreateStream(int device_id, bool non_blocking) {
  SORUN_ASSIGN_OR_RETURN(const CudaDriver* driver, ActivateDevice(device_id));
  CUstream stream = nullptr;
  SORUN_RETURN_IF_ERROR(
      driver->Check(driver->api().cuStreamCreate(&stream, non_blocking ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT),
                    "cannot create a stream on " + DeviceName(device_id)));
  return stream;
}

Status DestroyStream(int device_id, CUstream stream) {
  if (stream == nullptr)
    return InvalidArgument("the default stream of " + DeviceName(device_id) + " cannot be destroyed");
  SORUN_ASSIGN_OR_RETURN(const CudaDriver* driver, ActivateDevice(device_id));
  SORUN_RETURN_IF_ERROR(
      driver->Check(driver->api().cuStreamDestroy_v2(stream), "cannot destroy a stream of " + DeviceName(device_id)));
  if (tls_streams[device_id] == stream) tls_streams[device_id] = nullptr;
  return Status::Ok();
}

}  // namespace cuda
}  // namespace sorun
