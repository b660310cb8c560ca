// The ELF blob injector against real shared libraries built by Bazel (testdata/kernels: the default
// cc_binary libraries and genrule variants linked with --hash-style=gnu/sysv/both, a version script,
// gold, lld, CET notes, 64 KiB pages, no build-id, stripped). Every injected library is checked the way
// its users see it: our ELF reader (exact bytes, 64-byte aligned address), dlopen(RTLD_NOW) + dlsym +
// dladdr1 (st_size), every original export still resolving to the same place, a kernel called through
// LibraryModuleNode, readelf -aW without a warning, nm -D, and strip (BFD rewrites the file) followed
// by another load. A packed model goes through LoadModule and runs. Malformed and unsupported inputs
// are refused with a message naming the reason.
#include "packer/elf_blob_injector.h"

#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "graph_executor/factory_module.h"
#include "graph_executor/graph_builder.h"
#include "graph_executor/register.h"
#include "inspect/elf_reader.h"
#include "packer/exporter.h"
#include "packer/host_code_module.h"
#include "packer/module_serializer.h"
#include "runtime/data_type.h"
#include "runtime/library_module.h"
#include "runtime/tensor.h"
#include "serialization/blob_checksum.h"
#include "serialization/loader.h"
#include "tests/util/small_model.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using ::sorun::testing::FileExists;
using ::sorun::testing::MakeTempDir;
using ::sorun::testing::ReadFileOrDie;
using ::sorun::testing::Runfile;
using ::sorun::testing::WriteFileOrDie;

using ::sorun::testing::Contains;

// A blob (8-byte length prefix + payload) of `payload_bytes` pseudo-random bytes.
std::string TestBlob(size_t payload_bytes, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  std::string payload(payload_bytes, '\0');
  for (char& c : payload) c = static_cast<char>(rng() & 0xff);
  return MakeBlobBytes(payload);
}

// Runs `command` with sh; returns its stdout+stderr (as selected by the command's redirections).
std::string Capture(const std::string& command, int* exit_status = nullptr) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  const int status = ::pclose(pipe);
  if (exit_status) *exit_status = status;
  return out;
}

bool HaveTool(const char* tool) {
  int status = 0;
  Capture(std::string("command -v ") + tool + " >/dev/null 2>&1", &status);
  return status == 0;
}

std::string Quote(const std::string& path) { return "'" + path + "'"; }

// The binutils program `tool` for the libraries' architecture: the cross compiler's ("aarch64-linux-gnu-strip"
// when CC is aarch64-linux-gnu-gcc, as under --config=aarch64: BFD of the host's strip rewrites only its
// own architecture), else `tool`.
std::string TargetTool(const std::string& tool) {
  const char* cc = std::getenv("CC");
  const std::string compiler = cc == nullptr ? "" : cc;
  const size_t dash = compiler.rfind('-');
  if (dash == std::string::npos || compiler.substr(dash + 1) != "gcc") return tool;
  const std::string prefixed = compiler.substr(0, dash + 1) + tool;
  return HaveTool(prefixed.c_str()) ? prefixed : tool;
}

Tensor FloatTensor(const std::vector<float>& values) {
  auto t = Tensor::Empty({static_cast<int64_t>(values.size())}, Float32(), CpuDevice());
  for (size_t i = 0; i < values.size(); ++i) t->data_as<float>()[i] = values[i];
  return *t;
}

// Symbols a library exports at an address: defined GLOBAL/WEAK entries of .dynsym (not absolute,
// such as version-node symbols; not thread-local), other than the injected ones.
std::vector<ElfSymbol> Exports(const ElfImage& image) {
  std::vector<ElfSymbol> out;
  for (const ElfSymbol& s : image.dynamic_symbols()) {
    if (s.defined() && !s.name.empty() && s.binding() != STB_LOCAL && s.type() != STT_TLS && s.shndx != SHN_ABS &&
        s.name != "__tvm_dev_mblob" && s.name != "__sorun_blob_checksum") {
      out.push_back(s);
    }
  }
  return out;
}

struct Variant {
  const char* name;
  const char* path;    // workspace-relative
  const char* kernel;  // a kernel to call: "sorun_relu" (y = max(x, 0)) or "add_one" (y = x + 1)
};

const Variant kVariants[] = {
    {"bazel_nn_kernels", "testdata/kernels/libnn_kernels.so", "sorun_relu"},
    {"bazel_abi_test_kernels", "testdata/kernels/libabi_test_kernels.so", "add_one"},
    {"gnu_hash", "testdata/kernels/libnn_kernels_gnu_hash.so", "sorun_relu"},
    {"sysv_hash", "testdata/kernels/libnn_kernels_sysv_hash.so", "sorun_relu"},
    {"both_hash", "testdata/kernels/libnn_kernels_both_hash.so", "sorun_relu"},
    {"versioned", "testdata/kernels/libnn_kernels_versioned.so", "sorun_relu"},
    {"no_build_id", "testdata/kernels/libnn_kernels_no_build_id.so", "sorun_relu"},
    {"page_64k", "testdata/kernels/libnn_kernels_page_64k.so", "sorun_relu"},
    {"gold", "testdata/kernels/libnn_kernels_gold.so", "sorun_relu"},
    {"lld", "testdata/kernels/libnn_kernels_lld.so", "sorun_relu"},
    {"cet", "testdata/kernels/libnn_kernels_cet.so", "sorun_relu"},
    {"stripped", "testdata/kernels/libnn_kernels_stripped.so", "sorun_relu"},
};

class ElfBlobInjectorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_TRUE(RegisterGraphExecutor().ok()); }
  void SetUp() override { dir_ = MakeTempDir("inject"); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  // Everything a user of the injected library relies on. `input` is the library before injection.
  void ExpectInjected(const std::string& input, const std::string& output, const std::string& blob,
                      const std::string& checksum, const char* kernel) {
    SCOPED_TRACE(output);
    // Our reader: exact bytes, 64-byte aligned, in .dynsym, in the new section.
    auto image = ElfImage::ReadFile(output);
    ASSERT_TRUE(image.ok()) << image.status().ToString();
    auto data = image->FindSymbolData("__tvm_dev_mblob");
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    EXPECT_EQ(data->table, ".dynsym");
    EXPECT_EQ(data->section, ".sorun_blob");
    EXPECT_EQ(data->address % 64, 0u);
    ASSERT_EQ(data->size, blob.size());
    EXPECT_EQ(std::memcmp(data->data, blob.data(), blob.size()), 0);
    const ElfSymbol* sym = image->FindDefinedSymbol("__tvm_dev_mblob");
    ASSERT_NE(sym, nullptr);
    EXPECT_EQ(sym->binding(), 1);  // STB_GLOBAL
    EXPECT_EQ(sym->type(), 1);     // STT_OBJECT
    EXPECT_EQ(sym->other, 0);      // STV_DEFAULT
    if (!checksum.empty()) {
      auto record = image->FindSymbolData("__sorun_blob_checksum");
      ASSERT_TRUE(record.ok()) << record.status().ToString();
      EXPECT_EQ(record->section, ".sorun_blob_checksum");
      ASSERT_EQ(record->size, checksum.size());
      EXPECT_EQ(std::memcmp(record->data, checksum.data(), checksum.size()), 0);
    }
    auto original = ElfImage::ReadFile(input);
    ASSERT_TRUE(original.ok());
    const std::vector<ElfSymbol> exports = Exports(*original);
    ASSERT_FALSE(exports.empty());

    // The dynamic loader: dlopen(RTLD_NOW) binds everything; dlsym + dladdr1 see the blob and its size.
    void* handle = ::dlopen(output.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << ::dlerror();
    const auto* mapped = static_cast<const uint8_t*>(::dlsym(handle, "__tvm_dev_mblob"));
    ASSERT_NE(mapped, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(mapped) % 64, 0u);
    EXPECT_EQ(std::memcmp(mapped, blob.data(), blob.size()), 0);
    Dl_info info;
    void* entry = nullptr;
    ASSERT_NE(::dladdr1(mapped, &info, &entry, RTLD_DL_SYMENT), 0);
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(info.dli_saddr, mapped);
    EXPECT_STREQ(info.dli_sname, "__tvm_dev_mblob");
    EXPECT_EQ(static_cast<const ElfW(Sym)*>(entry)->st_size, blob.size());
    if (!checksum.empty()) {
      const void* record = ::dlsym(handle, "__sorun_blob_checksum");
      ASSERT_NE(record, nullptr);
      EXPECT_TRUE(VerifyBlobChecksum(mapped, blob.size(), record, checksum.size()).ok());
    }
    // Every original export resolves, to the same offset from the load base.
    for (const ElfSymbol& s : exports) {
      void* address = ::dlsym(handle, std::string(s.name).c_str());
      ASSERT_NE(address, nullptr) << s.name;
      Dl_info where;
      ASSERT_NE(::dladdr(address, &where), 0) << s.name;
      EXPECT_EQ(static_cast<uint64_t>(static_cast<char*>(address) - static_cast<char*>(where.dli_fbase)), s.value)
          << s.name;
    }
    // A kernel, through sorun's kernel-library module.
    auto opened = LibraryModuleNode::Open(output);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    Module lib(ObjectPtr<ModuleNode>(opened->module));
    PackedFunc f = lib.GetFunction(kernel);
    ASSERT_TRUE(f.defined()) << kernel;
    Tensor x = FloatTensor({-2.0f, -0.5f, 0.0f, 1.5f, 3.0f});
    Tensor y = FloatTensor({9, 9, 9, 9, 9});
    auto r = f(x, y);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    for (int i = 0; i < 5; ++i) {
      const float in = x.data_as<float>()[i];
      const float want = std::string(kernel) == "sorun_relu" ? std::max(in, 0.0f) : in + 1.0f;
      EXPECT_EQ(y.data_as<float>()[i], want) << kernel << " element " << i;
    }
    lib = Module();
    ::dlclose(handle);

    // binutils: readelf -aW warns about nothing, nm -D lists the symbols.
    if (HaveTool("readelf")) {
      int status = 0;
      const std::string warnings = Capture("readelf -aW " + Quote(output) + " 2>&1 >/dev/null", &status);
      EXPECT_EQ(status, 0);
      EXPECT_EQ(warnings, "") << "readelf -aW " << output;
    }
    if (HaveTool("nm")) {
      const std::string nm = Capture("nm -D " + Quote(output) + " 2>&1");
      EXPECT_TRUE(Contains(nm, " R __tvm_dev_mblob\n")) << nm;
      if (!checksum.empty()) {
        EXPECT_TRUE(Contains(nm, " R __sorun_blob_checksum\n")) << nm;
      }
    }
  }

  std::string dir_;
};

class InjectVariantTest : public ElfBlobInjectorTest, public ::testing::WithParamInterface<Variant> {};

TEST_P(InjectVariantTest, InjectedLibraryLoadsEverywhereAndSurvivesStrip) {
  const Variant& v = GetParam();
  const std::string input = Runfile(v.path);
  const std::string blob = TestBlob(10000 + 37);
  const std::string checksum = MakeBlobChecksumRecord(blob);
  const std::string output = Path(std::string("injected_") + v.name + ".so");
  BlobInjectionReport report;
  Status s = InjectBlobIntoSharedLibrary(input, blob, checksum, output, {}, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(report.program_headers_in_place) << report.program_headers_moved_because;
  EXPECT_EQ(report.blob_bytes, blob.size());
  EXPECT_EQ(report.blob_address % 64, 0u);
  EXPECT_EQ(report.segment_offset % 4096, report.segment_address % 4096);
  ExpectInjected(input, output, blob, checksum, v.kernel);

  // strip (BFD) rewrites the whole file; the result must still be a valid packed library.
  const std::string strip = TargetTool("strip");
  if (!HaveTool(strip.c_str())) GTEST_SKIP() << "no " << strip;
  const std::string stripped = Path(std::string("stripped_") + v.name + ".so");
  int status = 0;
  const std::string strip_output = Capture(strip + " -o " + Quote(stripped) + " " + Quote(output) + " 2>&1", &status);
  ASSERT_EQ(status, 0) << strip_output;
  EXPECT_EQ(strip_output, "");
  ExpectInjected(input, stripped, blob, checksum, v.kernel);
}

INSTANTIATE_TEST_SUITE_P(Libraries, InjectVariantTest, ::testing::ValuesIn(kVariants),
                         [](const ::testing::TestParamInfo<Variant>& info) { return std::string(info.param.name); });

// The dynamic section and hash tables as readelf reports them.
std::string DynamicSection(const std::string& path) { return Capture("readelf -dW " + Quote(path) + " 2>&1"); }

TEST_F(ElfBlobInjectorTest, HashTablesAreRebuiltAsDtHash) {
  if (!HaveTool("readelf")) GTEST_SKIP() << "no readelf";
  const std::string blob = TestBlob(100);
  struct Case {
    const char* variant;
    bool converted, dropped;
  } cases[] = {{"gnu_hash", true, false}, {"sysv_hash", false, false}, {"both_hash", false, true}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.variant);
    const std::string input = Runfile(std::string("testdata/kernels/libnn_kernels_") + c.variant + ".so");
    const std::string output = Path(std::string(c.variant) + ".so");
    BlobInjectionReport report;
    ASSERT_TRUE(InjectBlobIntoSharedLibrary(input, blob, "", output, {}, &report).ok());
    EXPECT_EQ(report.converted_gnu_hash, c.converted);
    EXPECT_EQ(report.dropped_gnu_hash, c.dropped);
    const std::string before = DynamicSection(input), after = DynamicSection(output);
    EXPECT_TRUE(Contains(after, "(HASH)")) << after;
    EXPECT_FALSE(Contains(after, "(GNU_HASH)")) << after;
    // Same number of dynamic entries: nothing is added, DT_GNU_HASH is converted or removed.
    const size_t entries_before = std::count(before.begin(), before.end(), '\n');
    const size_t entries_after = std::count(after.begin(), after.end(), '\n');
    EXPECT_EQ(entries_after + (c.dropped ? 1 : 0), entries_before);
    // No more section headers than the two new ones; .hash is the live table's canonical name.
    auto image = ElfImage::ReadFile(output);
    ASSERT_TRUE(image.ok());
    const ElfSection* hash = image->FindSection(".hash");
    ASSERT_NE(hash, nullptr);
    EXPECT_EQ(hash->type, 5u);  // SHT_HASH
    EXPECT_EQ(image->FindSection(".gnu.hash"), nullptr);
    EXPECT_NE(image->FindSection(".sorun_blob"), nullptr);
    EXPECT_EQ(image->FindSection(".sorun_blob_checksum"), nullptr);  // no record given
    // The unused .gnu.hash header carries .sorun_blob (no header added); otherwise one is added.
    auto in_image = ElfImage::ReadFile(input);
    ASSERT_TRUE(in_image.ok());
    EXPECT_EQ(image->sections().size(), in_image->sections().size() + (c.dropped ? 0 : 1));
  }
}

TEST_F(ElfBlobInjectorTest, VersionedLibraryKeepsItsVersions) {
  const std::string input = Runfile("testdata/kernels/libnn_kernels_versioned.so");
  const std::string output = Path("versioned.so");
  const std::string blob = TestBlob(256);
  ASSERT_TRUE(InjectBlobIntoSharedLibrary(input, blob, MakeBlobChecksumRecord(blob), output).ok());
  auto image = ElfImage::ReadFile(output);
  ASSERT_TRUE(image.ok());
  const ElfSection* versym = image->FindSection(".gnu.version");
  ASSERT_NE(versym, nullptr);
  ASSERT_EQ(versym->size, image->dynamic_symbols().size() * 2);
  // The new symbols are the last two entries, both VER_NDX_GLOBAL.
  const uint8_t* v = image->data() + versym->offset;
  const size_t n = image->dynamic_symbols().size();
  EXPECT_EQ(image->dynamic_symbols()[n - 2].name, "__tvm_dev_mblob");
  EXPECT_EQ(v[2 * (n - 2)] | (v[2 * (n - 2) + 1] << 8), 1);
  EXPECT_EQ(v[2 * (n - 1)] | (v[2 * (n - 1) + 1] << 8), 1);
  // Versioned and unversioned lookups still work.
  void* handle = ::dlopen(output.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  EXPECT_NE(::dlvsym(handle, "sorun_relu", "SORUN_1.0"), nullptr);
  EXPECT_EQ(::dlsym(handle, "sorun_relu"), ::dlvsym(handle, "sorun_relu", "SORUN_1.0"));
  EXPECT_NE(::dlsym(handle, "__tvm_dev_mblob"), nullptr);
  ::dlclose(handle);
  if (HaveTool("readelf")) {
    const std::string versions = Capture("readelf -VW " + Quote(output) + " 2>&1");
    EXPECT_TRUE(Contains(versions, "Name: SORUN_1.0")) << versions;
    EXPECT_TRUE(Contains(versions, "GLIBC_2.")) << versions;  // 2.2.5 on x86-64, 2.17 on aarch64
  }
}

using ::sorun::testing::MakeModel;
using ::sorun::testing::Reference;
using ::sorun::testing::SmallModel;

// The `sorun pack` flow: factory blob ([GraphExecutorFactory, _lib, _import_tree]) injected into the
// kernel library, loaded by LoadModule, run.
std::string FactoryBlob(const SmallModel& m) {
  auto factory = MakeGraphExecutorFactory(m.json, m.params, MakeHostCodeModule(HostCode{}));
  EXPECT_TRUE(factory.ok()) << factory.status().ToString();
  auto tree = SerializeModuleTree(*factory);
  EXPECT_TRUE(tree.ok()) << tree.status().ToString();
  EXPECT_EQ(tree->type_keys, (std::vector<std::string>{"GraphExecutorFactory", "_lib"}));
  EXPECT_TRUE(tree->has_import_tree);
  return MakeBlobBytes(tree->payload);
}

TEST_F(ElfBlobInjectorTest, PackedThreeFileModelLoadsAndRuns) {
  for (const char* variant : {"testdata/kernels/libnn_kernels.so", "testdata/kernels/libnn_kernels_versioned.so",
                              "testdata/kernels/libnn_kernels_lld.so"}) {
    SCOPED_TRACE(variant);
    SmallModel m = MakeModel();
    const std::string blob = FactoryBlob(m);
    const std::string output = Path("model_" + std::to_string(std::hash<std::string>()(variant)) + ".so");
    ASSERT_TRUE(InjectBlobIntoSharedLibrary(Runfile(variant), blob, MakeBlobChecksumRecord(blob), output).ok());
    auto loaded = LoadModule(output);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    EXPECT_STREQ(loaded->type_key(), "GraphExecutorFactory");
    ASSERT_EQ(loaded->imports().size(), 1u);
    EXPECT_STREQ(loaded->imports()[0].type_key(), "library");
    EXPECT_TRUE(loaded->imports()[0].imports().empty());
    auto* factory = static_cast<GraphExecutorFactoryNode*>(loaded->get());
    auto executor = factory->CreateExecutor({CpuDevice()});
    ASSERT_TRUE(executor.ok()) << executor.status().ToString();
    auto x = Tensor::Empty({1, 8}, Float32(), CpuDevice());
    for (int i = 0; i < 8; ++i) x->data_as<float>()[i] = static_cast<float>(i) / 8.0f;
    ASSERT_TRUE((*executor)->SetInput("data", *x->dl()).ok());
    ASSERT_TRUE((*executor)->Run().ok());
    const std::vector<float> expected = Reference(m);
    const float* y = (*executor)->GetOutput(0)->data_as<float>();
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], expected[i], 1e-6);
    // Parameters are used in place, inside the injected blob of the mapped library.
    const Tensor* w = factory->weights()->Find("w");
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(w->data()) % 64, 0u);
    Dl_info info;
    ASSERT_NE(::dladdr(w->data(), &info), 0);
    EXPECT_EQ(std::string(info.dli_fname), output);
  }
}

