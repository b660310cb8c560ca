// relax/export_check: the real TVM 0.27 exports pass with the kernels their ELF exports; hand-built
// executables and containers are refused with one line per refused thing (compiled mode, each
// unsupported family, missing kernels, memory scopes, foreign modules, system-lib builds, a root that
// is not a Relax executable), naming where.
#include "relax/export_check.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "format/binary_writer.h"
#include "inspect/elf_reader.h"
#include "relax/library_blob.h"
#include "tests/relax/relax_fixtures.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace relax {
namespace {

using testing::Const;
using testing::FixtureExecutable;
using testing::Imm;
using testing::kVm;
using testing::kVoid;
using testing::Reg;

// A container and the executable parsed from it; `bytes` keeps what both borrow.
struct Parsed {
  std::string bytes;
  LibraryBlob blob;
  VmExecutable exec;
};

Parsed ParseContainer(std::string bytes, const std::string& symbol) {
  Parsed p;
  p.bytes = std::move(bytes);
  auto blob = ParseLibraryBlob(reinterpret_cast<const uint8_t*>(p.bytes.data()), p.bytes.size(), symbol);
  EXPECT_TRUE(blob.ok()) << blob.status().ToString();
  if (!blob.ok()) return p;
  p.blob = std::move(*blob);
  const LibraryBlobModule& m = p.blob.modules[0];
  auto exec = ParseVmExecutable(
      m.payload, m.payload_size,
      UsesFfiConstantTags(p.blob.generation) ? ConstantTagDialect::kFfiTypeIndex : ConstantTagDialect::kLegacyEnum,
      m.type_key, m.payload_offset);
  EXPECT_TRUE(exec.ok()) << exec.status().ToString();
  if (exec.ok()) p.exec = std::move(*exec);
  return p;
}

Parsed ParseFixture(const FixtureExecutable& e) {
  return ParseContainer(testing::WrapTreeFirst(e.Serialize()), keys::kSymbolFfiLibraryBinV22);
}

// The fixture's library: it exports `__tvm_ffi_add_one`.
RelaxLibraryFacts AddOneLibrary() {
  return RelaxLibraryFactsFromSymbols(BlobGeneration::kFfiTreeFirst, {"__tvm_ffi_add_one"}, {});
}

// The facts of a real library, from its dynamic symbol table (defined functions, undefined names).
RelaxLibraryFacts FactsOfFile(const std::string& path, BlobGeneration generation) {
  auto image = ElfImage::ReadFile(path);
  EXPECT_TRUE(image.ok()) << image.status().ToString();
  std::vector<std::string> defined, imported;
  if (image.ok()) {
    for (const ElfSymbol& s : image->dynamic_symbols()) {
      if (s.name.empty()) continue;
      if (!s.defined()) {
        imported.emplace_back(s.name);
      } else if (s.type() == STT_FUNC) {
        defined.emplace_back(s.name);
      }
    }
  }
  return RelaxLibraryFactsFromSymbols(generation, defined, imported);
}

Parsed ParseRealFile(const std::string& path) {
  return ParseContainer(testing::ReadSymbolBytes(path, keys::kSymbolFfiLibraryBinV22), keys::kSymbolFfiLibraryBinV22);
}

// The fixture with the call at instruction 3 (function 4, null_value) redirected to a function named `name`.
FixtureExecutable CallingAt3(const std::string& name) {
  FixtureExecutable e = FixtureExecutable::Small(true, false);
  e.functions[4].name = name;
  return e;
}

TEST(ExportCheckTest, RealExportsPass) {
  for (const char* model : {"mlp", "dyn_batch"}) {
    const std::string path = sorun::testing::Runfile(std::string("testdata/relax/") + model + ".so");
    Parsed p = ParseRealFile(path);
    const RelaxLibraryFacts facts = FactsOfFile(path, p.blob.generation);
    EXPECT_FALSE(facts.system_lib) << model;
    EXPECT_TRUE(facts.is_kernel("matmul") || facts.is_kernel("shape_func")) << model;
    EXPECT_FALSE(facts.is_kernel("_library_bin")) << model;  // __tvm_ffi__* are ABI symbols
    Status s = CheckRelaxExportSupported(p.blob, p.exec, facts);
    EXPECT_TRUE(s.ok()) << model << ": " << s.ToString();
    EXPECT_TRUE(RelaxExportRefusals(p.blob, p.exec, facts).empty()) << model;
  }
}

TEST(ExportCheckTest, RealMlpWithoutItsKernelsNamesEachMissingKernel) {
  const std::string path = sorun::testing::Runfile("testdata/relax/mlp.so");
  Parsed p = ParseRealFile(path);
  const std::vector<std::string> lines = RelaxExportRefusals(p.blob, p.exec, RelaxLibraryFacts{});
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_ERROR(CheckRelaxExportSupported(p.blob, p.exec, RelaxLibraryFacts{}), StatusCode::kUnimplemented,
               "sorun cannot run this Relax export (5 reasons):",
               "\n  'main' instruction 4: calls 'matmul': missing kernel: the library does not export "
               "'__tvm_ffi_matmul' and it is no builtin sorun implements",
               "'relu'", "'add1'");
}

TEST(ExportCheckTest, SmallFixturePassesInBothMagics) {
  for (bool v2 : {false, true}) {
    Parsed p = ParseFixture(FixtureExecutable::Small(true, v2));
    EXPECT_TRUE(CheckRelaxExportSupported(p.blob, p.exec, AddOneLibrary()).ok()) << v2;
  }
}

TEST(ExportCheckTest, LegacyLibrariesExportPlainKernelNames) {
  FixtureExecutable e = FixtureExecutable::Small(false, false);
  Parsed p = ParseContainer(testing::WrapLegacy(e.Serialize()), keys::kSymbolDevMblob);
  ASSERT_EQ(p.blob.generation, BlobGeneration::kLegacyDevMblob);
  EXPECT_TRUE(CheckRelaxExportSupported(p.blob, p.exec,
                                        RelaxLibraryFactsFromSymbols(BlobGeneration::kLegacyDevMblob, {"add_one"}, {}))
                  .ok());
  // A TVM 0.16 library exports plain names: `__tvm_ffi_add_one` is not its kernel.
  EXPECT_ERROR(
      CheckRelaxExportSupported(
          p.blob, p.exec, RelaxLibraryFactsFromSymbols(BlobGeneration::kLegacyDevMblob, {"__tvm_ffi_add_one"}, {})),
      StatusCode::kUnimplemented, "(1 reason)",
      "'main' instruction 2: calls 'add_one': missing kernel: the library does not export 'add_one'");
}

TEST(ExportCheckTest, RefusesEachUnsupportedFamilyWhereItIsCalled) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"vm.builtin.paged_attention_kv_cache_create", "KV-cache builtin"},
      {"vm.builtin.cuda_graph.run_or_capture", "CUDA-graph builtin"},
      {"runtime.disco.allreduce", "disco (distributed) builtin"},
      {"tvm.contrib.cublas.matmul", "BYOC / contrib extern"},
      {"vm.builtin.invoke_closure", "VM builtin not implemented by sorun"},
  };
  for (const auto& [name, family] : cases) {
    Parsed p = ParseFixture(CallingAt3(name));
    EXPECT_ERROR(CheckRelaxExportSupported(p.blob, p.exec, AddOneLibrary()), StatusCode::kUnimplemented, "(1 reason)",
                 "'main' instruction 3: calls '" + name + "': not supported (" + family + ")");
  }
}

