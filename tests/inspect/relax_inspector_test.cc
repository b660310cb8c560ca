// `sorun inspect` on Relax VM exports (inspect/relax_inspector.h): the real TVM 0.27 exports of
// testdata/relax (main's inputs with dims, kernels, constants and their alignment, runnable), through
// InspectModelFile and through the built binary (text, --json, --disassemble); and real shared
// libraries linked here around hand-built executables (both blob symbols: TVM 0.22+'s and TVM
// 0.16's), whose refusals inspect prints.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <string>
#include <vector>

#include "inspect/model_inspector.h"
#include "packer/exporter.h"
#include "packer/host_code_module.h"
#include "relax/vm_builtin_table.h"
#include "relax/vm_disassembler.h"
#include "tests/relax/relax_fixtures.h"
#include "tests/tools/cli_test_util.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using relax::testing::FixtureExecutable;

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string Fixture(const std::string& name) { return testing::Runfile("testdata/relax/" + name + ".so"); }

// The line of `text` that starts (after blanks) with `head`, or "".
std::string LineStarting(const std::string& text, const std::string& head) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    size_t first = line.find_first_not_of(' ');
    if (first != std::string::npos && line.compare(first, head.size(), head) == 0) return line;
    pos = end + 1;
  }
  return "";
}

TEST(RelaxInspectTest, RealMlpReport) {
  auto r = InspectModelFile(Fixture("mlp"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->kind, ArtifactKind::kRelaxExport);
  EXPECT_EQ(r->format(), "import_tree");
  ASSERT_EQ(r->modules.size(), 2u);
  EXPECT_EQ(r->modules[0].type_key, "relax.VMExecutable");
  EXPECT_EQ(r->modules[0].children, (std::vector<uint64_t>{1}));
  EXPECT_EQ(r->modules[1].type_key, "_lib");
  ASSERT_TRUE(r->relax.has_value());
  const RelaxInspection& x = *r->relax;
  EXPECT_EQ(x.symbol, "__tvm_ffi__library_bin");
  EXPECT_EQ(x.tvm_versions, "TVM 0.22+");
  EXPECT_TRUE(x.magic_v2);
  EXPECT_EQ(x.num_instructions, 23u);
  ASSERT_EQ(x.inputs.size(), 1u);
  EXPECT_EQ(x.inputs[0].name, "x");
  EXPECT_EQ(x.inputs[0].dims, (std::vector<int64_t>{1, 16}));
  ASSERT_EQ(x.tensors.size(), 4u);
  EXPECT_EQ(x.tensors[0].index, 6u);
  EXPECT_EQ(x.tensors[0].bytes, 2048u);
  EXPECT_EQ(x.tensor_bytes, 2048u + 128u + 1280u + 40u);
  std::vector<std::string> kernels;
  for (const relax::CalleeInfo& c : x.callees) {
    if (c.callee_class == relax::CalleeClass::kKernel) kernels.push_back(c.name);
  }
  EXPECT_EQ(kernels, (std::vector<std::string>{"matmul", "add", "relu", "matmul1", "add1"}));
  EXPECT_TRUE(x.refusals.empty());
  EXPECT_FALSE(x.system_lib);
  EXPECT_TRUE(x.disassembly.empty());  // only when asked for
  EXPECT_EQ(r->devices_needed, std::vector<DLDeviceType>{kDLCPU});
}

// Exports whose kernels are in a device module (TVM 0.27, targets "cuda" via nvcc and "opencl"): the
// report, the text verdict and --json name the device type an executor of them needs.
TEST(RelaxInspectTest, DeviceExportsNameTheDeviceTheyNeed) {
  struct Case {
    std::string path;
    DLDeviceType type;
    std::string name, line;
  };
  for (const Case& c :
       {Case{testing::Runfile("testdata/relax_cuda/mlp_ptx.so"), kDLCUDA, "cuda",
             "\nrunnable by sorun: yes\ndevices needed: cuda (its kernels are in a CUDA module)\n"},
        Case{testing::Runfile("testdata/relax_device/mlp_opencl.so"), kDLOpenCL, "opencl",
             "\nrunnable by sorun: yes\ndevices needed: opencl (its kernels are in an OpenCL module)\n"}}) {
    auto r = InspectModelFile(c.path);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->devices_needed, std::vector<DLDeviceType>{c.type}) << c.path;
    testing::CliResult text = testing::RunSorun({"inspect", c.path});
    ASSERT_EQ(text.exit_code, 0) << testing::Describe(text);
    EXPECT_TRUE(Has(text.out, c.line)) << text.out;
    testing::CliResult json = testing::RunSorun({"inspect", c.path, "--json"});
    ASSERT_EQ(json.exit_code, 0) << testing::Describe(json);
    rapidjson::Document d;
    ASSERT_FALSE(d.Parse(json.out.c_str()).HasParseError()) << json.out;
    ASSERT_EQ(d["devices_needed"].Size(), 1u);
    EXPECT_EQ(std::string(d["devices_needed"][0].GetString()), c.name);
  }
}