TEST_F(ElfBlobInjectorTest, LoaderVerifiesTheInjectedChecksum) {
  SmallModel m = MakeModel();
  const std::string blob = FactoryBlob(m);
  ASSERT_TRUE(InjectBlobIntoSharedLibrary(Runfile("testdata/kernels/libnn_kernels.so"), blob,
                                          MakeBlobChecksumRecord(blob), Path("good.so"))
                  .ok());
  // Flip one byte of the graph JSON inside the injected blob: the record no longer matches.
  std::string bytes = ReadFileOrDie(Path("good.so"));
  auto image = ElfImage::Parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "good.so");
  ASSERT_TRUE(image.ok());
  auto data = image->FindSymbolData("__tvm_dev_mblob");
  ASSERT_TRUE(data.ok());
  const size_t at = static_cast<size_t>(data->file_offset) + 60;
  bytes[at] = static_cast<char>(bytes[at] ^ 0x20);
  WriteFileOrDie(Path("bad.so"), bytes);
  EXPECT_ERROR(LoadModule(Path("bad.so")).status(), StatusCode::kDataLoss, "bad.so");
}

TEST_F(ElfBlobInjectorTest, OutputIsDeterministicAndMayReplaceItsInput) {
  const std::string input_bytes = ReadFileOrDie(Runfile("testdata/kernels/libnn_kernels_gnu_hash.so"));
  const std::string blob = TestBlob(3000, 7);
  auto a = InjectBlobIntoElfImage(input_bytes, "lib.so", blob, "");
  auto b = InjectBlobIntoElfImage(input_bytes, "lib.so", blob, "");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  ASSERT_GT(a->size(), input_bytes.size());
  // File API with the same path for input and output.
  const std::string path = Path("in_place.so");
  WriteFileOrDie(path, input_bytes);
  ASSERT_TRUE(InjectBlobIntoSharedLibrary(path, blob, "", path).ok());
  EXPECT_EQ(ReadFileOrDie(path), *a);
  EXPECT_FALSE(FileExists(path + ".tmp." + std::to_string(::getpid())));
}

