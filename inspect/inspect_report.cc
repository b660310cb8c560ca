#include "inspect/inspect_report.h"

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

}  // namespace sorun