TEST(RelaxInspectTest, CliTextNamesInputsKernelsConstantsAndVerdict) {
  testing::CliResult mlp = testing::RunSorun({"inspect", Fixture("mlp")});
  ASSERT_EQ(mlp.exit_code, 0) << testing::Describe(mlp);
  EXPECT_TRUE(Has(mlp.out, "Relax VM export")) << mlp.out;
  EXPECT_TRUE(Has(mlp.out, "__tvm_ffi__library_bin in .rodata")) << mlp.out;
  EXPECT_TRUE(Has(mlp.out, "TVM 0.22+ container")) << mlp.out;
  EXPECT_TRUE(Has(LineStarting(mlp.out, "x "), "float32  [1, 16]")) << mlp.out;
  EXPECT_TRUE(Has(LineStarting(mlp.out, "main(x)"), "vm function")) << mlp.out;
  for (const char* k : {"matmul ", "add ", "relu ", "matmul1 ", "add1 "}) {
    EXPECT_TRUE(Has(LineStarting(mlp.out, k), "kernel")) << k << "\n" << mlp.out;
  }
  EXPECT_TRUE(Has(LineStarting(mlp.out, "vm.builtin.alloc_tensor "), "supported builtin  5 call sites")) << mlp.out;
  EXPECT_TRUE(Has(LineStarting(mlp.out, "c[6] "), "float32[16, 32]  2048 B")) << mlp.out;
  EXPECT_TRUE(Has(mlp.out, "constants: 12 (4 tensors")) << mlp.out;
  EXPECT_TRUE(Has(mlp.out, "\nrunnable by sorun: yes\ndevices needed: cpu (no device module)\n")) << mlp.out;
  EXPECT_FALSE(Has(mlp.out, "disassembly")) << mlp.out;

  testing::CliResult dyn = testing::RunSorun({"inspect", Fixture("dyn_batch")});
  ASSERT_EQ(dyn.exit_code, 0) << testing::Describe(dyn);
  EXPECT_TRUE(Has(LineStarting(dyn.out, "x "), "float32  [?, 8]")) << dyn.out;
  for (const char* b : {"vm.builtin.alloc_shape_heap ", "vm.builtin.make_shape ", "vm.builtin.make_tuple "}) {
    EXPECT_TRUE(Has(LineStarting(dyn.out, b), "supported builtin")) << b << "\n" << dyn.out;
  }
  EXPECT_TRUE(Has(LineStarting(dyn.out, "shape_func "), "kernel")) << dyn.out;
  EXPECT_TRUE(Has(dyn.out, "\nrunnable by sorun: yes\n")) << dyn.out;
}

TEST(RelaxInspectTest, CliDisassemble) {
  testing::CliResult r = testing::RunSorun({"inspect", Fixture("mlp"), "--disassemble"});
  ASSERT_EQ(r.exit_code, 0) << testing::Describe(r);
  EXPECT_TRUE(Has(r.out, "\ndisassembly\nrelax VM executable: magic V2")) << r.out;
  EXPECT_TRUE(Has(r.out, "4: %void = call matmul(%0, c[6], %2)")) << r.out;
  EXPECT_TRUE(Has(r.out, "22: ret %8")) << r.out;
}

