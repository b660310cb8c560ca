// The kernel rule (runtime/module.h "Kernels", LibraryModuleNode::GetKernelFunction): a graph node's
// func_name reaches only functions defined by the kernel library itself or device-module kernels,
// never libc, data, reserved ABI symbols or functions of executor modules; a factory below "_lib" is
// refused at load; a packed model given as the three-file kernel library stands for its kernel library. Everything runs
// against real libraries: testdata/kernels/libabi_test_kernels.so, the zoo's mlp model, and small
// libraries compiled here with the system compiler.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "api/model_loading.h"
#include "format/binary_writer.h"
#include "graph_executor/graph_builder.h"
#include "graph_executor/graph_executable.h"
#include "packer/exporter.h"
#include "runtime/data_type.h"
#include "runtime/library_module.h"
#include "runtime/registry_keys.h"
#include "runtime/tensor_io.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

const char kAbiKernels[] = "testdata/kernels/libabi_test_kernels.so";

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Module OpenLibrary(const std::string& path) {
  auto opened = LibraryModuleNode::Open(path);
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  return opened.ok() ? Module(ObjectPtr<ModuleNode>(opened->module)) : Module();
}

// data[4] -> node 1 'fc' calling `func` -> output.
std::string GraphCalling(const std::string& func) {
  GraphBuilder b;
  int x = b.Input("data", {4});
  b.Output(b.Op(func, {x}, {4}, Float32(), "fc"));
  auto json = b.BuildJson();
  EXPECT_TRUE(json.ok()) << json.status().ToString();
  return json.ok() ? *json : std::string();
}

Status CreateWith(const std::string& func, const Module& lib) {
  auto spec = GraphSpec::Parse(GraphCalling(func));
  if (!spec.ok()) return spec.status();
  return GraphExecutor::Create(std::make_shared<const GraphSpec>(std::move(*spec)), lib, {CpuDevice()}, {}).status();
}

class KernelLookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Initialize().ok());
    path_ = testing::Runfile(kAbiKernels);
    lib_ = OpenLibrary(path_);
    ASSERT_TRUE(lib_.defined());
  }
  std::string path_;
  Module lib_;
};

TEST_F(KernelLookupTest, FindsTheLibrarysOwnKernels) {
  auto add_one = lib_.GetKernel("add_one");
  ASSERT_TRUE(add_one.ok()) << add_one.status().ToString();
  EXPECT_NE(add_one->get()->c_function(), nullptr);
  // The LLVM-form entry alias resolves to the function it names.
  auto main = lib_.GetKernel(keys::kSymbolModuleMain);
  ASSERT_TRUE(main.ok()) << main.status().ToString();
  EXPECT_EQ(main->name(), "add_one");
  EXPECT_EQ(main->get()->c_function(), add_one->get()->c_function());
}

TEST_F(KernelLookupTest, RefusesFunctionsAndDataOfDependencies) {
  for (const char* name : {"system", "abort", "exit", "free", "malloc", "puts", "memcpy", "stdout", "environ"}) {
    auto k = lib_.GetKernel(name);
    ASSERT_FALSE(k.ok()) << name << " was returned as a kernel";
    EXPECT_EQ(k.status().code(), StatusCode::kInvalidArgument) << name;
    EXPECT_TRUE(Contains(k.status().message(), std::string("kernel function '") + name +
                                                   "' is not a function defined by " + path_ + " (it resolves into "))
        << k.status().message();
    // libc's file (libasan's under ASan, which interposes malloc, puts...), never the library itself.
    EXPECT_TRUE(Contains(k.status().message(), "libc.so.6)") || Contains(k.status().message(), "libasan"))
        << k.status().message();
  }
}

TEST_F(KernelLookupTest, RefusesDataSymbolsOfTheLibrary) {
  auto marker = lib_.GetKernel("abi_test_system_lib_marker");
  ASSERT_FALSE(marker.ok());
  EXPECT_EQ(marker.status().message(),
            "kernel function 'abi_test_system_lib_marker' is a data object of " + path_ + ", not a function");
  // The linker's markers: x86-64's ld exports them as data of the library ("not a function"); aarch64's
  // does not export them at all ("not in the kernel library"). Refused either way.
  for (const char* name : {"_end", "_edata", "__bss_start"}) {
    auto k = lib_.GetKernel(name);
    ASSERT_FALSE(k.ok()) << name;
    EXPECT_TRUE(Contains(k.status().message(), "not a function") ||
                Contains(k.status().message(), "is not in the kernel library"))
        << k.status().message();
  }
}