TEST(ExportCheckTest, UnreachedTableEntriesAreNotRefused) {
  FixtureExecutable e = FixtureExecutable::Small(true, false);
  e.functions.push_back({0, "vm.builtin.paged_attention_kv_cache_create"});  // in the table, never called
  Parsed p = ParseFixture(e);
  EXPECT_TRUE(CheckRelaxExportSupported(p.blob, p.exec, AddOneLibrary()).ok());
}

TEST(ExportCheckTest, ListsEveryRefusalAtOnce) {
  FixtureExecutable e = CallingAt3("runtime.disco.allreduce");
  e.functions.push_back({2, "helper"});
  Parsed p = ParseFixture(e);
  RelaxLibraryFacts facts;  // no kernels: add_one is missing too
  facts.system_lib = true;
  const std::vector<std::string> lines = RelaxExportRefusals(p.blob, p.exec, facts);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0].find("system-lib build"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("function table entry 5 'helper': compiled-mode (vmtir) function"), std::string::npos)
      << lines[1];
  EXPECT_NE(lines[2].find("'main' instruction 2: calls 'add_one': missing kernel"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find("'main' instruction 3: calls 'runtime.disco.allreduce'"), std::string::npos) << lines[3];
}

TEST(ExportCheckTest, RefusesCompiledModeExports) {
  // exec_mode="compiled": main is a vmtir function whose body is the kernel __vmtir__main.
  FixtureExecutable e;
  e.functions = {{2, "main", 0, 0, -2, 0, {}}, {0, "__vmtir__main"}};
  Parsed p = ParseFixture(e);
  const RelaxLibraryFacts facts =
      RelaxLibraryFactsFromSymbols(BlobGeneration::kFfiTreeFirst, {"__tvm_ffi___vmtir__main"}, {});
  EXPECT_ERROR(CheckRelaxExportSupported(p.blob, p.exec, facts), StatusCode::kUnimplemented, "(2 reasons)",
               "function table entry 0 'main': compiled-mode (vmtir) function: exported with exec_mode=\"compiled\"",
               "function table entry 1 '__vmtir__main': compiled-mode (vmtir) kernel");
}