TEST(RelaxInspectTest, CliJson) {
  testing::CliResult r = testing::RunSorun({"inspect", Fixture("dyn_batch"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << testing::Describe(r);
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(r.out.c_str()).HasParseError()) << r.out;
  EXPECT_STREQ(d["kind"].GetString(), "relax_export");
  EXPECT_STREQ(d["blob"]["symbol"].GetString(), "__tvm_ffi__library_bin");
  ASSERT_EQ(d["inputs"].Size(), 1u);  // main's parameters, -1 for the dynamic batch
  EXPECT_STREQ(d["inputs"][0]["name"].GetString(), "x");
  EXPECT_EQ(d["inputs"][0]["shape"][0].GetInt64(), -1);
  EXPECT_EQ(d["inputs"][0]["shape"][1].GetInt64(), 8);
  EXPECT_STREQ(d["inputs"][0]["dtype"].GetString(), "float32");
  const auto& relax = d["relax"];
  EXPECT_STREQ(relax["tvm_versions"].GetString(), "TVM 0.22+");
  EXPECT_STREQ(relax["magic"].GetString(), "V2");
  EXPECT_TRUE(relax["runnable"].GetBool());
  ASSERT_EQ(d["devices_needed"].Size(), 1u);
  EXPECT_STREQ(d["devices_needed"][0].GetString(), "cpu");
  EXPECT_EQ(relax["refusals"].Size(), 0u);
  EXPECT_EQ(relax["constants"]["tensors"].Size(), 2u);
  EXPECT_EQ(relax["constants"]["unaligned_tensors"].GetUint64(),
            relax["constants"]["tensors"][0]["alignment"].GetUint64() >= 64 ? 1u : 2u);
  bool found_shape_func = false;
  for (const auto& c : relax["callees"].GetArray()) {
    if (std::string(c["name"].GetString()) == "shape_func") {
      found_shape_func = true;
      EXPECT_STREQ(c["class"].GetString(), "kernel");
    }
  }
  EXPECT_TRUE(found_shape_func);
}

class RelaxInspectLinkedTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTempDir("relax_inspect"); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  // Links `name`.so from C code defining `kernel_symbol` and, when `ffi_blob` is given, the TVM 0.22+
  // blob symbol holding those bytes; `legacy_blob_payload` goes into __tvm_dev_mblob (TVM 0.16).
  std::string Link(const std::string& name, const std::string& kernel_symbol, const std::string* ffi_blob,
                   const std::string* legacy_blob_payload) {
    std::string c = "int " + kernel_symbol + "(void) { return 0; }\n";
    if (ffi_blob != nullptr) {
      c += "const unsigned char __tvm_ffi__library_bin[" + std::to_string(ffi_blob->size()) + "] = {";
      for (unsigned char b : *ffi_blob) c += std::to_string(b) + ",";
      c += "};\n";
    }
    testing::WriteFileOrDie(Path(name + ".c"), c);
    HostCode code;
    code.files = {Path(name + ".c")};
    auto linked = LinkLibraryWithBlob(legacy_blob_payload, {code}, Path(name + ".so"));
    EXPECT_TRUE(linked.ok()) << linked.status().ToString();
    return Path(name + ".so");
  }
  std::string dir_;
};

// The fixture executable with its call at instruction 3 calling a KV-cache builtin.
FixtureExecutable KvCacheExecutable(bool ffi_tags) {
  FixtureExecutable e = FixtureExecutable::Small(ffi_tags, false);
  e.functions[4].name = "vm.builtin.paged_attention_kv_cache_create";
  return e;
}

TEST_F(RelaxInspectLinkedTest, RefusalsOfATreeFirstExport) {
  const std::string blob = relax::testing::WrapTreeFirst(KvCacheExecutable(true).Serialize());
  const std::string so = Link("kv", "__tvm_ffi_add_one", &blob, nullptr);
  auto r = InspectModelFile(so);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->relax.has_value());
  ASSERT_EQ(r->relax->refusals.size(), 1u);
  EXPECT_TRUE(Has(r->relax->refusals[0], "'main' instruction 3: calls 'vm.builtin.paged_attention_kv_cache_create'"))
      << r->relax->refusals[0];

  testing::CliResult text = testing::RunSorun({"inspect", so});
  ASSERT_EQ(text.exit_code, 0) << testing::Describe(text);
  EXPECT_TRUE(Has(LineStarting(text.out, "add_one "), "kernel")) << text.out;
  EXPECT_TRUE(
      Has(LineStarting(text.out, "vm.builtin.paged_attention_kv_cache_create "), "NOT supported (KV-cache builtin)"))
      << text.out;
  EXPECT_TRUE(Has(text.out,
                  "\nrunnable by sorun: NO (1 reason)\n  'main' instruction 3: calls "
                  "'vm.builtin.paged_attention_kv_cache_create': not supported (KV-cache builtin)\n"))
      << text.out;
}