TEST_F(KernelLookupTest, RefusesReservedAbiNames) {
  for (const char* name : {"__tvm_dev_mblob", "__tvm_module_ctx", "__TVMFuncCall", "__TVMBackendAllocWorkspace",
                           "__sorun_blob_checksum", "_lookup_linked_param", "_init", "_fini", "__tvm_set_device"}) {
    auto k = lib_.GetKernel(name);
    ASSERT_FALSE(k.ok()) << name;
    EXPECT_EQ(k.status().message(), std::string("kernel function '") + name +
                                        "' is reserved by the TVM ABI (a runtime symbol of the kernel library, "
                                        "never a kernel)");
  }
}

TEST_F(KernelLookupTest, UnknownNameIsNotFound) {
  auto k = lib_.GetKernel("no_such_kernel");
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(k.status().message(), "kernel function 'no_such_kernel' is not in the kernel library or its imports");
}

TEST_F(KernelLookupTest, GetFunctionStillServesTheRuntimesOwnLookups) {
  // Non-kernel lookups by fixed names stay available to the runtime (not to graphs).
  PackedFunc main = lib_.GetFunction(keys::kSymbolModuleMain);
  ASSERT_TRUE(main.defined());
  EXPECT_EQ(main.name(), "add_one");
}

TEST_F(KernelLookupTest, ExecutorCreationNamesTheNodeAndTheSymbol) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"system", "is not a function defined by " + path_ + " (it resolves into "},
      {"abort", "(it resolves into "},
      {"exit", "(it resolves into "},
      {"free", "(it resolves into "},
      {"malloc", "(it resolves into "},
      {"puts", "(it resolves into "},
      {"abi_test_system_lib_marker", "is a data object of " + path_ + ", not a function"},
      {"__tvm_dev_mblob", "is reserved by the TVM ABI"},
      {"__tvm_module_ctx", "is reserved by the TVM ABI"},
      {"__TVMFuncCall", "is reserved by the TVM ABI"},
  };
  for (const auto& [name, why] : cases) {
    Status s = CreateWith(name, lib_);
    ASSERT_FALSE(s.ok()) << name << " was accepted";
    EXPECT_TRUE(Contains(s.message(), "node 1 ('fc'): kernel function '" + name + "' ")) << s.message();
    EXPECT_TRUE(Contains(s.message(), why)) << s.message();
  }
  EXPECT_TRUE(CreateWith("add_one", lib_).ok());
}

TEST_F(KernelLookupTest, FunctionsOfAFactoryAreNeverKernels) {
  // A factory used directly as the kernel library: its own functions are refused by name and type,
  // while the kernels of the library it imports stay reachable (TVM's lookup order).
  auto factory = MakeGraphExecutorFactory(GraphCalling("add_one"), {}, lib_);
  ASSERT_TRUE(factory.ok()) << factory.status().ToString();
  for (const char* name : {"default", "get_graph_json", "get_graph_params"}) {
    Status s = CreateWith(name, *factory);
    ASSERT_FALSE(s.ok()) << name;
    EXPECT_EQ(s.message(), std::string("node 1 ('fc'): kernel function '") + name +
                               "' is provided by a GraphExecutorFactory module, which has no kernels");
  }
  EXPECT_TRUE(CreateWith("add_one", *factory).ok());
}

TEST(ReservedAbiSymbolTest, CoversTheAbiAndNothingElse) {
  for (const char* name :
       {"__tvm_module_ctx", "__tvm_dev_mblob", "__tvm_ffi_library_bin", "__TVMFuncCall", "__TVMAPISetLastError",
        "__sorun_blob_checksum", "__sorun_anything", "_init", "_fini", "_lookup_linked_param"}) {
    EXPECT_TRUE(keys::IsReservedAbiSymbol(name)) << name;
  }
  for (const char* name : {"__tvm_main__", "add_one", "tvmgen_default_fused_add", "_tvm_x", "__tv", "", "init"}) {
    EXPECT_FALSE(keys::IsReservedAbiSymbol(name)) << name;
  }
  EXPECT_TRUE(keys::IsGraphExecutorTypeKey("GraphExecutorFactory"));
  EXPECT_TRUE(keys::IsGraphExecutorTypeKey("GraphRuntimeFactory"));
  EXPECT_TRUE(keys::IsGraphExecutorTypeKey("GraphExecutor"));
  EXPECT_FALSE(keys::IsGraphExecutorTypeKey("opencl"));
  EXPECT_FALSE(keys::IsGraphExecutorTypeKey("_lib"));
}

