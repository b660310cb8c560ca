// model_loading: the module-tree level under the public API, for in-tree tools and tests that need
// the module tree itself (the CLI's inspect/pack/verify, benches, fuzzers, the interop tools, tests).
// NOT part of the public surface: applications use api/sorun.h (sorun::Model / sorun::Executor),
// which is built on the functions here; a graph model's parts are graph_executor/graph_executable.h's.
// Includes api/sorun.h, so one include gives both levels.
//
// Ownership: a Module is reference-counted (the loaded library stays mapped while any module, executor
// or tensor of it lives). All functions are thread-safe; each GraphExecutor is single-threaded
// (graph_executor/graph_executor.h).
#ifndef SORUN_API_MODEL_LOADING_H_
#define SORUN_API_MODEL_LOADING_H_

#include <memory>
#include <string>
#include <vector>

#include "api/sorun.h"
#include "base/status.h"
#include "graph_executor/graph_executable.h"
#include "runtime/data_type.h"
#include "runtime/module.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"
#include "serialization/loader.h"

namespace sorun {

// Loads a model library (.so or .tar) after Initialize(). See serialization/loader.h.
StatusOr<Module> Load(const std::string& path, const LoadOptions& options = {});

// The three-file deployment: graph JSON + kernel library + params file. The library is loaded with
// `options`; the params file is mapped and its tensors are used in place when 64-byte aligned (as
// sorun writes them).
StatusOr<std::unique_ptr<GraphExecutor>> CreateExecutorFromFiles(const std::string& graph_json_path,
                                                                 const std::string& library_path,
                                                                 const std::string& params_path,
                                                                 const std::vector<DLDevice>& devices,
                                                                 const LoadOptions& options = {});

}  // namespace sorun

#endif  // SORUN_API_MODEL_LOADING_H_
