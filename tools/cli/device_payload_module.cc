#include "tools/cli/device_payload_module.h"

#include <algorithm>
#include <set>

#include "backends/opencl/opencl_module.h"
#include "runtime/registry_keys.h"

namespace sorun {
namespace cli {

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
  if (payload.fmt != "cl") return InvalidArgument("opencl module: fmt '" + payload.fmt + "' (only 'cl' source is packed)");
  if (payload.data.find_first_not_of(" \t\r\n") == std::string::npos) {
    return InvalidArgument("opencl module: the OpenCL source is empty");
  }
  if (payload.functions.empty()) return InvalidArgument("opencl module: no kernels");
  std::set<std::string> kernels;
  for (const auto& [name, info] : payload.functions) {
    if (!kernels.insert(name).second) return InvalidArgument("opencl module: kernel '" + name + "' listed twice");
    auto config = LaunchConfig::FromFunctionInfo(name, info);
    if (!config.ok()) return InvalidArgument("opencl module: " + config.status().message());
  }
  // SplitOpenclSource is a pure function of the text (no platform).
  auto pieces = SplitOpenclSource(payload.data);
  if (!pieces.ok()) return InvalidArgument("opencl module: " + pieces.status().message());
  const bool split = !pieces->empty() && !(*pieces)[0].kernel.empty();
  if (split) {
    std::set<std::string> piece_names;
    for (const OpenclSourcePiece& p : *pieces) piece_names.insert(p.kernel);
    for (const std::string& k : kernels) {
      if (!piece_names.count(k)) {
        return InvalidArgument("opencl module: kernel '" + k + "' has no '// Function: " + k + "' piece in the source");
      }
    }
    for (const std::string& p : piece_names) {
      if (!kernels.count(p)) {
        return InvalidArgument("opencl module: the source has a '// Function: " + p +
                               "' piece but the kernel description lists no kernel '" + p + "'");
      }
    }
  }
  return Module(ObjectPtr<ModuleNode>(MakeObject<DevicePayloadModuleNode>(keys::kTypeKeyOpenCL, std::move(payload))));
}

}  // namespace cli
}  // namespace sorun
