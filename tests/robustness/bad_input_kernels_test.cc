// Bad-input catalogue, class 1: graphs naming functions that are not kernels of the library.
// Each case runs through BadInputCatalogueTest (tests/robustness/catalogue.h).
// The rule: runtime/module.h "Kernels" and runtime/registry_keys.h (IsReservedAbiSymbol).
#include <memory>
#include <string>
#include <vector>

#include "base/subprocess.h"
#include "format/binary_writer.h"
#include "graph_executor/graph_builder.h"
#include "packer/exporter.h"
#include "runtime/tensor_io.h"
#include "tests/robustness/catalogue.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace catalogue {
namespace {

// The good model's graph with node 3 'fc' calling `func` instead of sorun_dense_bias_relu.
std::string GraphCalling(const std::string& func) {
  GraphBuilder b;
  int x = b.Input("data", {1, 8});
  int h = b.Op(func, {x, b.Input("w", {4, 8}), b.Input("b", {4})}, {1, 4}, Float32(), "fc");
  b.Output(b.Op("sorun_softmax", {h}, {1, 4}, Float32(), "softmax"));
  auto json = b.BuildJson();
  return json.ok() ? *json : std::string();
}

// Loads `path` and creates a CPU executor.
Status LoadAndCreate(const std::string& path) {
  auto model = Load(path);
  if (!model.ok()) return model.status();
  return CreateExecutor(*model, {CpuDevice()}).status();
}

// A packed model whose graph calls `func` (built when the case runs).
Status ModelCalling(const std::string& func) {
  CatalogueEnv& env = CatalogueEnv::Get();
  return LoadAndCreate(env.WithFactory(GraphCalling(func), env.params, "calls_" + func + ".so"));
}

// The factory module's blob entry (type key + payload) for the good graph and params, written as if it
// started at blob offset 16 (after the length prefix and the module count).
std::string FactoryEntry() {
  CatalogueEnv& env = CatalogueEnv::Get();
  BinaryWriter w(16);
  w.WriteString("GraphExecutorFactory");
  w.WriteString(env.good_json);
  EXPECT_TRUE(WriteNamedTensorSection(env.params, &w, true, true).ok());
  w.WriteString("default");
  return w.bytes();
}

std::vector<CatalogueCase> KernelsCases() {
  std::vector<CatalogueCase> cases;
  auto add = [&](std::string name, std::function<Status()> run, std::string expected) {
    cases.push_back(CatalogueCase{std::move(name), std::move(run), std::move(expected)});
  };
  // Functions and data of the library's dependencies (libc): dlsym finds them, the rule does not.
  for (const char* f : {"system", "abort", "exit", "free", "malloc", "puts", "stdout"}) {
    const std::string name = f;
    add(
        "graph calls libc's " + name, [name] { return ModelCalling(name); },
        "node 3 ('fc'): kernel function '" + name + "' is not a function defined by ");
  }
  // Symbols of the library itself that are not functions.
  add(
      "graph calls an exported data object",
      [] {
        CatalogueEnv& env = CatalogueEnv::Get();
        const std::string src = env.Path("table.c");
        testing::WriteFileOrDie(src, "const float sorun_lookup_table[16] = {1.0f};\n");
        const std::string payload = CatalogueEnv::U64(3) + FactoryEntry() + CatalogueEnv::Str("_lib") +
                                    CatalogueEnv::Str("_import_tree") + CatalogueEnv::U64(3) + CatalogueEnv::U64(0) +
                                    CatalogueEnv::U64(1) + CatalogueEnv::U64(1) + CatalogueEnv::U64(1) +
                                    CatalogueEnv::U64(1);
        const std::string path = env.Path("data_object.so");
        auto linked = LinkLibraryWithBlob(&payload, {HostCode{{env.kernels_o, src}, {}, {}}}, path);
        if (!linked.ok()) return linked.status();
        auto model = Load(path);
        if (!model.ok()) return model.status();
        auto* factory = dynamic_cast<GraphExecutorFactoryNode*>(model->get());
        if (factory == nullptr) return Internal("not a factory");
        auto spec = GraphSpec::Parse(GraphCalling("sorun_lookup_table"));
        if (!spec.ok()) return spec.status();
        return GraphExecutor::Create(std::make_shared<const GraphSpec>(std::move(*spec)), factory->imports()[0],
                                     {CpuDevice()}, factory->weights())
            .status();
      },
      "node 3 ('fc'): kernel function 'sorun_lookup_table' is a data object of ");
  // Names of the TVM / sorun ABI, whatever they are in the file.
  for (const char* f : {"__tvm_dev_mblob", "__tvm_module_ctx", "__TVMFuncCall", "__TVMBackendAllocWorkspace",
                        "__sorun_blob_checksum", "_lookup_linked_param", "_init", "_fini"}) {
    const std::string name = f;
    add(
        "graph calls the ABI symbol " + name, [name] { return ModelCalling(name); },
        "node 3 ('fc'): kernel function '" + name + "' is reserved by the TVM ABI");
  }
  // Functions of executor modules are never kernels.
  add(
      "graph calls the factory's own function",
      [] {
        auto model = Load(CatalogueEnv::Get().good_so);
        if (!model.ok()) return model.status();
        auto spec = GraphSpec::Parse(GraphCalling("get_graph_json"));
        if (!spec.ok()) return spec.status();
        // The factory itself handed over as the kernel library (its imports are searched, its functions not).
        return GraphExecutor::Create(std::make_shared<const GraphSpec>(std::move(*spec)), *model, {CpuDevice()},
                                     dynamic_cast<GraphExecutorFactoryNode*>(model->get())->weights())
            .status();
      },
      "node 3 ('fc'): kernel function 'get_graph_json' is provided by a GraphExecutorFactory module, which has no "
      "kernels");
  add(
      "graph calls the factory's function through a packed model given as the three-file library",
      [] {
        CatalogueEnv& env = CatalogueEnv::Get();
        const std::string json = env.Path("graph.json");
        testing::WriteFileOrDie(json, GraphCalling("get_graph_json"));
        SORUN_ASSIGN_OR_RETURN(Module library, Load(env.good_so));
        return CreateExecutorFromFiles(json, library, "", {CpuDevice()}).status();
      },
      "node 3 ('fc'): kernel function 'get_graph_json' is not in the kernel library or its imports");
  // Tree rule: no executor module below "_lib".
  add(
      "factory imported by the kernel library",
      [] {
        CatalogueEnv& env = CatalogueEnv::Get();
        const std::string payload = CatalogueEnv::U64(3) + CatalogueEnv::Str("_lib") + FactoryEntry() +
                                    CatalogueEnv::Str("_import_tree") + CatalogueEnv::U64(3) + CatalogueEnv::U64(0) +
                                    CatalogueEnv::U64(1) + CatalogueEnv::U64(1) + CatalogueEnv::U64(1) +
                                    CatalogueEnv::U64(1);
        return LoadStatus(env.WithBlob(payload, "factory_below_lib.so"));
      },
      "module 1 ('GraphExecutorFactory') is imported below the kernel library (_lib, module 0)");
  add(
      "factory in a blob without an import tree",
      [] {
        CatalogueEnv& env = CatalogueEnv::Get();
        return LoadStatus(env.WithBlob(CatalogueEnv::U64(1) + FactoryEntry(), "factory_legacy.so"));
      },
      "module 0 ('GraphExecutorFactory') in a blob without _import_tree");
  return cases;
}

SORUN_CATALOGUE_CASES(Kernels, KernelsCases());

}  // namespace
}  // namespace catalogue
}  // namespace sorun
