// The CPU DeviceApi: 64-byte aligned host memory, memcpy copies, workspace from the calling thread's
// WorkspacePool. Registered automatically as the first backend.
#ifndef SORUN_RUNTIME_CPU_DEVICE_API_H_
#define SORUN_RUNTIME_CPU_DEVICE_API_H_

#include <memory>

#include "runtime/device_api.h"

namespace sorun {

std::unique_ptr<DeviceApi> CreateCpuDeviceApi();

}  // namespace sorun

#endif  // SORUN_RUNTIME_CPU_DEVICE_API_H_