// Libraries compiled here: an IFUNC kernel, a data table, a TLS variable, a reserved-named function
// and an LLVM-style __tvm_main__ naming the data table.
class CompiledLibraryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(Initialize().ok());
    dir_ = new std::string(testing::MakeTempDir("kernel_lookup"));
    const std::string src = *dir_ + "/own.c";
    testing::WriteFileOrDie(src, R"(#include "runtime/c_runtime_api.h"
const int own_table[4] = {1, 2, 3, 4};
__thread int own_tls_counter = 0;
const char __tvm_main__[] = "own_table";
static int Impl(TVMValue* a, int* c, int n, TVMValue* r, int* rc, void* h) { return n == 2 ? 0 : -1; }
static void* ResolveIfuncKernel(void) { return (void*)Impl; }
int ifunc_kernel(TVMValue* a, int* c, int n, TVMValue* r, int* rc, void* h) __attribute__((ifunc("ResolveIfuncKernel")));
int __sorun_helper(TVMValue* a, int* c, int n, TVMValue* r, int* rc, void* h) { return 0; }
static int hidden_kernel(TVMValue* a, int* c, int n, TVMValue* r, int* rc, void* h) { return 0; }
int (*keep_hidden)(TVMValue*, int*, int, TVMValue*, int*, void*) = hidden_kernel;
)");
    path_ = new std::string(*dir_ + "/libown.so");
    auto linked = LinkLibraryWithBlob(nullptr, {HostCode{{src}, {testing::KernelIncludeFlag()}, {}}}, *path_);
    ASSERT_TRUE(linked.ok()) << linked.status().ToString();
  }
  void SetUp() override {
    lib_ = OpenLibrary(*path_);
    ASSERT_TRUE(lib_.defined());
  }
  static std::string* dir_;
  static std::string* path_;
  Module lib_;
};
std::string* CompiledLibraryTest::dir_ = nullptr;
std::string* CompiledLibraryTest::path_ = nullptr;

TEST_F(CompiledLibraryTest, AcceptsAnIfuncKernel) {
  auto k = lib_.GetKernel("ifunc_kernel");
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  auto t = Tensor::Empty({4}, Float32(), CpuDevice());
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE((*k)(*t, *t).ok());  // Impl: two arguments -> success
  EXPECT_FALSE((*k)(*t).ok());
}

TEST_F(CompiledLibraryTest, RefusesDataTlsReservedAndHiddenSymbols) {
  auto table = lib_.GetKernel("own_table");
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.status().message(), "kernel function 'own_table' is a data object of " + *path_ + ", not a function");
  auto tls = lib_.GetKernel("own_tls_counter");
  ASSERT_FALSE(tls.ok());
  EXPECT_EQ(tls.status().message(), "kernel function 'own_tls_counter' is not a function of " + *path_ +
                                        " (its address lies in no loaded file: a thread-local variable or an "
                                        "absolute symbol)");
  EXPECT_TRUE(Contains(lib_.GetKernel("__sorun_helper").status().message(), "is reserved by the TVM ABI"));
  EXPECT_EQ(lib_.GetKernel("hidden_kernel").status().code(), StatusCode::kNotFound);
  auto pointer = lib_.GetKernel("keep_hidden");
  ASSERT_FALSE(pointer.ok());
  EXPECT_TRUE(Contains(pointer.status().message(), "is a data object")) << pointer.status().message();
}

TEST_F(CompiledLibraryTest, EntryAliasMustNameAKernel) {
  auto main = lib_.GetKernel(keys::kSymbolModuleMain);
  ASSERT_FALSE(main.ok());
  EXPECT_TRUE(Contains(main.status().message(),
                       "kernel function '__tvm_main__' names its entry 'own_table': kernel function 'own_table' "
                       "is a data object of " +
                           *path_ + ", not a function"))
      << main.status().message();
}

// Blob-level tree rule and the three-file path, through the public API.
class KernelTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Initialize().ok());
    dir_ = testing::MakeTempDir("kernel_tree");
  }
  // A factory payload (graph calling sorun_relu, no params) as the blob format writes it.
  static void WriteFactory(BinaryWriter* w) {
    GraphBuilder b;
    int x = b.Input("data", {4});
    b.Output(b.Op("sorun_relu", {x}, {4}, Float32(), "relu"));
    auto json = b.BuildJson();
    ASSERT_TRUE(json.ok());
    w->WriteString("GraphExecutorFactory");
    w->WriteString(*json);
    ASSERT_TRUE(WriteNamedTensorSection({}, w, true, true).ok());
    w->WriteString("default");
  }
  std::string Link(const std::string& payload, const std::string& name) {
    std::string path = dir_ + "/" + name;
    auto linked = LinkLibraryWithBlob(&payload,
                                      {HostCode{{testing::Runfile("testdata/kernels/nn_kernels.c")},
                                                {testing::KernelIncludeFlag(), "-D_GNU_SOURCE"},
                                                {"-lm"}}},
                                      path);
    EXPECT_TRUE(linked.ok()) << linked.status().ToString();
    return path;
  }
  std::string dir_;
};

