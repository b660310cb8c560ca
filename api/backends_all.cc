// //api:sorun links every backend.
#include "runtime/cuda/cuda_backend.h"
#include "runtime/opencl/opencl_backend.h"
#include "runtime/status.h"

namespace sorun {

Status RegisterLinkedBackends() {
  SORUN_RETURN_IF_ERROR(RegisterOpenclBackend());
  return RegisterCudaBackend();
}

}  // namespace sorun
