#include "backends/opencl/opencl_devices.h"

#include <CL/cl_ext.h>

#include <string>

#include "backends/opencl/opencl_status.h"

namespace sorun {
namespace {

// Set by SetCurrentDevice; constant-initialised, so no static initializer runs.
thread_local int t_current_device = 0;

std::string TrimNul(std::string s) {
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string PlatformString(cl_platform_id platform, cl_platform_info param) {
  size_t size = 0;
  if (clGetPlatformInfo(platform, param, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string value(size, '\0');
  if (clGetPlatformInfo(platform, param, size, &value[0], nullptr) != CL_SUCCESS) return "";
  return TrimNul(std::move(value));
}

std::string DeviceString(cl_device_id device, cl_device_info param) {
  size_t size = 0;
  if (clGetDeviceInfo(device, param, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string value(size, '\0');
  if (clGetDeviceInfo(device, param, size, &value[0], nullptr) != CL_SUCCESS) return "";
  return TrimNul(std::move(value));
}

template <typename T>
T DeviceScalar(cl_device_id device, cl_device_info param) {
  T value{};
  if (clGetDeviceInfo(device, param, sizeof(T), &value, nullptr) != CL_SUCCESS) return T{};
  return value;
}

}  // namespace

OpenclDevices::~OpenclDevices() {
  for (auto& slot : slots_) {
    if (!slot->ready.load(std::memory_order_acquire)) continue;
    clReleaseCommandQueue(slot->handles.queue);
    clReleaseContext(slot->handles.context);
  }
}

OpenclDevices& OpenclDevices::Global() {
  static OpenclDevices* devices = new OpenclDevices();  // lives until exit; never destroyed
  return *devices;
}

void OpenclDevices::Discover() {
  cl_uint num_platforms = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &num_platforms);
  if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && num_platforms == 0)) {
    discovery_status_ = Unavailable("no OpenCL platform is installed (the ICD loader found none)");
    return;
  }
  if (err != CL_SUCCESS) {
    discovery_status_ = opencl::ClStatus(err, "clGetPlatformIDs", "OpenCL platform discovery");
    return;
  }
  std::vector<cl_platform_id> platforms(num_platforms);
  err = clGetPlatformIDs(num_platforms, platforms.data(), nullptr);
  if (err != CL_SUCCESS) {
    discovery_status_ = opencl::ClStatus(err, "clGetPlatformIDs", "OpenCL platform discovery");
    return;
  }
  std::string skipped;
  for (cl_platform_id platform : platforms) {
    cl_uint num_devices = 0;
    err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &num_devices);
    if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && num_devices == 0)) continue;
    std::vector<cl_device_id> ids(num_devices);
    if (err == CL_SUCCESS) err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, num_devices, ids.data(), nullptr);
    if (err != CL_SUCCESS) {
      skipped +=
          (skipped.empty() ? "" : "; ") +
          opencl::ClStatus(err, "clGetDeviceIDs", "platform '" + PlatformString(platform, CL_PLATFORM_NAME) + "'")
              .message();
      continue;
    }
    for (cl_device_id id : ids) {
      OpenclDeviceInfo info;
      info.platform = platform;
      info.device = id;
      info.name = DeviceString(id, CL_DEVICE_NAME);
      info.vendor = DeviceString(id, CL_DEVICE_VENDOR);
      info.version = DeviceString(id, CL_DEVICE_VERSION);
      info.driver_version = DeviceString(id, CL_DRIVER_VERSION);
      info.platform_name = PlatformString(platform, CL_PLATFORM_NAME);
      info.platform_version = PlatformString(platform, CL_PLATFORM_VERSION);
      info.type = DeviceScalar<cl_device_type>(id, CL_DEVICE_TYPE);
      info.max_alloc_bytes = DeviceScalar<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
      info.global_mem_bytes = DeviceScalar<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE);
      info.max_work_group_size = DeviceScalar<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
      devices_.push_back(std::move(info));
      slots_.push_back(std::make_unique<Slot>());
    }
  }
  if (devices_.empty()) {
    discovery_status_ = Unavailable("no OpenCL device found on " + std::to_string(num_platforms) + " platform(s)" +
                                    (skipped.empty() ? "" : " (" + skipped + ")"));
  }
}

int OpenclDevices::DeviceCount() {
  std::call_once(discover_once_, [this] { Discover(); });
  return static_cast<int>(devices_.size());
}

Status OpenclDevices::discovery_status() {
  DeviceCount();
  return discovery_status_;
}

StatusOr<const OpenclDeviceInfo*> OpenclDevices::Info(int device_id) {
  int count = DeviceCount();
  if (device_id < 0 || device_id >= count) {
    std::string why = discovery_status_.ok() ? "" : ": " + discovery_status_.message();
    return Unavailable("opencl:" + std::to_string(device_id) + " does not exist (" + std::to_string(count) +
                       " OpenCL device(s) found" + why + ")");
  }
  return &devices_[device_id];
}

StatusOr<OpenclQueue> OpenclDevices::Queue(int device_id) {
  SORUN_ASSIGN_OR_RETURN(const OpenclDeviceInfo* info, Info(device_id));
  Slot& slot = *slots_[device_id];
  if (slot.ready.load(std::memory_order_acquire)) return slot.handles;
  std::lock_guard<std::mutex> lock(slot.mutex);
  if (slot.ready.load(std::memory_order_relaxed)) return slot.handles;
  const std::string where = "opencl:" + std::to_string(device_id) + " (" + info->name + ")";
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(info->platform), 0};
  cl_int err = CL_SUCCESS;
  cl_context context = clCreateContext(props, 1, &info->device, nullptr, nullptr, &err);
  if (err != CL_SUCCESS || context == nullptr) {
    return opencl::ClStatus(err != CL_SUCCESS ? err : CL_INVALID_CONTEXT, "clCreateContext", where);
  }
  cl_command_queue queue = clCreateCommandQueue(context, info->device, 0, &err);
  if (err != CL_SUCCESS || queue == nullptr) {
    clReleaseContext(context);
    return opencl::ClStatus(err != CL_SUCCESS ? err : CL_INVALID_COMMAND_QUEUE, "clCreateCommandQueue", where);
  }
  slot.handles = OpenclQueue{context, queue};
  slot.ready.store(true, std::memory_order_release);
  return slot.handles;
}

StatusOr<std::string> OpenclDevices::Describe(int device_id) {
  SORUN_ASSIGN_OR_RETURN(const OpenclDeviceInfo* info, Info(device_id));
  return info->name + " (" + info->platform_name + ", " + info->version + ", driver " + info->driver_version + ")";
}

int OpenclDevices::CurrentDevice() { return t_current_device; }

Status OpenclDevices::SetCurrentDevice(int device_id) {
  SORUN_RETURN_IF_ERROR(Info(device_id).status());
  t_current_device = device_id;
  return Status::Ok();
}

}  // namespace sorun