TEST(ExportCheckTest, RefusesMemoryScopesOtherThanGlobal) {
  FixtureExecutable e = FixtureExecutable::Small(true, true);
  e.scopes = {{2, "global"}};
  Parsed ok = ParseFixture(e);
  EXPECT_TRUE(CheckRelaxExportSupported(ok.blob, ok.exec, AddOneLibrary()).ok());

  e.scopes = {{2, "global.texture-weight"}};  // TVM 0.20+ textures: not allocated by the VM yet
  Parsed texture = ParseFixture(e);
  EXPECT_ERROR(CheckRelaxExportSupported(texture.blob, texture.exec, AddOneLibrary()), StatusCode::kUnimplemented,
               "memory scope 'global.texture-weight'", "texture scopes are not supported yet");

  e.scopes = {{2, "shared"}};
  Parsed bad = ParseFixture(e);
  EXPECT_ERROR(CheckRelaxExportSupported(bad.blob, bad.exec, AddOneLibrary()), StatusCode::kUnimplemented, "(1 reason)",
               "constant c[2]: memory scope 'shared' (scope section) is not supported");

  EXPECT_TRUE(IsSupportedMemoryScope("global"));
  EXPECT_TRUE(IsSupportedMemoryScope(""));
  EXPECT_FALSE(IsSupportedMemoryScope("global.texture-nhwc"));
  EXPECT_FALSE(IsSupportedMemoryScope("global.vtcm"));
  EXPECT_FALSE(IsSupportedMemoryScope("local"));
}

TEST(ExportCheckTest, RefusesScopeConstantsOfAllocStorageAndAllocTensor) {
  for (const char* builtin : {"vm.builtin.alloc_storage", "vm.builtin.alloc_tensor"}) {
    for (const char* scope : {"global", "global.texture", "local.shared"}) {
      FixtureExecutable e = CallingAt3(builtin);
      e.AddString(scope);  // c[6]
      // alloc_storage(%vm, c[3] shape, i0 device, c[0] dtype, c[6] scope); alloc_tensor takes the same arity.
      e.instructions[3] = {1, 2, 4, 5, Reg(kVm), Const(3), Imm(0), Const(0), Const(6)};
      Parsed p = ParseFixture(e);
      Status s = CheckRelaxExportSupported(p.blob, p.exec, AddOneLibrary());
      if (std::string(scope) != "global") {
        EXPECT_ERROR(s, StatusCode::kUnimplemented, "(1 reason)",
                     std::string("'main' instruction 3: ") + builtin + " in memory scope '" + scope + "' (c[6])");
      } else {
        EXPECT_TRUE(s.ok()) << builtin << " " << scope << ": " << s.ToString();
      }
    }
  }
}

