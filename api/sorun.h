// sorun: the public entry point for applications. One include, one Bazel target (//api:sorun, or
// //api:sorun_cpu without the OpenCL/CUDA backends).
//
//   sorun::Initialize();                                   // optional: Load() calls it
//   auto model = sorun::Load("model.so");                  // one file: graph + weights + kernels
//   auto exec = sorun::CreateExecutor(*model, {sorun::CpuDevice()});
//   (*exec)->SetInput("data", input);
//   (*exec)->Run();
//   auto out = (*exec)->GetOutput(0);
//
// Errors are sorun::Status values (base/status.h); nothing throws or aborts. Thread-safety: see
// docs/threading.md (loaded models and factories are shared freely; each executor is single-threaded).
#ifndef SORUN_API_SORUN_H_
#define SORUN_API_SORUN_H_

#include <memory>
#include <string>
#include <vector>

#include "graph_executor/factory_module.h"
#include "graph_executor/graph_executor.h"
#include "runtime/data_type.h"
#include "runtime/module.h"
#include "base/status.h"
#include "runtime/tensor.h"
#include "serialization/loader.h"

namespace sorun {

// Registers every backend and module loader linked into this program: the graph executor and, in
// //api:sorun, OpenCL and CUDA. Idempotent and thread-safe. A backend whose driver is absent still
// registers (its devices report "not present" when used).
Status Initialize();

// Loads a model library (.so or .tar). See serialization/loader.h.
StatusOr<Module> Load(const std::string& path, const LoadOptions& options = {});

// The GraphExecutorFactory at the root of a loaded model, or FailedPrecondition naming what the
// root is instead.
StatusOr<GraphExecutorFactoryNode*> GetFactory(const Module& model);

// An executor for a loaded model on `devices` (the first is the default device).
StatusOr<std::unique_ptr<GraphExecutor>> CreateExecutor(const Module& model, const std::vector<DLDevice>& devices);

// The three-file deployment: graph JSON + kernel library + params file. The library is loaded with
// `options`; the params file is mapped and its tensors are used in place when 64-byte aligned (as
// sorun writes them).
StatusOr<std::unique_ptr<GraphExecutor>> CreateExecutorFromFiles(const std::string& graph_json_path,
                                                                 const std::string& library_path,
                                                                 const std::string& params_path,
                                                                 const std::vector<DLDevice>& devices,
                                                                 const LoadOptions& options = {});

// The same with the kernel library already loaded (`library`, e.g. from Load()).
StatusOr<std::unique_ptr<GraphExecutor>> CreateExecutorFromFiles(const std::string& graph_json_path,
                                                                 const Module& library,
                                                                 const std::string& params_path,
                                                                 const std::vector<DLDevice>& devices);

}  // namespace sorun

#endif  // SORUN_API_SORUN_H_
