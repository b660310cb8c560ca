#include "api/model_loading.h"

namespace sorun {

StatusOr<Module> Load(const std::string& path, const LoadOptions& options) {
  SORUN_RETURN_IF_ERROR(Initialize());
  return LoadModule(path, options);
}

StatusOr<Module> LoadFromMemory(std::string_view bytes, const std::string& name, const LoadOptions& options) {
  SORUN_RETURN_IF_ERROR(Initialize());
  return LoadModuleFromMemory(bytes, name, options);
}

StatusOr<Module> LoadSystemLibModel(const std::string& prefix) {
  SORUN_RETURN_IF_ERROR(Initialize());
  return LoadSystemLib(prefix);
}

}  // namespace sorun
