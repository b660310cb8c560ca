// The DeviceApi of kDLCUDA: device memory (cuMemAlloc), copies host<->device<->device honouring
// byte_offset (peer copies between devices), stream synchronization, device description, the
// thread's current device (__tvm_set_device), and a per-thread workspace cache for
// TVMBackendAllocWorkspace.
//
// Device pointers travel as `void*` (DLTensor::data of a CUDA tensor is the CUdeviceptr). Streams
// are CUstream handles passed as TVMStreamHandle; null means the legacy default stream, and Sync
// with a null stream waits for all work of the device. CreateStream makes streams ordered with stream 0
// (an executor's own, executor/executor_streams.h); the current stream is the thread's, kept by
// backends/cuda/cuda_devices.h. A copy given no stream runs on the current stream and is waited for.
//
// Without a driver every operation returns Unavailable "no CUDA driver: ..." and DeviceCount() is
// 0; nothing touches the driver before the first call. Registered by RegisterCudaBackend (which owns
// it in the device-API table until exit). Thread-safe.
#ifndef SORUN_BACKENDS_CUDA_CUDA_DEVICE_API_H_
#define SORUN_BACKENDS_CUDA_CUDA_DEVICE_API_H_

#include <memory>

#include "runtime/device_api.h"

namespace sorun {

std::unique_ptr<DeviceApi> CreateCudaDeviceApi();

}  // namespace sorun

#endif  // SORUN_BACKENDS_CUDA_CUDA_DEVICE_API_H_