TEST_F(ElfBlobInjectorTest, FileRegionsOutsideThePatchesAreUntouched) {
  const std::string input = ReadFileOrDie(Runfile("testdata/kernels/libnn_kernels_gnu_hash.so"));
  auto out = InjectBlobIntoElfImage(input, "lib.so", TestBlob(500), "");
  ASSERT_TRUE(out.ok());
  auto before = ElfImage::Parse(reinterpret_cast<const uint8_t*>(input.data()), input.size(), "in");
  ASSERT_TRUE(before.ok());
  // Code, read-only data, writable data and debug sections keep their bytes and offsets.
  for (const char* name : {".text", ".rodata", ".data", ".eh_frame", ".rela.dyn", ".init_array", ".got", ".comment"}) {
    const ElfSection* s = before->FindSection(name);
    if (s == nullptr) continue;
    SCOPED_TRACE(name);
    EXPECT_EQ(out->compare(s->offset, s->size, input, s->offset, s->size), 0);
  }
}

TEST_F(ElfBlobInjectorTest, ProgramHeadersMoveIntoTheNewSegmentWhenTheyCannotGrow) {
  // Make the note after the program header table an ordinary section (PROGBITS): nothing may then
  // overwrite it, so the table moves to the start of the new segment (e_phoff changes).
  std::string bytes = ReadFileOrDie(Runfile("testdata/kernels/libnn_kernels_gnu_hash.so"));
  auto image = ElfImage::Parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "lib.so");
  ASSERT_TRUE(image.ok());
  const ElfSection* note = image->FindSection(".note.gnu.build-id");
  ASSERT_NE(note, nullptr);
  const uint32_t progbits = 1;
  std::memcpy(&bytes[note->header_offset + 4], &progbits, 4);
  const std::string input = Path("odd_layout.so");
  WriteFileOrDie(input, bytes);
  const std::string blob = TestBlob(4096 + 3);
  const std::string checksum = MakeBlobChecksumRecord(blob);
  BlobInjectionReport report;
  ASSERT_TRUE(InjectBlobIntoSharedLibrary(input, blob, checksum, Path("moved.so"), {}, &report).ok());
  EXPECT_FALSE(report.program_headers_in_place);
  EXPECT_TRUE(Contains(report.program_headers_moved_because, ".note.gnu.build-id"))
      << report.program_headers_moved_because;
  ElfW(Ehdr) header;
  const std::string out = ReadFileOrDie(Path("moved.so"));
  std::memcpy(&header, out.data(), sizeof(header));
  EXPECT_EQ(header.e_phoff, report.segment_offset);
  ExpectInjected(input, Path("moved.so"), blob, checksum, "sorun_relu");
}

