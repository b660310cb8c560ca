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

std::string InspectReport::DescribeDevicesNeeded() const {
  std::string types, modules;
  for (size_t i = 0; i < devices_needed.size(); ++i) {
    const DLDeviceType type = devices_needed[i];
    types += (i == 0 ? "" : ", ") + std::string(DeviceTypeName(type));
    if (type == kDLCPU) continue;
    const std::string name = DeviceModuleName(type);
    modules += std::string(modules.empty() ? "" : " and ") + (name[0] == 'O' ? "an " : "a ") + name;
  }
  return types + (modules.empty() ? " (no device module)" : " (its kernels are in " + modules + ")");
}

}  // namespace sorun