TEST_F(KernelTreeTest, FactoryBelowTheKernelLibraryIsRefusedAtLoad) {
  // Module 0 "_lib" imports module 1, a factory.
  BinaryWriter w(8);
  w.WriteU64(3);
  w.WriteString("_lib");
  WriteFactory(&w);
  w.WriteString("_import_tree");
  w.WriteU64Vector({0, 1, 1});
  w.WriteU64Vector({1});
  auto model = Load(Link(w.bytes(), "factory_below_lib.so"));
  ASSERT_FALSE(model.ok());
  EXPECT_TRUE(Contains(model.status().message(),
                       "module 1 ('GraphExecutorFactory') is imported below the kernel library (_lib, module 0)"))
      << model.status().message();
}

TEST_F(KernelTreeTest, FactoryTwoLevelsBelowTheKernelLibraryIsRefused) {
  // factory(0) -> _lib(1) -> factory(2): the root factory is fine, the one below _lib is not.
  BinaryWriter w(8);
  w.WriteU64(4);
  WriteFactory(&w);
  w.WriteString("_lib");
  WriteFactory(&w);
  w.WriteString("_import_tree");
  w.WriteU64Vector({0, 1, 2, 2});
  w.WriteU64Vector({1, 2});
  auto model = Load(Link(w.bytes(), "factory_deep.so"));
  ASSERT_FALSE(model.ok());
  EXPECT_TRUE(Contains(model.status().message(),
                       "module 2 ('GraphExecutorFactory') is imported below the kernel "
                       "library (_lib, module 1)"))
      << model.status().message();
}

TEST_F(KernelTreeTest, FactoryInALegacyBlobIsRefused) {
  // No _import_tree: the kernel library would import the factory.
  BinaryWriter w(8);
  w.WriteU64(1);
  WriteFactory(&w);
  auto model = Load(Link(w.bytes(), "factory_legacy.so"));
  ASSERT_FALSE(model.ok());
  EXPECT_TRUE(Contains(model.status().message(), "module 0 ('GraphExecutorFactory') in a blob without _import_tree"))
      << model.status().message();
}

TEST_F(KernelTreeTest, PackedModelAsThreeFileLibraryStandsForItsKernelLibraryOnly) {
  auto loaded = Load(testing::Runfile("testdata/models/mlp.so"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Module so = *loaded;
  // Accepted (as TVM does): the kernels are those of the library the factory imports...
  auto three = CreateExecutorFromFiles(testing::Runfile("testdata/models/mlp.json"), so,
                                       testing::Runfile("testdata/models/mlp.params"), {CpuDevice()});
  EXPECT_TRUE(three.ok()) << three.status().ToString();
  // ...and the factory's own functions are not reachable from the graph.
  for (const char* name : {"get_graph_json", "default", "remove_params"}) {
    const std::string json = dir_ + "/calls_" + name + ".json";
    testing::WriteFileOrDie(json, GraphCalling(name));
    auto e = CreateExecutorFromFiles(json, so, "", {CpuDevice()});
    ASSERT_FALSE(e.ok()) << name;
    EXPECT_EQ(e.status().message(),
              json + ": node 1 ('fc'): kernel function '" + name + "' is not in the kernel library or its imports");
  }
  // A module that neither provides kernels nor is a packed model is refused.
  auto factory = MakeGraphExecutorFactory(GraphCalling("sorun_relu"), {}, Module());
  ASSERT_TRUE(factory.ok()) << factory.status().ToString();
  const std::string json = dir_ + "/relu.json";
  testing::WriteFileOrDie(json, GraphCalling("sorun_relu"));
  auto orphan = CreateExecutorFromFiles(json, *factory, "", {CpuDevice()});
  ASSERT_FALSE(orphan.ok());
  EXPECT_EQ(orphan.status().message(), "the kernel library given with " + json +
                                           " is a 'GraphExecutorFactory' module, not a kernel library (a shared "
                                           "library of kernels, or a packed model whose factory imports one)");
}

}  // namespace
}  // namespace sorun