TEST_F(ElfBlobInjectorTest, AlreadyPackedLibraryIsRefusedUnlessReplacing) {
  const std::string packed = Runfile("testdata/elf/libelf_test_blob.so");  // defines __tvm_dev_mblob
  const std::string blob = TestBlob(700);
  EXPECT_ERROR(InjectBlobIntoSharedLibrary(packed, blob, "", Path("x.so")), StatusCode::kAlreadyExists,
               "libelf_test_blob.so", "already packed", "__tvm_dev_mblob", "replace_existing");
  EXPECT_FALSE(FileExists(Path("x.so")));
  BlobInjectionOptions replace;
  replace.replace_existing = true;
  BlobInjectionReport report;
  ASSERT_TRUE(InjectBlobIntoSharedLibrary(packed, blob, "", Path("replaced.so"), replace, &report).ok());
  EXPECT_TRUE(report.replaced_existing);
  auto image = ElfImage::ReadFile(Path("replaced.so"));
  ASSERT_TRUE(image.ok());
  auto data = image->FindSymbolData("__tvm_dev_mblob");
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  ASSERT_EQ(data->size, blob.size());
  EXPECT_EQ(std::memcmp(data->data, blob.data(), blob.size()), 0);
  EXPECT_EQ(data->address % 64, 0u);
  // Retargeted, not duplicated: one entry in each table.
  int dynamic = 0, statics = 0;
  for (const ElfSymbol& s : image->dynamic_symbols()) dynamic += s.name == "__tvm_dev_mblob";
  for (const ElfSymbol& s : image->static_symbols()) statics += s.name == "__tvm_dev_mblob";
  EXPECT_EQ(dynamic, 1);
  EXPECT_EQ(statics, 1);
  void* handle = ::dlopen(Path("replaced.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  EXPECT_EQ(std::memcmp(::dlsym(handle, "__tvm_dev_mblob"), blob.data(), blob.size()), 0);
  ::dlclose(handle);

  // An injected library is "already packed" too; replacing its blob needs a new checksum record
  // when it carries one.
  const std::string first = Path("first.so");
  ASSERT_TRUE(InjectBlobIntoSharedLibrary(Runfile("testdata/kernels/libnn_kernels.so"), blob,
                                          MakeBlobChecksumRecord(blob), first)
                  .ok());
  const std::string second_blob = TestBlob(900, 2);
  EXPECT_ERROR(InjectBlobIntoSharedLibrary(first, second_blob, "", Path("y.so")), StatusCode::kAlreadyExists,
               "already packed");
  EXPECT_ERROR(InjectBlobIntoSharedLibrary(first, second_blob, "", Path("y.so"), replace), StatusCode::kInvalidArgument,
               "__sorun_blob_checksum", "checksum record");
  const std::string second_checksum = MakeBlobChecksumRecord(second_blob);
  ASSERT_TRUE(InjectBlobIntoSharedLibrary(first, second_blob, second_checksum, Path("second.so"), replace).ok());
  ExpectInjected(first, Path("second.so"), second_blob, second_checksum, "sorun_relu");
}

TEST_F(ElfBlobInjectorTest, BadArgumentsAreInvalidArgument) {
  const std::string lib = Runfile("testdata/kernels/libnn_kernels.so");
  EXPECT_ERROR(InjectBlobIntoSharedLibrary(lib, "short", "", Path("o.so")), StatusCode::kInvalidArgument,
               "8-byte length prefix");
  std::string blob = TestBlob(100);
  blob[0] = static_cast<char>(101);
  EXPECT_ERROR(InjectBlobIntoSharedLibrary(lib, blob, "", Path("o.so")), StatusCode::kInvalidArgument,
               "length prefix says 101 payload bytes but 100 follow");
  blob = TestBlob(100);
  EXPECT_ERROR(InjectBlobIntoSharedLibrary(lib, blob, std::string(31, 'x'), Path("o.so")), StatusCode::kInvalidArgument,
               "checksum record of 31 bytes");
  EXPECT_ERROR(InjectBlobIntoSharedLibrary(lib, blob, MakeBlobChecksumRecord(TestBlob(100, 9)), Path("o.so")),
               StatusCode::kInvalidArgument, "does not describe this blob");
  EXPECT_ERROR(InjectBlobIntoSharedLibrary(Path("missing.so"), blob, "", Path("o.so")), StatusCode::kNotFound,
               "missing.so");
  EXPECT_ERROR(InjectBlobIntoSharedLibrary(lib, blob, "", Path("no_such_dir/o.so")), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(FileExists(Path("o.so")));
}

TEST_F(ElfBlobInjectorTest, MalformedAndUnsupportedInputsAreRefusedWithTheReason) {
  const std::string blob = TestBlob(64);
  const std::string lib = ReadFileOrDie(Runfile("testdata/kernels/libnn_kernels_gnu_hash.so"));
  auto inject = [&](const std::string& bytes) {
    // An exact-size heap copy, so that AddressSanitizer sees any read past the end.
    std::unique_ptr<char[]> copy(new char[bytes.size() + 1]);
    std::memcpy(copy.get(), bytes.data(), bytes.size());
    return InjectBlobIntoElfImage(std::string_view(copy.get(), bytes.size()), "lib.so", blob, "").status();
  };
  EXPECT_ERROR(inject("#!/bin/sh\necho not an ELF file\n"), StatusCode::kDataLoss, "lib.so", "not an ELF file");
  EXPECT_ERROR(inject(""), StatusCode::kDataLoss, "not an ELF file");
  std::string elf32 = lib;
  elf32[EI_CLASS] = ELFCLASS32;
  EXPECT_ERROR(inject(elf32), StatusCode::kUnimplemented, "ELF32");
  std::string big_endian = lib;
  big_endian[EI_DATA] = ELFDATA2MSB;
  EXPECT_ERROR(inject(big_endian), StatusCode::kUnimplemented, "big-endian");
  for (size_t size : {size_t{10}, size_t{63}, size_t{64} + 100, lib.size() / 2, lib.size() - 1}) {
    SCOPED_TRACE(size);
    const Status s = inject(lib.substr(0, size));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.ToString();
    EXPECT_TRUE(Contains(s.message(), "truncated") || Contains(s.message(), "past the end of the file") ||
                Contains(s.message(), "remain in the file"))
        << s.ToString();
  }
  // Programs and objects are not shared libraries.
  EXPECT_ERROR(inject(ReadFileOrDie(Runfile("testdata/kernels/inject_main_exec"))), StatusCode::kInvalidArgument,
               "ET_EXEC", "not a shared library");
  EXPECT_ERROR(inject(ReadFileOrDie(Runfile("testdata/kernels/inject_main_pie"))), StatusCode::kInvalidArgument,
               "PT_INTERP", "executable");
  EXPECT_ERROR(inject(ReadFileOrDie(Runfile("testdata/elf/elf_test_blob.o"))), StatusCode::kInvalidArgument, "ET_REL",
               "not a shared library");
  // Another machine.
  std::string riscv32 = lib;
  riscv32[18] = 40;  // EM_ARM
  riscv32[19] = 0;
  EXPECT_ERROR(inject(riscv32), StatusCode::kUnimplemented, "e_machine 40", "x86-64, AArch64 and RISC-V");
  // No section headers (sstrip'ed).
  std::string no_sections = lib;
  std::memset(&no_sections[40], 0, 8);  // e_shoff
  std::memset(&no_sections[60], 0, 4);  // e_shnum, e_shstrndx
  EXPECT_ERROR(inject(no_sections), StatusCode::kUnimplemented, "no section header table");
  // No PT_DYNAMIC: retype it as PT_NULL.
  auto image = ElfImage::Parse(reinterpret_cast<const uint8_t*>(lib.data()), lib.size(), "lib.so");
  ASSERT_TRUE(image.ok());
  ElfW(Ehdr) eh;
  std::memcpy(&eh, lib.data(), sizeof(eh));
  auto phdr_type_offset = [&](uint32_t type) -> size_t {
    for (size_t i = 0; i < eh.e_phnum; ++i) {
      uint32_t t;
      std::memcpy(&t, &lib[eh.e_phoff + i * sizeof(ElfW(Phdr))], 4);
      if (t == type) return eh.e_phoff + i * sizeof(ElfW(Phdr));
    }
    return 0;
  };
  std::string no_dynamic = lib;
  const size_t dynamic_phdr = phdr_type_offset(PT_DYNAMIC);
  ASSERT_NE(dynamic_phdr, 0u);
  std::memset(&no_dynamic[dynamic_phdr], 0, 4);
  EXPECT_ERROR(inject(no_dynamic), StatusCode::kInvalidArgument, "no PT_DYNAMIC");
  // Dynamic entries: a prelinked library; no hash table; a DT_SYMTAB that is not .dynsym.
  ElfW(Phdr) dyn;
  std::memcpy(&dyn, &lib[dynamic_phdr], sizeof(dyn));
  // Every dynamic entry tagged `from_tag` retagged `to_tag`, its value moved by `add_to_value`.
  auto with_dynamic_entry = [&](int64_t from_tag, int64_t to_tag, int64_t add_to_value) {
    std::string b = lib;
    for (uint64_t off = dyn.p_offset; off + 16 <= dyn.p_offset + dyn.p_filesz; off += 16) {
      int64_t tag;
      std::memcpy(&tag, &b[off], 8);
      if (tag == from_tag) {
        std::memcpy(&b[off], &to_tag, 8);
        uint64_t value;
        std::memcpy(&value, &b[off + 8], 8);
        value += add_to_value;
        std::memcpy(&b[off + 8], &value, 8);
      }
    }
    return b;
  };
  EXPECT_ERROR(inject(with_dynamic_entry(DT_GNU_HASH, DT_GNU_PRELINKED, 0)), StatusCode::kUnimplemented, "prelinked");
  EXPECT_ERROR(inject(with_dynamic_entry(DT_GNU_HASH, DT_DEBUG, 0)), StatusCode::kUnimplemented,
               "neither DT_HASH nor DT_GNU_HASH");
  EXPECT_ERROR(inject(with_dynamic_entry(DT_SYMTAB, DT_SYMTAB, 24)), StatusCode::kUnimplemented, "DT_SYMTAB",
               ".dynsym");
  EXPECT_ERROR(inject(with_dynamic_entry(DT_STRSZ, DT_STRSZ, -1)), StatusCode::kUnimplemented, "DT_STRSZ");
  EXPECT_ERROR(inject(with_dynamic_entry(DT_NULL, DT_DEBUG, 0)), StatusCode::kDataLoss, "no DT_NULL");
  // A GNU hash table whose chains run past .dynsym: the section is not the whole symbol table.
  const ElfSection* dynsym = image->FindSection(".dynsym");
  ASSERT_NE(dynsym, nullptr);
  std::string short_dynsym = lib;
  const uint64_t fewer = dynsym->size - 24;
  std::memcpy(&short_dynsym[dynsym->header_offset + 32], &fewer, 8);
  if (const ElfSection* versym = image->FindSection(".gnu.version")) {  // one version index less too
    const uint64_t fewer_versions = versym->size - 2;
    std::memcpy(&short_dynsym[versym->header_offset + 32], &fewer_versions, 8);
  }
  EXPECT_ERROR(inject(short_dynsym), StatusCode::kDataLoss, "DT_GNU_HASH chain runs past");
}

// Random damage to the structures the injector reads: it must fail cleanly or produce a file our
// reader accepts (it re-parses its own output), never read out of bounds (run under ASan).
TEST_F(ElfBlobInjectorTest, RandomlyDamagedLibrariesNeverCrash) {
  const std::string lib = ReadFileOrDie(Runfile("testdata/kernels/libnn_kernels_versioned.so"));
  auto image = ElfImage::Parse(reinterpret_cast<const uint8_t*>(lib.data()), lib.size(), "lib.so");
  ASSERT_TRUE(image.ok());
  ElfW(Ehdr) eh;
  std::memcpy(&eh, lib.data(), sizeof(eh));
  // Where damage matters: headers, the first page (notes, hash tables, .dynsym, .dynstr, versions),
  // the dynamic section, the section header table.
  std::vector<std::pair<uint64_t, uint64_t>> regions = {{0, 4096}, {eh.e_shoff, uint64_t{eh.e_shnum} * 64}};
  if (const ElfSection* d = image->FindSection(".dynamic")) regions.push_back({d->offset, d->size});
  const std::string blob = TestBlob(200);
  const std::string checksum = MakeBlobChecksumRecord(blob);
  std::mt19937 rng(12345);
  int injected = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string bytes = lib;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const auto& region = regions[rng() % regions.size()];
      const uint64_t at = region.first + rng() % std::max<uint64_t>(region.second, 1);
      if (at >= bytes.size()) continue;
      switch (rng() % 3) {
        case 0: bytes[at] = static_cast<char>(rng() & 0xff); break;
        case 1: bytes[at] = static_cast<char>(bytes[at] ^ (1 << (rng() % 8))); break;
        default: bytes[at] = static_cast<char>(rng() % 2 ? 0 : 0xff); break;
      }
    }
    std::unique_ptr<char[]> copy(new char[bytes.size()]);
    std::memcpy(copy.get(), bytes.data(), bytes.size());
    auto out = InjectBlobIntoElfImage(std::string_view(copy.get(), bytes.size()), "damaged.so", blob, checksum);
    if (!out.ok()) {
      EXPECT_NE(out.status().code(), StatusCode::kInternal) << out.status().ToString();
      EXPECT_FALSE(out.status().message().empty());
      continue;
    }
    ++injected;
    auto reread = ElfImage::Parse(reinterpret_cast<const uint8_t*>(out->data()), out->size(), "out.so");
    ASSERT_TRUE(reread.ok()) << reread.status().ToString();
    auto data = reread->FindSymbolData("__tvm_dev_mblob");
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    EXPECT_EQ(std::memcmp(data->data, blob.data(), blob.size()), 0);
  }
  EXPECT_GT(injected, 100);  // most single-byte damage is in bytes the injector does not depend on
}

}  // namespace
}  // namespace sorun
