// FunctionRegistry: the process-wide table of named PackedFuncs (TVM's global registry).
//
// Generated host code finds runtime services here through TVMBackendGetFuncFromEnv (e.g.
// "__tvm_set_device"); the loader finds blob loaders ("runtime.module.loadbinary_<key>"); applications
// register their own functions and module loaders. Built-ins are registered explicitly: the core ones
// when Global() is first used, backends and loaders by their Register*() functions (api/sorun.h calls
// them all). Thread-safe.
#ifndef SORUN_RUNTIME_FUNCTION_REGISTRY_H_
#define SORUN_RUNTIME_FUNCTION_REGISTRY_H_

#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "runtime/packed_func.h"

namespace sorun {

class FunctionRegistry {
 public:
  FunctionRegistry() = default;

  // The process-wide registry, with the core built-ins registered.
  static FunctionRegistry& Global();

  // Registers `f` as `name`. AlreadyExists unless `allow_override`.
  Status Register(std::string name, PackedFunc f, bool allow_override = false);
  // The function or a null PackedFunc.
  PackedFunc Get(std::string_view name) const;
  bool Remove(std::string_view name);
  // Sorted names starting with `prefix`.
  std::vector<std::string> ListNames(std::string_view prefix = "") const;

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, PackedFunc> functions_;
};

// Registers the core built-ins ("__tvm_set_device") into `registry`. Idempotent. (TVM's sort helpers,
// runtime/contrib/sort.h, are registered by the executors' registrations.)
Status RegisterCoreFunctions(FunctionRegistry& registry);

}  // namespace sorun

#endif  // SORUN_RUNTIME_FUNCTION_REGISTRY_H_
