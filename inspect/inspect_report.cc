#include "inspect/inspect_report.h"

#include "runtime/device_module_kind.h"

namespace sorun {

const char* ArtifactKindName(ArtifactKind kind) {
  switch (kind) {
    case ArtifactKind::kPackedModel: return "packed_model";
    case ArtifactKind::kKernelLibrary: return "kernel_library";
    case ArtifactKind::kTvmFfi: return "tvm_ffi";
    case ArtifactKind::kRelaxExport: return "relax_export";
  }
  return "unknown";
}

std::string InspectReport::format() const {
  if (kind != ArtifactKind::kPackedModel && kind != ArtifactKind::kRelaxExport) return "none";
  return has_import_tree ? "import_tree" : "legacy";
}

std::string InspectReport::DevicesNeededNames() const {
  std::string names;
  for (DLDeviceType type : devices_needed) names += (names.empty() ? "" : ", ") + std::string(DeviceTypeName(type));
  return names;
}

std::string InspectReport::DescribeDevicesNeeded() const {
  std::string modules;
  for (DLDeviceType type : devices_needed) {
    if (type == kDLCPU) continue;
    const std::string name = DeviceModuleName(type);
    modules += std::string(modules.empty() ? "" : " and ") + (name[0] == 'O' ? "an " : "a ") + name;
  }
  return DevicesNeededNames() + (modules.empty() ? " (no device module)" : " (its kernels are in " + modules + ")");
}

}  // namespace sorun
