// model_loading: the module-tree level under the public API, for in-tree tools and tests that need
// the module tree itself (the CLI's inspect/pack/verify, benches, fuzzers, the interop tools, tests).
// NOT part of the public surface: applications use api/sorun.h (sorun::Model / sorun::Executor),
// which is built on the function here. Includes api/sorun.h, so one include gives both levels. What a
// tree's root is made of is the executor kinds' business: graph_executor/graph_executable.h (a graph
// model's parts), relax/relax_module.h (a Relax VM executable).
//
// Ownership: a Module is reference-counted (the loaded library stays mapped while any module, executor
// or tensor of it lives). Thread-safe.
#ifndef SORUN_API_MODEL_LOADING_H_
#define SORUN_API_MODEL_LOADING_H_

#include <string>
#include <string_view>

#include "api/sorun.h"
#include "base/status.h"
#include "runtime/module.h"
#include "serialization/loader.h"
#include "serialization/system_lib_loader.h"

namespace sorun {

// Loads a model library (.so, or .tar where the tar loader is linked) after Initialize(): every
// executor kind and backend the program links is registered. See serialization/loader.h.
StatusOr<Module> Load(const std::string& path, const LoadOptions& options = {});
// The same from bytes in memory (serialization/loader.h LoadModuleFromMemory); `name` stands for the path.
StatusOr<Module> LoadFromMemory(std::string_view bytes, const std::string& name, const LoadOptions& options = {});
// The module tree of the system-lib model registered under `prefix` (serialization/system_lib_loader.h).
StatusOr<Module> LoadSystemLibModel(const std::string& prefix = "");

}  // namespace sorun

#endif  // SORUN_API_MODEL_LOADING_H_
