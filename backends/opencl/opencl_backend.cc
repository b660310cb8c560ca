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
    auto api = std::make_unique<OpenclDeviceApi>(&OpenclDevices::Global());
    OpenclDeviceApi* registered = api.get();  // lives until process exit once registered
    SORUN_RETURN_IF_ERROR_CTX(RegisterDeviceApi(std::move(api)), "RegisterOpenclBackend");
    SORUN_RETURN_IF_ERROR_CTX(RegisterOpenclTextureFunctions(registered), "RegisterOpenclBackend");
    device_api_registered = true;
  }
  if (!loader_registered) {
    SORUN_RETURN_IF_ERROR_CTX(RegisterBlobLoader(keys::kTypeKeyOpenCL,
                                                 [](BinaryReader& reader) {
                                                   return LoadOpenclModuleFromBinary(reader, PayloadGrammar::kDetect);
                                                 }),
                              "RegisterOpenclBackend");
    SORUN_RETURN_IF_ERROR_CTX(RegisterFfiBytesLoader(keys::kTypeKeyOpenCL, LoadOpenclModuleFromBinary),
                              "RegisterOpenclBackend");
    loader_registered = true;
  }
  return Status::Ok();
}

}  // namespace sorun
