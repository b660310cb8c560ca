#include "backends/opencl/opencl_backend.h"

#include <memory>
#include <mutex>

#include "backends/opencl/opencl_device_api.h"
#include "backends/opencl/opencl_devices.h"
#include "backends/opencl/opencl_module.h"
#include "runtime/blob_loader.h"
#include "runtime/device_api.h"
#include "runtime/registry_keys.h"

namespace sorun {

Status RegisterOpenclBackend() {
  static std::mutex* mutex = new std::mutex();  // never destroyed
  static bool device_api_registered = false;
  static bool loader_registered = false;
  std::lock_guard<std::mutex> lock(*mutex);
  if (!device_api_registered) {
    SORUN_RETURN_IF_ERROR_CTX(RegisterDeviceApi(std::make_unique<OpenclDeviceApi>(&OpenclDevices::Global())),
                              "RegisterOpenclBackend");
    device_api_registered = true;
  }
  if (!loader_registered) {
    SORUN_RETURN_IF_ERROR_CTX(RegisterBlobLoader(keys::kTypeKeyOpenCL, LoadOpenclModuleFromBinary),
                              "RegisterOpenclBackend");
    loader_registered = true;
  }
  return Status::Ok();
}

}  // namespace sorun