TEST_F(RelaxInspectLinkedTest, LegacyExportWithAMissingKernel) {
  // TVM 0.16: __tvm_dev_mblob rooted in relax.Executable, kernels under their plain names. This library
  // exports `add_two`, not the `add_one` the bytecode calls.
  const std::string container = relax::testing::WrapLegacy(FixtureExecutable::Small(false, false).Serialize());
  const std::string payload = container.substr(8);  // LinkLibraryWithBlob writes the length prefix
  const std::string so = Link("legacy", "add_two", nullptr, &payload);
  testing::CliResult text = testing::RunSorun({"inspect", so});
  ASSERT_EQ(text.exit_code, 0) << testing::Describe(text);
  EXPECT_TRUE(Has(text.out, "__tvm_dev_mblob in")) << text.out;
  EXPECT_TRUE(Has(text.out, "TVM 0.16 - 0.20 container")) << text.out;
  EXPECT_TRUE(Has(LineStarting(text.out, "0  relax.Executable"), "the Relax VM executable")) << text.out;
  EXPECT_TRUE(Has(LineStarting(text.out, "x "), "float32  [1, 4]")) << text.out;
  EXPECT_TRUE(Has(text.out,
                  "runnable by sorun: NO (1 reason)\n  'main' instruction 2: calls 'add_one': missing kernel: the "
                  "library does not export 'add_one'"))
      << text.out;

  const std::string good = Link("legacy_ok", "add_one", nullptr, &payload);
  testing::CliResult ok = testing::RunSorun({"inspect", good});
  ASSERT_EQ(ok.exit_code, 0) << testing::Describe(ok);
  EXPECT_TRUE(Has(ok.out, "\nrunnable by sorun: yes\n")) << ok.out;
}

TEST_F(RelaxInspectLinkedTest, SupportedBuiltinsAreTheRowsOfTheTable) {
  // A function table naming every row of relax/vm_builtin_table.h (main calls three; the others are
  // listed, never called): inspect reports exactly the rows as supported builtins, and runnable.
  FixtureExecutable e = FixtureExecutable::Small(true, false);
  std::vector<std::string> rows;
  for (const relax::BuiltinRow& row : relax::kBuiltinRows) {
    rows.emplace_back(row.name);
    const bool listed = std::any_of(e.functions.begin(), e.functions.end(),
                                    [&](const relax::testing::FixtureFunction& f) { return f.name == row.name; });
    if (!listed) e.functions.push_back({0, row.name});
  }
  const std::string blob = relax::testing::WrapTreeFirst(e.Serialize());
  auto r = InspectModelFile(Link("all_builtins", "__tvm_ffi_add_one", &blob, nullptr));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->relax.has_value());
  std::vector<std::string> supported;
  for (const relax::CalleeInfo& c : r->relax->callees) {
    if (c.callee_class == relax::CalleeClass::kSupportedBuiltin) supported.push_back(c.name);
  }
  std::sort(rows.begin(), rows.end());
  std::sort(supported.begin(), supported.end());
  EXPECT_EQ(supported, rows);
  EXPECT_TRUE(r->relax->refusals.empty());
}

TEST_F(RelaxInspectLinkedTest, MalformedExecutableIsOneErrorLine) {
  std::string payload = FixtureExecutable::Small(true, false).Serialize();
  payload[15] = 0x7f;  // the version string's length (u64 at byte 8): runs past the payload
  const std::string blob = relax::testing::WrapTreeFirst(payload);
  const std::string so = Link("bad", "__tvm_ffi_add_one", &blob, nullptr);
  auto r = InspectModelFile(so);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << r.status().ToString();
  EXPECT_TRUE(Has(r.status().message(), "__tvm_ffi__library_bin")) << r.status().ToString();
  testing::CliResult text = testing::RunSorun({"inspect", so});
  EXPECT_NE(text.exit_code, 0);
  EXPECT_TRUE(testing::IsOneErrorLine(text)) << testing::Describe(text);
}

TEST_F(RelaxInspectLinkedTest, ATvmFfiBuildOfSomethingElseIsNotARelaxExport) {
  // A TVM 0.22+ container whose root is not a Relax executable (a TIR-only build): reported as before.
  const std::string blob = relax::testing::WrapTreeFirst("opaque", "ffi.Module");
  const std::string so = Link("tir", "__tvm_ffi_main", &blob, nullptr);
  auto r = InspectModelFile(so);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->kind, ArtifactKind::kTvmFfi);
  EXPECT_FALSE(r->relax.has_value());
}

}  // namespace
}  // namespace sorun
