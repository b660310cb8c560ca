#include "backends/cuda/cuda_backend.h"

#include <mutex>

#include "backends/cuda/cuda_device_api.h"
#include "backends/cuda/cuda_module.h"
#include "runtime/blob_loader.h"
#include "runtime/device_api.h"
#include "runtime/registry_keys.h"

namespace sorun {

Status RegisterCudaBackend() {
  static std::mutex mutex;
  static bool registered = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (registered) return Status::Ok();
  Status status = RegisterDeviceApi(CreateCudaDeviceApi());
  // AlreadyExists: a kDLCUDA backend is already in place (registered by the application itself).
  if (!status.ok() && status.code() != StatusCode::kAlreadyExists) return status;
  SORUN_RETURN_IF_ERROR(RegisterBlobLoader(keys::kTypeKeyCuda, [](BinaryReader& reader) {
    return LoadCudaModuleFromBlob(reader, PayloadGrammar::kDetect);
  }));
  SORUN_RETURN_IF_ERROR(RegisterFfiBytesLoader(keys::kTypeKeyCuda, LoadCudaModuleFromBlob));
  registered = true;
  return Status::Ok();
}

}  // namespace sorun
