#include "runtime/device_module_kind.h"

#include <algorithm>

#include "runtime/data_type.h"
#include "runtime/registry_keys.h"

namespace sorun {

std::optional<DLDeviceType> DeviceTypeOfModule(std::string_view type_key) {
  if (type_key == keys::kTypeKeyCuda) return kDLCUDA;
  if (type_key == keys::kTypeKeyOpenCL) return kDLOpenCL;
  return std::nullopt;
}

std::vector<DLDeviceType> DeviceTypesOfModules(const std::vector<std::string_view>& type_keys) {
  std::vector<DLDeviceType> out;
  for (std::string_view key : type_keys) {
    std::optional<DLDeviceType> type = DeviceTypeOfModule(key);
    if (type.has_value() && std::find(out.begin(), out.end(), *type) == out.end()) out.push_back(*type);
  }
  if (out.empty()) out.push_back(kDLCPU);
  return out;
}

std::string DeviceModuleName(DLDeviceType type) {
  switch (type) {
    case kDLCUDA: return "CUDA module";
    case kDLOpenCL: return "OpenCL module";
    default: return std::string(DeviceTypeName(type)) + " module";
  }
}

}  // namespace sorun
