// Round trips of module trees through real shared libraries: exported with the system compiler,
// loaded with dlopen, tree and kernels checked. Also blobs assembled by hand (legacy layout, the
// spec's layout), the .tar route, the integrity record, and corrupt libraries.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "backends/device_module_payload.h"
#include "backends/opencl/opencl_backend.h"
#include "backends/opencl/opencl_module.h"
#include "base/file_util.h"
#include "graph_executor/factory_module.h"
#include "graph_executor/graph_builder.h"
#include "graph_executor/register.h"
#include "inspect/elf_reader.h"
#include "packer/exporter.h"
#include "runtime/data_type.h"
#include "runtime/function_registry.h"
#include "runtime/library_module.h"
#include "serialization/loader.h"
#include "serialization/tar_loader.h"
#include "tests/util/small_model.h"
#include "tests/util/test_module.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using testing::MakeTestValue;
using testing::TestValueModule;

HostCode NnKernels() {
  HostCode code;
  code.files = {testing::Runfile("testdata/kernels/nn_kernels.c")};
  code.compile_flags = {testing::KernelIncludeFlag(), "-std=c11", "-D_GNU_SOURCE"};
  return code;
}

class ExportLoadTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(RegisterGraphExecutor().ok());
    ASSERT_TRUE(RegisterOpenclBackend().ok());
    ASSERT_TRUE(testing::RegisterTestValueModule().ok());
    ASSERT_TRUE(RegisterTarLoader().ok());
  }
  void SetUp() override { dir_ = testing::MakeTempDir("export"); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

using ::sorun::testing::MakeModel;
using ::sorun::testing::Reference;
using ::sorun::testing::SmallModel;

std::vector<float> RunModel(const Module& root) {
  auto* factory = dynamic_cast<GraphExecutorFactoryNode*>(root.get());
  EXPECT_NE(factory, nullptr) << root.type_key();
  if (!factory) return {};
  auto e = factory->CreateExecutor({CpuDevice()});
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  auto x = Tensor::Empty({1, 8}, Float32(), CpuDevice());
  for (int i = 0; i < 8; ++i) x->data_as<float>()[i] = static_cast<float>(i) / 8.0f;
  EXPECT_TRUE((*e)->SetInput("data", *x->dl()).ok());
  Status run = (*e)->Run();
  EXPECT_TRUE(run.ok()) << run.ToString();
  const float* y = (*e)->GetOutput(0)->data_as<float>();
  return std::vector<float>(y, y + 4);
}

DeviceModulePayload OpenclPayload() {
  DeviceModulePayload p;
  p.fmt = "cl";
  FunctionInfo info;
  info.arg_types = {MakeDType(kDTypeHandle, 64), MakeDType(kDTypeHandle, 64)};
  info.launch_param_tags = {"threadIdx.x"};
  p.functions = {{"copy_kernel", info}};
  p.data =
      "__kernel void copy_kernel(__global const float* a, __global float* b) { b[get_global_id(0)] = "
      "a[get_global_id(0)]; }\n";
  return p;
}

TEST_F(ExportLoadTest, FactoryLibAndTwoDeviceChildrenComeBackWithTheSameTree) {
  SmallModel m = MakeModel();
  Module host = MakeHostCodeModule(NnKernels());
  auto cl = CreateOpenclModule(OpenclPayload());
  ASSERT_TRUE(cl.ok()) << cl.status().ToString();
  Module value = MakeTestValue("child", 42);
  ASSERT_TRUE(host.Import(*cl).ok());
  ASSERT_TRUE(host.Import(value).ok());
  auto factory = MakeGraphExecutorFactory(m.json, m.params, host);
  ASSERT_TRUE(factory.ok()) << factory.status().ToString();
  std::vector<float> expected = Reference(m);

  auto report = ExportLibrary(*factory, Path("model.so"));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->type_keys,
            (std::vector<std::string>{"GraphExecutorFactory", "_lib", "sorun_test_value", "opencl"}));

  auto loaded = LoadModule(Path("model.so"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_STREQ(loaded->type_key(), "GraphExecutorFactory");
  ASSERT_EQ(loaded->imports().size(), 1u);
  const Module& lib = loaded->imports()[0];
  EXPECT_STREQ(lib.type_key(), "library");
  ASSERT_EQ(lib.imports().size(), 2u);
  // Import order after a round trip = ascending blob index (as in TVM).
  EXPECT_STREQ(lib.imports()[0].type_key(), "sorun_test_value");
  EXPECT_STREQ(lib.imports()[1].type_key(), "opencl");
  EXPECT_EQ(*lib.GetFunction("value", /*query_imports=*/true)()->AsInt(), 42);
  EXPECT_TRUE(lib.GetFunction("copy_kernel", true).defined());
  EXPECT_TRUE(lib.GetFunction("sorun_dense_bias_relu").defined());
  // __tvm_module_ctx points at the library module.
  auto* lib_node = static_cast<LibraryModuleNode*>(lib.get());
  EXPECT_EQ(*static_cast<void**>(lib_node->FindSymbol("__tvm_module_ctx")), static_cast<void*>(lib.get()));
  // Kernels run and give the same result as before export.
  std::vector<float> got = RunModel(*loaded);
  ASSERT_EQ(got.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[i], expected[i], 1e-6);
  // Params are used in place from the mapped library (64-byte aligned by the exporter).
  auto* f = static_cast<GraphExecutorFactoryNode*>(loaded->get());
  const Tensor* w = f->weights()->Find("w");
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(w->read_only());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w->data()) % 64, 0u);
  Dl_info info;
  ASSERT_NE(dladdr(w->data(), &info), 0);
  EXPECT_NE(std::string(info.dli_fname).find("model.so"), std::string::npos);
}

