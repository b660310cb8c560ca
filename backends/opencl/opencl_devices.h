// OpenclDevices: the process's OpenCL platforms and devices, one context and one in-order command
// queue per device, and the calling thread's current device.
//
// Device ids are the global order of devices over all platforms (platform order as the ICD loader
// reports it, then device order within the platform, every device type). Discovery happens once, on
// first use; a machine without any platform has 0 devices (not an error). Each device's context and
// queue are created on first use and live until the OpenclDevices object dies (the Global() one never
// does). Used by the OpenCL DeviceApi and by "opencl" modules.
//
// Thread-safety: all methods may be called from any thread. The current device is thread-local
// (TVM's __tvm_set_device) and shared by every OpenclDevices object.
#ifndef SORUN_BACKENDS_OPENCL_OPENCL_DEVICES_H_
#define SORUN_BACKENDS_OPENCL_OPENCL_DEVICES_H_

#include <CL/cl.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"

namespace sorun {

// What discovery learned about one device. Immutable after discovery.
struct OpenclDeviceInfo {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  std::string name;              // CL_DEVICE_NAME
  std::string vendor;            // CL_DEVICE_VENDOR
  std::string version;           // CL_DEVICE_VERSION ("OpenCL 3.0 PoCL ...")
  std::string driver_version;    // CL_DRIVER_VERSION
  std::string platform_name;     // CL_PLATFORM_NAME
  std::string platform_version;  // CL_PLATFORM_VERSION
  cl_device_type type = 0;
  uint64_t max_alloc_bytes = 0;    // CL_DEVICE_MAX_MEM_ALLOC_SIZE
  uint64_t global_mem_bytes = 0;   // CL_DEVICE_GLOBAL_MEM_SIZE
  size_t max_work_group_size = 0;  // CL_DEVICE_MAX_WORK_GROUP_SIZE
};

// A device's context and queue; both owned by OpenclDevices (callers must not release them).
struct OpenclQueue {
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
};

// The device table (see the file comment). Not copyable; owns the contexts and queues it creates.
class OpenclDevices {
 public:
  OpenclDevices() = default;
  OpenclDevices(const OpenclDevices&) = delete;
  OpenclDevices& operator=(const OpenclDevices&) = delete;
  // Releases the queues and contexts created so far.
  ~OpenclDevices();

  // The process-wide instance (never destroyed).
  static OpenclDevices& Global();

  // Number of devices; 0 when there is no platform or discovery failed (see discovery_status()).
  int DeviceCount();
  // OK, or why discovery found no usable platform (for messages); OK with 0 devices is possible.
  Status discovery_status();
  // The device's info, or Unavailable naming the id and the device count.
  StatusOr<const OpenclDeviceInfo*> Info(int device_id);
  // The device's context and in-order queue, created on first use.
  StatusOr<OpenclQueue> Queue(int device_id);
  // "<name> (<platform name>, <device version>, driver <driver version>)".
  StatusOr<std::string> Describe(int device_id);

  // The calling thread's current device (0 until SetCurrentDevice is called on this thread).
  static int CurrentDevice();
  // Makes `device_id` current for the calling thread; Unavailable if it does not exist.
  Status SetCurrentDevice(int device_id);

 private:
  struct Slot {
    std::mutex mutex;
    std::atomic<bool> ready{false};
    OpenclQueue handles;
  };
  void Discover();

  std::once_flag discover_once_;
  Status discovery_status_;
  std::vector<OpenclDeviceInfo> devices_;
  std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace sorun

#endif  // SORUN_BACKENDS_OPENCL_OPENCL_DEVICES_H_
