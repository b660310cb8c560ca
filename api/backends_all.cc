// //api:sorun links every backend and the .tar loader.
#include "runtime/cuda/cuda_backend.h"
#include "runtime/opencl/opencl_backend.h"
#include "runtime/status.h"
#include "serialization/tar_loader.h"

namespace sorun {

Status RegisterLinkedBackends() {
  SORUN_RETURN_IF_ERROR(RegisterOpenclBackend());
  SORUN_RETURN_IF_ERROR(RegisterTarLoader());
  return RegisterCudaBackend();
}

}  // namespace sorun
