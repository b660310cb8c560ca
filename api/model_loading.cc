#include "api/model_loading.h"

namespace sorun {

StatusOr<Module> Load(const std::string& path, const LoadOptions& options) {
  SORUN_RETURN_IF_ERROR(Initialize());
  return LoadModule(path, options);
}

}  // namespace sorun
