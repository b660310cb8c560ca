// The OpenCL backend's one entry point: RegisterOpenclBackend() makes OpenCL usable in this process.
//
// It registers (1) the kDLOpenCL DeviceApi (OpenclDeviceApi over OpenclDevices::Global()), so
// Tensor::Empty({..}, dtype, {kDLOpenCL, id}), copies, __tvm_set_device(4, id) and
// TVMBackendAllocWorkspace(4, ...) work, with TVM's texture functions "device_api.opencl.alloc_nd" /
// "free_nd" over it, and (2) the "opencl" blob loader
// ("runtime.module.loadbinary_opencl"), so kernel libraries with OpenCL device modules load.
// Registration succeeds without any OpenCL platform (DeviceCount() is then 0). Call it before loading
// models (api/sorun.h does). Idempotent and thread-safe.
#ifndef SORUN_BACKENDS_OPENCL_OPENCL_BACKEND_H_
#define SORUN_BACKENDS_OPENCL_OPENCL_BACKEND_H_

#include "base/status.h"

namespace sorun {

Status RegisterOpenclBackend();

}  // namespace sorun

#endif  // SORUN_BACKENDS_OPENCL_OPENCL_BACKEND_H_