// A TVM 0.22+ container: relax.VMExecutable -> _lib -> `device_key` (payload `device_payload`).
std::string TreeWithDeviceModule(const std::string& exec_payload, const std::string& device_key) {
  BinaryWriter w;
  w.WriteU64(0);  // patched
  w.WriteU64Vector({0, 1, 2, 2});
  w.WriteU64Vector({1, 2});
  w.WriteString("relax.VMExecutable");
  w.WriteString(exec_payload);
  w.WriteString("_lib");
  w.WriteString(device_key);
  w.WriteString("opaque device payload");
  w.PatchU64(0, w.bytes().size() - 8);
  return w.TakeBytes();
}

TEST(ExportCheckTest, RefusesDeviceModulesOtherThanCudaAndOpenCL) {
  const std::string payload = FixtureExecutable::Small(true, false).Serialize();
  for (const char* key : {"cuda", "opencl"}) {
    Parsed p = ParseContainer(TreeWithDeviceModule(payload, key), keys::kSymbolFfiLibraryBinV22);
    EXPECT_TRUE(CheckRelaxExportSupported(p.blob, p.exec, AddOneLibrary()).ok()) << key;
  }
  for (const char* key : {"metal", "vulkan", "tensorrt"}) {
    Parsed p = ParseContainer(TreeWithDeviceModule(payload, key), keys::kSymbolFfiLibraryBinV22);
    EXPECT_ERROR(CheckRelaxExportSupported(p.blob, p.exec, AddOneLibrary()), StatusCode::kUnimplemented, "(1 reason)",
                 std::string("module 2 '") + key + "' (type key at byte ", "of __tvm_ffi__library_bin): not supported");
  }
}

TEST(ExportCheckTest, RefusesARootThatIsNotARelaxExecutable) {
  const std::string payload = FixtureExecutable::Small(true, false).Serialize();
  Parsed relax = ParseFixture(FixtureExecutable::Small(true, false));
  // The same payload under another root kind: the executable is what a caller parsed elsewhere.
  std::string bytes = testing::WrapTreeFirst(payload, "ffi.Module");
  auto blob =
      ParseLibraryBlob(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), keys::kSymbolFfiLibraryBinV22);
  ASSERT_TRUE(blob.ok()) << blob.status().ToString();
  EXPECT_ERROR(CheckRelaxExportSupported(*blob, relax.exec, AddOneLibrary()), StatusCode::kUnimplemented,
               "not a Relax export: __tvm_ffi__library_bin: the root module 0 is 'ffi.Module'");
}

TEST(ExportCheckTest, FactsFromSymbols) {
  const RelaxLibraryFacts ffi = RelaxLibraryFactsFromSymbols(
      BlobGeneration::kFfiTreeFirst, {"__tvm_ffi_matmul", "__tvm_ffi__library_ctx", "relu", "__tvm_ffi_main"},
      {"TVMFFIErrorSetRaisedFromCStrParts"});
  EXPECT_TRUE(ffi.is_kernel("matmul"));
  EXPECT_TRUE(ffi.is_kernel("main"));
  EXPECT_FALSE(ffi.is_kernel("relu"));  // not a tvm-ffi kernel symbol
  EXPECT_FALSE(ffi.is_kernel("_library_ctx"));
  EXPECT_FALSE(ffi.is_kernel("library_ctx"));
  EXPECT_FALSE(ffi.system_lib);
  EXPECT_TRUE(RelaxLibraryFactsFromSymbols(BlobGeneration::kFfiLegacy021, {}, {kSystemLibRegisterFfi}).system_lib);
  const RelaxLibraryFacts legacy =
      RelaxLibraryFactsFromSymbols(BlobGeneration::kLegacyDevMblob, {"relu"}, {kSystemLibRegisterLegacy});
  EXPECT_TRUE(legacy.is_kernel("relu"));
  EXPECT_TRUE(legacy.system_lib);
}

}  // namespace
}  // namespace relax
}  // namespace sorun
