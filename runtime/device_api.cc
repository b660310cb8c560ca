#include "runtime/device_api.h"

#include <array>
#include <atomic>
#include <mutex>

#include "runtime/cpu_device_api.h"
#include "runtime/data_type.h"

namespace sorun {
namespace {

constexpr int kMaxDeviceType = 64;

struct DeviceApiTable {
  std::mutex mutex;
  std::array<std::atomic<DeviceApi*>, kMaxDeviceType> apis{};

  DeviceApiTable() {
    for (auto& a : apis) a.store(nullptr, std::memory_order_relaxed);
    apis[kDLCPU].store(CreateCpuDeviceApi().release(), std::memory_order_release);
  }
};

DeviceApiTable& Table() {
  static DeviceApiTable* table = new DeviceApiTable();  // lives until exit; never destroyed
  return *table;
}

}  // namespace

StatusOr<void*> DeviceApi::AllocWorkspace(DLDevice device, size_t nbytes) {
  return Alloc(device, nbytes, kAllocAlignment);
}

Status DeviceApi::FreeWorkspace(DLDevice device, void* ptr) {
  Free(device, ptr);
  return Status::Ok();
}

StatusOr<TVMStreamHandle> DeviceApi::CreateStream(DLDevice, StreamOrder) { return TVMStreamHandle{nullptr}; }

Status DeviceApi::FreeStream(DLDevice device, TVMStreamHandle stream) {
  if (stream == nullptr) return Status::Ok();
  return InvalidArgument("FreeStream: " + DeviceToString(device) + " has no streams to free");
}

TVMStreamHandle DeviceApi::CurrentStream(DLDevice) { return nullptr; }

Status DeviceApi::SetCurrentStream(DLDevice device, TVMStreamHandle stream) {
  if (stream == nullptr) return Status::Ok();
  return Unimplemented("streams: " + DeviceToString(device) + " has one queue and no streams to choose from");
}

Status DeviceApi::BeginCapture(DLDevice device, TVMStreamHandle) {
  return Unimplemented(DeviceToString(device) + " has no stream capture (device graphs are a CUDA feature)");
}

StatusOr<std::unique_ptr<DeviceGraph>> DeviceApi::EndCapture(DLDevice device, TVMStreamHandle) {
  return Unimplemented(DeviceToString(device) + " has no stream capture (device graphs are a CUDA feature)");
}

Status RegisterDeviceApi(std::unique_ptr<DeviceApi> api) {
  if (!api) return InvalidArgument("RegisterDeviceApi: null backend");
  int type = api->device_type();
  if (type <= 0 || type >= kMaxDeviceType) {
    return InvalidArgument("RegisterDeviceApi: device type " + std::to_string(type) + " out of range");
  }
  DeviceApiTable& table = Table();
  std::lock_guard<std::mutex> lock(table.mutex);
  if (table.apis[type].load(std::memory_order_acquire) != nullptr) {
    return AlreadyExists(std::string("a backend for device type ") + DeviceTypeName(type) + " is already registered");
  }
  table.apis[type].store(api.release(), std::memory_order_release);
  return Status::Ok();
}

StatusOr<DeviceApi*> GetDeviceApi(int device_type) {
  if (device_type > 0 && device_type < kMaxDeviceType) {
    DeviceApi* api = Table().apis[device_type].load(std::memory_order_acquire);
    if (api) return api;
  }
  const std::string name = DescribeDeviceType(device_type);
  if (!IsDLDeviceTypeValue(device_type) || name.rfind("unknown", 0) == 0) {
    return Unavailable("no backend for " + name + " is registered in this process");
  }
  std::string hint;
  if (device_type == kDLOpenCL) hint = " (link //backends/opencl and call sorun::RegisterOpenclBackend())";
  if (device_type == kDLCUDA) hint = " (link //backends/cuda and call sorun::RegisterCudaBackend())";
  return Unavailable("no backend for device type " + name + " (" + std::to_string(device_type) +
                     ") is registered in this process" + hint);
}

Status CheckDeviceExists(DLDevice device) {
  SORUN_ASSIGN_OR_RETURN(DeviceApi * api, GetDeviceApi(device.device_type));
  int count = api->DeviceCount();
  if (device.device_id < 0 || device.device_id >= count) {
    std::string why;
    if (count == 0) {
      // The backend knows why there is none (e.g. "no CUDA driver: libcuda.so.1 not found").
      auto described = api->Describe(0);
      if (!described.ok()) why = ": " + described.status().message();
    }
    return Unavailable("device " + DeviceToString(device) + " is not present (" + std::to_string(count) + " " +
                       DescribeDeviceType(device.device_type) + " device(s) found)" + why);
  }
  return Status::Ok();
}

}  // namespace sorun
