// //api:sorun links every backend and the .tar loader.
#include "backends/cuda/cuda_backend.h"
#include "backends/opencl/opencl_backend.h"
#include "base/status.h"
#include "serialization/tar_loader.h"

namespace sorun {

Status RegisterLinkedBackends() {
  SORUN_RETURN_IF_ERROR(RegisterOpenclBackend());
  SORUN_RETURN_IF_ERROR(RegisterTarLoader());
  return RegisterCudaBackend();
}

}  // namespace sorun
