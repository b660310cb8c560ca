#include "packer/device_payload_module.h"

#include "backends/opencl/opencl_module.h"
#include "runtime/registry_keys.h"

namespace sorun {

Status DevicePayloadModuleNode::SaveToBinary(BinaryWriter* writer) const {
  WriteDeviceModulePayload(payload_, writer);
  return Status::Ok();
}

std::vector<std::string> DevicePayloadModuleNode::ListFunctionNames() const {
  std::vector<std::string> names;
  for (const auto& kv : payload_.functions) names.push_back(kv.first);
  return names;
}

StatusOr<Module> MakeOpenclPayloadModule(DeviceModulePayload payload) {
  // The loader's own check (backends/opencl/opencl_module.h): a payload packed here loads there.
  SORUN_RETURN_IF_ERROR(PlanOpenclPayload(payload).status());
  // Pack policy on top: a device module without kernels would only be dead weight in the model.
  if (payload.functions.empty()) return InvalidArgument("opencl module: no kernels");
  return Module(ObjectPtr<ModuleNode>(MakeObject<DevicePayloadModuleNode>(keys::kTypeKeyOpenCL, std::move(payload))));
}

}  // namespace sorun
