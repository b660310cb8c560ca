#include "packer/embedded_headers.h"

#include <cstring>
#include <filesystem>

#include "base/file_util.h"

namespace sorun {

const std::vector<EmbeddedHeader>& EmbeddedHeaders() {
  static const std::vector<EmbeddedHeader> headers = {
      {"runtime/c_runtime_api.h", kEmbeddedCRuntimeApiH},
      {"dlpack/dlpack.h", kEmbeddedDlpackH},
  };
  return headers;
}

Status WriteEmbeddedHeaders(const std::string& directory) {
  for (const EmbeddedHeader& h : EmbeddedHeaders()) {
    std::filesystem::path path = std::filesystem::path(directory) / h.relative_path;
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) return FailedPrecondition("cannot create " + path.parent_path().string() + ": " + ec.message());
    SORUN_RETURN_IF_ERROR(WriteFileBytes(path.string(), std::string_view(h.contents, std::strlen(h.contents))));
  }
  return Status::Ok();
}

}  // namespace sorun