TEST_F(ExportLoadTest, DeeperTreesOfUserModules) {
  // value(root) -> {host -> value(b) -> value(c), value(d)}
  Module root = MakeTestValue("root", 1);
  Module host = MakeHostCodeModule(NnKernels());
  Module b = MakeTestValue("b", 2), c = MakeTestValue("c", 3), d = MakeTestValue("d", 4);
  ASSERT_TRUE(b.Import(c).ok());
  ASSERT_TRUE(host.Import(b).ok());
  ASSERT_TRUE(root.Import(host).ok());
  ASSERT_TRUE(root.Import(d).ok());
  ASSERT_TRUE(ExportLibrary(root, Path("deep.so")).ok());
  auto loaded = LoadModule(Path("deep.so"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(static_cast<TestValueModule*>(loaded->get())->name(), "root");
  ASSERT_EQ(loaded->imports().size(), 2u);
  // Indices: root 0, d 1 (phase 0 pops d first), _lib 2, b 3, c 4.
  EXPECT_STREQ(loaded->imports()[0].type_key(), "sorun_test_value");
  EXPECT_EQ(static_cast<TestValueModule*>(loaded->imports()[0].get())->name(), "d");
  const Module& lib = loaded->imports()[1];
  EXPECT_STREQ(lib.type_key(), "library");
  ASSERT_EQ(lib.imports().size(), 1u);
  const Module& lb = lib.imports()[0];
  EXPECT_EQ(static_cast<TestValueModule*>(lb.get())->name(), "b");
  ASSERT_EQ(lb.imports().size(), 1u);
  EXPECT_EQ(static_cast<TestValueModule*>(lb.imports()[0].get())->name(), "c");
  EXPECT_EQ(*loaded->GetFunction("name_of_c", true)()->AsString(), "c");
}

TEST_F(ExportLoadTest, CRouteAndAssemblyRouteEmbedIdenticalBlobs) {
  SmallModel m = MakeModel();
  Module host = MakeHostCodeModule(NnKernels());
  ASSERT_TRUE(host.Import(MakeTestValue("v", 9)).ok());
  Module factory = *MakeGraphExecutorFactory(m.json, m.params, host);
  ExportOptions c_route;
  c_route.embedding = BlobEmbedding::kCSource;
  ASSERT_TRUE(ExportLibrary(factory, Path("asm.so")).ok());
  ASSERT_TRUE(ExportLibrary(factory, Path("c.so"), c_route).ok());
  auto a = ElfImage::ReadFile(Path("asm.so"));
  auto c = ElfImage::ReadFile(Path("c.so"));
  ASSERT_TRUE(a.ok() && c.ok());
  auto ablob = a->FindSymbolData("__tvm_dev_mblob");
  auto cblob = c->FindSymbolData("__tvm_dev_mblob");
  ASSERT_TRUE(ablob.ok() && cblob.ok());
  ASSERT_EQ(ablob->size, cblob->size);
  EXPECT_EQ(std::memcmp(ablob->data, cblob->data, ablob->size), 0);
  EXPECT_EQ(ablob->address % 64, 0u);
  EXPECT_EQ(cblob->address % 64, 0u);
  auto loaded = LoadModule(Path("c.so"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(RunModel(*loaded), RunModel(*LoadModule(Path("asm.so"))));
}

TEST_F(ExportLoadTest, TarExportIsLinkedWhenLoaded) {
  SmallModel m = MakeModel();
  Module factory = *MakeGraphExecutorFactory(m.json, m.params, MakeHostCodeModule(NnKernels()));
  ASSERT_TRUE(ExportLibrary(factory, Path("model.tar")).ok());
  // The core loader alone points at the .tar support.
  ASSERT_TRUE(FunctionRegistry::Global().Remove("runtime.module.loadfile_tar"));
  auto unsupported = LoadModule(Path("model.tar"));
  EXPECT_EQ(unsupported.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(unsupported.status().message().find("RegisterTarLoader"), std::string::npos);
  ASSERT_TRUE(RegisterTarLoader().ok());
  ASSERT_TRUE(ExportLibrary(factory, Path("model.so")).ok());
  auto from_tar = LoadModule(Path("model.tar"));
  ASSERT_TRUE(from_tar.ok()) << from_tar.status().ToString();
  EXPECT_EQ(RunModel(*from_tar), RunModel(*LoadModule(Path("model.so"))));
}

TEST_F(ExportLoadTest, LegacyBlobWithoutImportTreeMakesTheLibraryTheRoot) {
  // Assembled by hand: count 2, two user modules, no _lib, no _import_tree (pre-v0.7 exporters).
  BinaryWriter w;
  w.WriteU64(2);
  w.WriteString("sorun_test_value");
  w.WriteString("first");
  w.WriteI64(1);
  w.WriteString("sorun_test_value");
  w.WriteString("second");
  w.WriteI64(2);
  std::string payload = w.bytes();
  ASSERT_TRUE(LinkLibraryWithBlob(&payload, {NnKernels()}, Path("legacy.so")).ok());
  auto loaded = LoadModule(Path("legacy.so"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_STREQ(loaded->type_key(), "library");
  ASSERT_EQ(loaded->imports().size(), 2u);
  EXPECT_EQ(static_cast<TestValueModule*>(loaded->imports()[0].get())->name(), "first");
  EXPECT_EQ(static_cast<TestValueModule*>(loaded->imports()[1].get())->name(), "second");
  EXPECT_TRUE(loaded->GetFunction("sorun_relu").defined());
}

TEST_F(ExportLoadTest, NoBlobIsAPlainKernelLibrary) {
  ASSERT_TRUE(ExportLibrary(MakeHostCodeModule(NnKernels()), Path("plain.so")).ok());
  auto elf = ElfImage::ReadFile(Path("plain.so"));
  ASSERT_TRUE(elf.ok());
  EXPECT_FALSE(elf->HasSymbol("__tvm_dev_mblob"));
  auto loaded = LoadModule(Path("plain.so"));
  ASSERT_TRUE(loaded.ok());
  EXPECT_STREQ(loaded->type_key(), "library");
  EXPECT_TRUE(loaded->imports().empty());
}

TEST_F(ExportLoadTest, SpecLayoutAssembledByHandLoadsAndRuns) {
  // docs/spec/FORMAT.md section 10: count = modules + 1; factory, _lib, _import_tree [0,1,1] / [1].
  SmallModel m = MakeModel();
  BinaryWriter factory_payload(8 + 8 + 8 + 20);  // origin only matters for alignment pads
  auto factory = GraphExecutorFactoryNode::Create(m.json, m.params);
  ASSERT_TRUE(factory.ok()) << factory.status().ToString();
  ASSERT_TRUE((*factory)->SaveToBinary(&factory_payload).ok());
  std::string p;
  auto u64 = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) p.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  auto str = [&](const std::string& s) {
    u64(s.size());
    p += s;
  };
  u64(3);
  str("GraphExecutorFactory");
  p += factory_payload.bytes();
  str("_lib");
  str("_import_tree");
  u64(3);
  u64(0);
  u64(1);
  u64(1);  // row_ptr
  u64(1);
  u64(1);  // child_indices
  ASSERT_TRUE(LinkLibraryWithBlob(&p, {NnKernels()}, Path("spec.so")).ok());
  auto loaded = LoadModule(Path("spec.so"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(RunModel(*loaded).size(), 4u);
}

TEST_F(ExportLoadTest, ChecksumCatchesCorruptionAndCanBeSkipped) {
  SmallModel m = MakeModel();
  Module factory = *MakeGraphExecutorFactory(m.json, m.params, MakeHostCodeModule(NnKernels()));
  ASSERT_TRUE(ExportLibrary(factory, Path("good.so")).ok());
  // Flip one byte of the weight data inside the blob (structure stays valid).
  std::string bytes = *ReadFileToString(Path("good.so"));
  auto elf = ElfImage::Parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "good.so");
  ASSERT_TRUE(elf.ok());
  auto blob = elf->FindSymbolData("__tvm_dev_mblob");
  ASSERT_TRUE(blob.ok());
  EXPECT_TRUE(elf->HasSymbol("__sorun_blob_checksum"));
  // The bias tensor's 16 data bytes, found by value inside the blob.
  std::string bias_bytes(reinterpret_cast<const char*>(m.params[1].second.data()), 16);
  size_t at = bytes.find(bias_bytes, blob->file_offset);
  ASSERT_NE(at, std::string::npos);
  ASSERT_LT(at, blob->file_offset + blob->size);
  bytes[at + 15] ^= 0x55;
  ASSERT_TRUE(WriteFileBytes(Path("bad.so"), bytes).ok());
  LoadOptions verify;
  verify.verify_checksum = true;
  auto bad = LoadModule(Path("bad.so"), verify);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(bad.status().message().find("blob checksum mismatch"), std::string::npos) << bad.status().message();
  LoadOptions skip;
  skip.verify_checksum = false;
  auto skipped = LoadModule(Path("bad.so"), skip);
  EXPECT_TRUE(skipped.ok()) << skipped.status().ToString();
  // The default does not verify (one hash pass over the blob per load); left unset, the option is
  // decided by the environment both ways, and an explicit choice wins over the environment.
  EXPECT_TRUE(LoadModule(Path("bad.so")).ok());
  setenv("SORUN_VERIFY_CHECKSUM", "1", 1);
  auto env_on = LoadModule(Path("bad.so"));
  auto explicit_off = LoadModule(Path("bad.so"), skip);
  setenv("SORUN_VERIFY_CHECKSUM", "0", 1);
  auto env_off = LoadModule(Path("bad.so"));
  auto explicit_on = LoadModule(Path("bad.so"), verify);
  setenv("SORUN_VERIFY_CHECKSUM", "true", 1);
  auto unclear = LoadModule(Path("good.so"));
  unsetenv("SORUN_VERIFY_CHECKSUM");
  EXPECT_FALSE(env_on.ok());
  EXPECT_TRUE(explicit_off.ok()) << explicit_off.status().ToString();
  EXPECT_TRUE(env_off.ok()) << env_off.status().ToString();
  EXPECT_FALSE(explicit_on.ok());
  ASSERT_FALSE(unclear.ok());
  EXPECT_EQ(unclear.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unclear.status().message().find("SORUN_VERIFY_CHECKSUM is 'true': use 1"), std::string::npos)
      << unclear.status().message();
}

TEST_F(ExportLoadTest, CorruptLibrariesFailCleanlyAndLeaveNothingLoaded) {
  struct Case {
    const char* name;
    std::string payload;
    const char* expected;
  };
  auto u64 = [](uint64_t v) {
    std::string s;
    for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return s;
  };
  auto str = [&](const std::string& s) { return u64(s.size()) + s; };
  const Case cases[] = {
      {"unknown_key.so", u64(1) + str("FancyModule") + "xx",
       "binary was created using module type 'FancyModule' but no loader of that name is registered (registered: "},
      {"trailing.so", u64(0) + "junk", "4 trailing bytes after the 0 entries"},
      {"bad_tree.so", u64(2) + str("_lib") + str("_import_tree") + u64(2) + u64(0) + u64(5) + u64(0),
       "row_ptr ends at 5 but there are 0 child indices"},
      {"truncated.so", u64(1) + str("GraphExecutorFactory") + str("{\"nodes\""), "truncated"},
  };
  for (const Case& c : cases) {
    ASSERT_TRUE(LinkLibraryWithBlob(&c.payload, {NnKernels()}, Path(c.name)).ok()) << c.name;
    auto loaded = LoadModule(Path(c.name));
    ASSERT_FALSE(loaded.ok()) << c.name;
    EXPECT_EQ(loaded.status().code(),
              c.name == std::string("unknown_key.so") ? StatusCode::kNotFound : StatusCode::kDataLoss)
        << loaded.status().ToString();
    EXPECT_NE(loaded.status().message().find(c.expected), std::string::npos)
        << c.name << ": " << loaded.status().message();
    EXPECT_NE(loaded.status().message().find(c.name), std::string::npos) << "message must name the file";
    // Nothing stays loaded.
    EXPECT_EQ(dlopen(Path(c.name).c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr) << c.name << " is still mapped";
  }
  // And a good model loads right after.
  SmallModel m = MakeModel();
  ASSERT_TRUE(
      ExportLibrary(*MakeGraphExecutorFactory(m.json, m.params, MakeHostCodeModule(NnKernels())), Path("ok.so")).ok());
  EXPECT_TRUE(LoadModule(Path("ok.so")).ok());
}

TEST_F(ExportLoadTest, ConcurrentLoadsOfOneFileShareTheLibrary) {
  SmallModel m = MakeModel();
  Module host = MakeHostCodeModule(NnKernels());
  ASSERT_TRUE(host.Import(MakeTestValue("v", 5)).ok());
  ASSERT_TRUE(ExportLibrary(*MakeGraphExecutorFactory(m.json, m.params, host), Path("shared.so")).ok());
  std::vector<Module> roots(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < roots.size(); ++i) {
    threads.emplace_back([&, i] {
      auto loaded = LoadModule(Path("shared.so"));
      if (loaded.ok()) roots[i] = *loaded;
    });
  }
  for (auto& t : threads) t.join();
  for (const Module& r : roots) {
    ASSERT_TRUE(r.defined());
    EXPECT_EQ(r.imports()[0].get(), roots[0].imports()[0].get());  // one library module
    EXPECT_EQ(r.imports()[0].imports().size(), 1u);                // imports attached once
    EXPECT_EQ(RunModel(r), RunModel(roots[0]));
  }
}

TEST_F(ExportLoadTest, UnloadingWhileExecutorsLiveIsSafe) {
  SmallModel m = MakeModel();
  ASSERT_TRUE(
      ExportLibrary(*MakeGraphExecutorFactory(m.json, m.params, MakeHostCodeModule(NnKernels())), Path("m.so")).ok());
  std::unique_ptr<GraphExecutor> e;
  std::vector<float> expected;
  {
    auto loaded = LoadModule(Path("m.so"));
    ASSERT_TRUE(loaded.ok());
    expected = RunModel(*loaded);
    e = std::move(*static_cast<GraphExecutorFactoryNode*>(loaded->get())->CreateExecutor({CpuDevice()}));
  }
  // The module handles are gone; the executor keeps the library (and the in-place weights) mapped.
  EXPECT_NE(dlopen(Path("m.so").c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr);
  auto x = Tensor::Empty({1, 8}, Float32(), CpuDevice());
  for (int i = 0; i < 8; ++i) x->data_as<float>()[i] = static_cast<float>(i) / 8.0f;
  ASSERT_TRUE(e->SetInput("data", *x->dl()).ok());
  ASSERT_TRUE(e->Run().ok());
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(e->GetOutput(0)->data_as<float>()[i], expected[static_cast<size_t>(i)]);
}

TEST_F(ExportLoadTest, ExportErrorsAreClear) {
  HostCode missing;
  missing.files = {"/nonexistent/kernels.c"};
  auto r = ExportLibrary(MakeHostCodeModule(missing), Path("x.so"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("host code file /nonexistent/kernels.c does not exist"), std::string::npos);
  std::string bad_src = Path("bad.c");
  ASSERT_TRUE(WriteFileBytes(bad_src, std::string("int broken( {")).ok());
  HostCode broken;
  broken.files = {bad_src};
  r = ExportLibrary(MakeHostCodeModule(broken), Path("y.so"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("compiling " + bad_src), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("error"), std::string::npos);  // the compiler's own output
  EXPECT_FALSE(testing::FileExists(Path("y.so")));
}

}  // namespace
}  // namespace sorun
