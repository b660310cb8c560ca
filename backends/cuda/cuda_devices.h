// The CUDA devices of this process: each device's primary context (retained on first use and kept
// for the life of the process, as the CUDA runtime does), cached device properties, and the calling
// thread's current device and current stream per device (TVM's cudaSetDevice / SetStream state).
//
// Every function that needs the driver opens it on first use (CudaDriver::Get) and returns its
// error — Unavailable "no CUDA driver: ..." — when there is none; DeviceCount() is then 0.
// Thread-safe: process-wide state is guarded (contexts are published atomically, so the hot path
// takes no lock); the current device and streams are thread-local and start as device 0 and the
// legacy default stream (null).
#ifndef SORUN_BACKENDS_CUDA_CUDA_DEVICES_H_
#define SORUN_BACKENDS_CUDA_CUDA_DEVICES_H_

#include <cstdint>
#include <string>

#include "backends/cuda/cuda_driver.h"
#include "base/status.h"

namespace sorun {
namespace cuda {

// Devices with an id at or above this are not used (TVM's kMaxNumGPUs).
inline constexpr int kMaxCudaDevices = 32;

// Properties of one device, read once.
struct CudaDeviceInfo {
  std::string name;  // "NVIDIA H100 80GB HBM3"
  int cc_major = 0;  // compute capability
  int cc_minor = 0;
  int multiprocessors = 0;
  uint64_t total_memory = 0;            // bytes
  int max_shared_memory_per_block = 0;  // opt-in maximum, bytes (static + dynamic)

  // "sm_90".
  std::string sm() const { return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor); }
  // "NVIDIA H100 80GB HBM3, sm_90".
  std::string Summary() const { return name + ", " + sm(); }
};

// The process-wide driver (see CudaDriver::Get).
StatusOr<const CudaDriver*> Driver();
// Number of usable devices: 0 without a driver (not an error), at most kMaxCudaDevices.
int DeviceCount();
// OK when `device_id` names a present device; else the driver's error or Unavailable naming the id
// and the device count.
Status CheckDevice(int device_id);

// Makes the primary context of `device_id` current on the calling thread (retaining it on first
// use) and returns the driver. Does not change the thread's current device.
StatusOr<const CudaDriver*> ActivateDevice(int device_id);
// The primary context of `device_id` (retained on first use).
StatusOr<CUcontext> PrimaryContext(int device_id);
// Properties of `device_id` (read on first use, then cached).
StatusOr<CudaDeviceInfo> DeviceInfo(int device_id);

// The calling thread's current device (default 0), where kernels launch.
int CurrentDevice();
// Checks `device_id`, activates it and makes it the calling thread's current device.
Status SetCurrentDevice(int device_id);

// The calling thread's current stream on `device_id` (null = legacy default stream). Kernels and
// barrier resets are queued on it. `device_id` outside [0, kMaxCudaDevices) reads as null.
CUstream CurrentStream(int device_id);
// Sets it; the stream must belong to `device_id` (or be null). InvalidArgument for a bad id.
Status SetCurrentStream(int device_id, CUstream stream);
// A new stream on `device_id` that synchronizes with the legacy default stream (non_blocking: that
// does not). The caller owns it and releases it with DestroyStream.
StatusOr<CUstream> CreateStream(int device_id, bool non_blocking = false);
// Destroys `stream` of `device_id` (work already queued still completes). Threads must not use it
// afterwards; the calling thread's current stream is reset to null if it was `stream`.
Status DestroyStream(int device_id, CUstream stream);

}  // namespace cuda
}  // namespace sorun

#endif  // SORUN_BACKENDS_CUDA_CUDA_DEVICES_H_
