#include "api/model_loading.h"

#include <utility>

namespace sorun {

StatusOr<Module> Load(const std::string& path, const LoadOptions& options) {
  SORUN_RETURN_IF_ERROR(Initialize());
  return LoadModule(path, options);
}

StatusOr<std::unique_ptr<GraphExecutor>> CreateExecutorFromFiles(const std::string& graph_json_path,
                                                                 const std::string& library_path,
                                                                 const std::string& params_path,
                                                                 const std::vector<DLDevice>& devices,
                                                                 const LoadOptions& options) {
  SORUN_ASSIGN_OR_RETURN(Module lib, Load(library_path, options));
  return CreateExecutorFromFiles(graph_json_path, lib, params_path, devices);
}

}  // namespace sorun
