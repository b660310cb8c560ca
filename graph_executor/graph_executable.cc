#include "graph_executor/graph_executable.h"

#include <utility>

#include "base/file_util.h"
#include "format/binary_reader.h"
#include "runtime/tensor_io.h"

namespace sorun {
namespace {

// The three-file path's kernel library: a module that provides kernels. A packed model given in its
// place (TVM accepts it; the zoo's OpenCL model ships its device module only that way) stands for the
// kernel library it imports: the factory root is dropped, so none of its functions can be reached by
// the graph. Anything else is refused.
StatusOr<Module> ThreeFileKernelLibrary(const Module& lib, const std::string& graph_json_path) {
  if (!lib.defined()) return InvalidArgument(graph_json_path + ": no kernel library module given");
  if (lib->provides_kernels()) return lib;
  if (ModuleNodeAs<GraphExecutorFactoryNode>(lib) != nullptr && !lib.imports().empty() &&
      lib.imports()[0]->provides_kernels()) {
    return lib.imports()[0];
  }
  return InvalidArgument("the kernel library given with " + graph_json_path + " is a '" + lib.type_key() +
                         "' module, not a kernel library (a shared library of kernels, or a packed model whose "
                         "factory imports one)");
}

StatusOr<std::unique_ptr<GraphExecutor>> CreateWithSignature(const ModelParts& parts,
                                                             const std::vector<DLDevice>& devices,
                                                             std::shared_ptr<ThreadPool> thread_pool,
                                                             std::shared_ptr<const ModelSignature> signature) {
  auto e = GraphExecutor::Create(parts.graph, parts.kernels, devices, parts.weights, std::move(thread_pool),
                                 std::move(signature));
  if (!e.ok() && !parts.graph_path.empty()) return std::move(e).status().Annotate(parts.graph_path);
  return e;
}

}  // namespace

StatusOr<GraphExecutorFactoryNode*> GetFactory(const Module& model) {
  auto* factory = ModuleNodeAs<GraphExecutorFactoryNode>(model);
  if (factory == nullptr) {
    return FailedPrecondition(std::string("the model's root module is '") +
                              (model.defined() ? model.type_key() : "null") +
                              "', not a GraphExecutorFactory: give the graph JSON and params separately "
                              "(three-file deployment)");
  }
  return factory;
}

StatusOr<std::unique_ptr<GraphExecutor>> CreateExecutor(const Module& model, const std::vector<DLDevice>& devices) {
  SORUN_ASSIGN_OR_RETURN(GraphExecutorFactoryNode * factory, GetFactory(model));
  return factory->CreateExecutor(devices);
}

StatusOr<ModelParts> PartsOfPackedModel(const Module& model) {
  SORUN_ASSIGN_OR_RETURN(GraphExecutorFactoryNode * factory, GetFactory(model));
  if (model.imports().empty()) {
    return FailedPrecondition("GraphExecutorFactory has no kernel library (it imports no module)");
  }
  ModelParts parts;
  parts.root = model;
  parts.graph = factory->graph();
  parts.kernels = model.imports()[0];
  parts.weights = factory->weights();
  return parts;
}

StatusOr<ModelParts> PartsOfThreeFiles(const std::string& graph_json_path, const Module& lib,
                                       const std::string& params_path) {
  ModelParts parts;
  parts.root = lib;
  parts.graph_path = graph_json_path;
  SORUN_ASSIGN_OR_RETURN(parts.kernels, ThreeFileKernelLibrary(lib, graph_json_path));
  SORUN_ASSIGN_OR_RETURN(std::string json, ReadFileToString(graph_json_path));
  auto spec = GraphSpec::Parse(json);
  if (!spec.ok()) return std::move(spec).status().Annotate(graph_json_path);
  if (!params_path.empty()) {
    SORUN_ASSIGN_OR_RETURN(ObjectPtr<MappedFile> file, MappedFile::Open(params_path));
    BinaryReader reader(file->data(), file->size(), params_path, 0, ObjectPtr<Object>(file));
    std::vector<uint64_t> offsets;
    auto params = ReadParamsDict(reader, /*allow_zero_copy=*/true, &offsets);
    if (!params.ok()) {
      Status s = std::move(params).status();
      // The reader's errors start with the path ("model.params byte 96: ..."); others (out of memory) do not.
      if (s.message().rfind(params_path, 0) != 0) s.Annotate(params_path);
      return s;
    }
    if (!reader.at_end()) return reader.Error(std::to_string(reader.remaining()) + " trailing bytes after the params");
    SORUN_ASSIGN_OR_RETURN(parts.weights, SharedWeights::Create(std::move(*params), params_path, std::move(offsets)));
    // Every name must be a graph input (a params file for another model is an error).
    SORUN_RETURN_IF_ERROR(parts.weights->CheckAgainstGraph(*spec, ParamsOutsideGraph::kRefused, graph_json_path));
  }
  parts.graph = std::make_shared<const GraphSpec>(std::move(*spec));
  return parts;
}

StatusOr<std::unique_ptr<GraphExecutor>> CreateExecutor(const ModelParts& parts, const std::vector<DLDevice>& devices,
                                                        std::shared_ptr<ThreadPool> thread_pool) {
  return CreateWithSignature(parts, devices, std::move(thread_pool), nullptr);
}

StatusOr<std::unique_ptr<GraphExecutor>> CreateExecutorFromFiles(const std::string& graph_json_path, const Module& lib,
                                                                 const std::string& params_path,
                                                                 const std::vector<DLDevice>& devices) {
  SORUN_ASSIGN_OR_RETURN(ModelParts parts, PartsOfThreeFiles(graph_json_path, lib, params_path));
  return CreateExecutor(parts, devices);
}

ObjectPtr<GraphExecutable> GraphExecutable::Make(ModelParts parts) {
  ObjectPtr<GraphExecutable> e = ObjectPtr<GraphExecutable>::FromRaw(new GraphExecutable());
  ExecutorCapabilities capabilities;
  capabilities.output_zero_copy = true;
  capabilities.params_files = true;
  e->Describe(GraphSignature(*parts.graph, parts.weights.get()), capabilities);
  e->parts_ = std::move(parts);
  return e;
}

StatusOr<std::unique_ptr<ModelExecutor>> GraphExecutable::NewExecutor(std::vector<DLDevice> devices,
                                                                      std::shared_ptr<ThreadPool> thread_pool) const {
  SORUN_ASSIGN_OR_RETURN(std::unique_ptr<GraphExecutor> e,
                         CreateWithSignature(parts_, devices, std::move(thread_pool), signature()));
  return std::unique_ptr<ModelExecutor>(std::move(e));
}

StatusOr<ObjectPtr<Executable>> GraphExecutableOfRoot(const Module& root, const std::string& path) {
  if (ModuleNodeAs<GraphExecutorFactoryNode>(root) == nullptr) return ObjectPtr<Executable>();
  auto parts = PartsOfPackedModel(root);
  if (!parts.ok()) return std::move(parts).status().Annotate(path);
  return ObjectPtr<Executable>(GraphExecutable::Make(std::move(*parts)));
}

StatusOr<ObjectPtr<Executable>> GraphExecutableOfFiles(const std::string& graph_json_path, const Module& library,
                                                       const std::string& params_path) {
  SORUN_ASSIGN_OR_RETURN(ModelParts parts, PartsOfThreeFiles(graph_json_path, library, params_path));
  return ObjectPtr<Executable>(GraphExecutable::Make(std::move(parts)));
}

}  // namespace sorun
