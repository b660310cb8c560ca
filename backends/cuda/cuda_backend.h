// RegisterCudaBackend: makes the CUDA backend available to this process — the kDLCUDA DeviceApi
// (backends/cuda/cuda_device_api.h) and the "cuda" blob loader (runtime.module.loadbinary_cuda,
// backends/cuda/cuda_module.h). sorun uses no static initializers: applications (api/sorun.h) call
// this once at start-up; calling it again is harmless.
//
// Registration never touches the driver: libcuda.so.1 is opened by the first operation that needs
// it, so registering on a machine without a GPU succeeds and models with CUDA modules still load.
// Thread-safe.
#ifndef SORUN_BACKENDS_CUDA_CUDA_BACKEND_H_
#define SORUN_BACKENDS_CUDA_CUDA_BACKEND_H_

#include "base/status.h"

namespace sorun {

// Registers the kDLCUDA device API and the "cuda" blob loader. Idempotent: later calls return OK
// without re-registering. A kDLCUDA device API the application registered itself is kept. Errors
// only when the registry refuses a registration.
Status RegisterCudaBackend();

}  // namespace sorun

#endif  // SORUN_BACKENDS_CUDA_CUDA_BACKEND_H_
