// packer/relax_pack + relax_realign on the real TVM 0.27 and 0.16 exports (testdata/relax/*.so): after
// PackRelaxLibrary every tensor constant's data is 64-byte aligned in the file (symbol file offset +
// data offset, from the ELF) and once dlopen'ed (dlsym address + data offset); the bytecode is the same
// modulo constant renumbering (instruction count, words, disassembly with the constant map applied);
// the checksum record describes the new blob; packing twice adds nothing; non-Relax and malformed
// inputs are refused with messages naming the file and the cause. Legacy containers (TVM 0.16 - 0.21,
// enum tags, V2 scope maps) are realigned from hand-assembled fixtures.
#include "packer/relax_pack.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "inspect/elf_reader.h"
#include "packer/elf_blob_injector.h"
#include "packer/relax_realign.h"
#include "relax/vm_disassembler.h"
#include "runtime/registry_keys.h"
#include "runtime/tensor_io.h"
#include "serialization/blob_checksum.h"
#include "tests/relax/relax_fixtures.h"
#include "tests/util/host_build.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace relax {
namespace {

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

std::string Model(const std::string& name) { return sorun::testing::Runfile("testdata/relax/" + name + ".so"); }

// A Relax export's blob as the ELF file holds it, and its parsed executable.
struct FileExecutable {
  std::string symbol_name;
  ElfSymbolData symbol;
  VmExecutable exec;
};

FileExecutable ReadExecutable(const ElfImage& image) {
  FileExecutable f;
  f.symbol_name =
      image.HasSymbol(keys::kSymbolFfiLibraryBinV22) ? keys::kSymbolFfiLibraryBinV22 : keys::kSymbolDevMblob;
  auto data = image.FindSymbolData(f.symbol_name);
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  f.symbol = *data;
  auto blob = ParseLibraryBlob(f.symbol.data, f.symbol.size, f.symbol_name);
  EXPECT_TRUE(blob.ok()) << blob.status().ToString();
  auto root = RootExecutable(*blob);
  EXPECT_TRUE(root.ok());
  const ConstantTagDialect dialect =
      UsesFfiConstantTags(blob->generation) ? ConstantTagDialect::kFfiTypeIndex : ConstantTagDialect::kLegacyEnum;
  auto exec =
      ParseVmExecutable((*root)->payload, (*root)->payload_size, dialect, (*root)->type_key, (*root)->payload_offset);
  EXPECT_TRUE(exec.ok()) << exec.status().ToString();
  f.exec = *exec;
  return f;
}

// File offsets (mod 64) of the tensor constants' data: symbol file offset + offset in the symbol.
std::vector<uint64_t> TensorFileOffsetsMod64(const FileExecutable& f) {
  std::vector<uint64_t> out;
  for (const VmConstant& c : f.exec.constants) {
    if (c.kind == VmConstantKind::kTensor) out.push_back((f.symbol.file_offset + c.data_offset) % 64);
  }
  return out;
}

// Old constant index -> new one: the packed pool is the old one with pads inserted.
std::map<int64_t, int64_t> ConstantMap(const VmExecutable& before, const VmExecutable& after) {
  std::map<int64_t, int64_t> map;
  int64_t old_index = 0;
  for (size_t i = 0; i < after.constants.size(); ++i) {
    if (IsVmAlignmentPad(after.constants[i])) continue;
    map[old_index++] = static_cast<int64_t>(i);
  }
  EXPECT_EQ(old_index, static_cast<int64_t>(before.constants.size()));
  return map;
}

class RelaxPackTest : public ::testing::TestWithParam<const char*> {};

TEST_P(RelaxPackTest, AlignsEveryTensorInTheFileAndKeepsTheBytecode) {
  const std::string in = Model(GetParam());
  const std::string out = sorun::testing::MakeTempDir() + "/packed.so";
  auto report = PackRelaxLibrary(in, out);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const bool legacy = std::string(GetParam()) == "legacy_mlp";
  EXPECT_EQ(report->blob_symbol, legacy ? keys::kSymbolDevMblob : keys::kSymbolFfiLibraryBinV22);
  EXPECT_EQ(report->generation, legacy ? BlobGeneration::kLegacyDevMblob : BlobGeneration::kFfiTreeFirst);

  auto before_image = ElfImage::ReadFile(in);
  auto after_image = ElfImage::ReadFile(out);
  ASSERT_TRUE(before_image.ok() && after_image.ok());
  const FileExecutable before = ReadExecutable(*before_image);
  const FileExecutable after = ReadExecutable(*after_image);

  // Alignment: TVM's own layout leaves some tensors unaligned; after packing none is.
  const std::vector<uint64_t> mod_before = TensorFileOffsetsMod64(before);
  const std::vector<uint64_t> mod_after = TensorFileOffsetsMod64(after);
  ASSERT_EQ(mod_before.size(), mod_after.size());
  if (!mod_before.empty()) {  // tir_par has no tensor constant
    EXPECT_NE(std::count(mod_before.begin(), mod_before.end(), 0u), static_cast<long>(mod_before.size()));
  }
  for (uint64_t m : mod_after) EXPECT_EQ(m, 0u);
  EXPECT_EQ(after.symbol.file_offset, report->blob_file_offset);
  EXPECT_EQ(report->realign.tensor_constants, mod_before.size());
  EXPECT_EQ(report->realign.aligned_after, mod_before.size());
  EXPECT_EQ(report->new_blob_bytes - report->old_blob_bytes, report->realign.bytes_added);
  EXPECT_EQ(after.exec.constants.size() - before.exec.constants.size(), report->realign.pads_added);

  // The bytecode: same instructions and words, constants renumbered.
  ASSERT_EQ(before.exec.instructions.size(), after.exec.instructions.size());
  ASSERT_EQ(before.exec.instr_offset, after.exec.instr_offset);
  const std::map<int64_t, int64_t> map = ConstantMap(before.exec, after.exec);
  for (const auto& [old_index, new_index] : map) {
    const VmConstant& a = before.exec.constants[static_cast<size_t>(old_index)];
    const VmConstant& b = after.exec.constants[static_cast<size_t>(new_index)];
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.str, b.str);
    EXPECT_EQ(a.shape, b.shape);
    ASSERT_EQ(a.data_bytes, b.data_bytes);
    if (a.data_bytes) {
      EXPECT_EQ(0, std::memcmp(a.data, b.data, a.data_bytes));
    }
  }
  for (size_t pc = 0; pc < before.exec.instructions.size(); ++pc) {
    VmInstruction expected = before.exec.instructions[pc];
    for (VmArg& arg : expected.args) {
      if (arg.kind == VmArgKind::kConstIdx) arg.value = map.at(arg.value);
    }
    EXPECT_EQ(FormatInstruction(after.exec, after.exec.instructions[pc]), FormatInstruction(after.exec, expected))
        << "instruction " << pc << " was " << FormatInstruction(before.exec, before.exec.instructions[pc]);
  }
  for (size_t f = 0; f < before.exec.functions.size(); ++f) {
    EXPECT_EQ(before.exec.functions[f].name, after.exec.functions[f].name);
  }

  // The checksum record describes exactly the new blob symbol (8 + payload bytes).
  auto record = after_image->FindSymbolData(keys::kSymbolBlobChecksum);
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  EXPECT_TRUE(VerifyBlobChecksum(after.symbol.data, after.symbol.size, record->data, record->size).ok());
}

TEST_P(RelaxPackTest, AlignedOnceLoaded) {
  // dlopen needs this machine's build: on aarch64 the TVM 0.27 exports' aarch64 builds (TVM 0.16's are
  // x86-64 only).
  const std::string in =
      sorun::testing::Runfile(sorun::testing::HostBuild(std::string("testdata/relax/") + GetParam() + ".so"));
  SORUN_SKIP_IF_FOREIGN_BUILD(in);
  const std::string out = sorun::testing::MakeTempDir() + "/packed.so";
  ASSERT_TRUE(PackRelaxLibrary(in, out).ok());
  auto image = ElfImage::ReadFile(out);
  ASSERT_TRUE(image.ok());
  const FileExecutable file = ReadExecutable(*image);
  // Real dlopen: the kernels' one import (TVMFFIErrorSetRaisedFromCStrParts) binds lazily, never
  // called here; no kernel runs.
  void* handle = ::dlopen(out.c_str(), RTLD_LAZY | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  const auto* mapped = static_cast<const uint8_t*>(::dlsym(handle, file.symbol_name.c_str()));
  ASSERT_NE(mapped, nullptr);
  EXPECT_EQ(0, std::memcmp(mapped, file.symbol.data, file.symbol.size));
  for (const VmConstant& c : file.exec.constants) {
    if (c.kind == VmConstantKind::kTensor) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(mapped + c.data_offset) % 64, 0u);
    }
  }
  const void* record = ::dlsym(handle, keys::kSymbolBlobChecksum);
  ASSERT_NE(record, nullptr);
  EXPECT_TRUE(VerifyBlobChecksum(mapped, file.symbol.size, record, kBlobChecksumRecordBytes).ok());
  ::dlclose(handle);
}

TEST_P(RelaxPackTest, PackingTwiceIsStable) {
  const std::string dir = sorun::testing::MakeTempDir();
  auto first = PackRelaxLibrary(Model(GetParam()), dir + "/once.so");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = PackRelaxLibrary(dir + "/once.so", dir + "/twice.so");
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->realign.pads_added, 0u);
  EXPECT_EQ(second->realign.bytes_added, 0u);
  EXPECT_EQ(second->realign.aligned_before, second->realign.tensor_constants);
  auto once = ElfImage::ReadFile(dir + "/once.so");
  auto twice = ElfImage::ReadFile(dir + "/twice.so");
  ASSERT_TRUE(once.ok() && twice.ok());
  const FileExecutable a = ReadExecutable(*once), b = ReadExecutable(*twice);
  ASSERT_EQ(a.symbol.size, b.symbol.size);
  EXPECT_EQ(0, std::memcmp(a.symbol.data, b.symbol.data, a.symbol.size));
  for (uint64_t m : TensorFileOffsetsMod64(b)) EXPECT_EQ(m, 0u);
}

INSTANTIATE_TEST_SUITE_P(RealExports, RelaxPackTest,
                         ::testing::Values("mlp", "dyn_batch", "cnn", "tir_par", "legacy_mlp"));

TEST(RelaxPackErrorsTest, NonRelaxLibrariesAreRefused) {
  const std::string dir = sorun::testing::MakeTempDir();
  const std::string kernels = sorun::testing::Runfile("testdata/kernels/libnn_kernels.so");
  // A library with no blob at all.
  EXPECT_ERROR(PackRelaxLibrary(kernels, dir + "/a.so").status(), StatusCode::kInvalidArgument, "libnn_kernels.so",
               "not a Relax VM export", "defines none of", keys::kSymbolFfiLibraryBinV22);
  // A graph-executor model: its __tvm_dev_mblob is rooted at a GraphExecutorFactory (injected for real).
  const std::string graph_blob = testing::WrapLegacy("not a relax payload", "GraphExecutorFactory");
  ASSERT_TRUE(InjectBlobIntoSharedLibrary(kernels, graph_blob, "", dir + "/graph.so").ok());
  EXPECT_ERROR(PackRelaxLibrary(dir + "/graph.so", dir + "/b.so").status(), StatusCode::kInvalidArgument, "graph.so",
               "not a Relax VM export", "root module 0 is 'GraphExecutorFactory'");
  auto is_relax = IsRelaxExport(dir + "/graph.so");
  ASSERT_TRUE(is_relax.ok()) << is_relax.status().ToString();
  EXPECT_FALSE(*is_relax);
  is_relax = IsRelaxExport(Model("mlp"));
  ASSERT_TRUE(is_relax.ok());
  EXPECT_TRUE(*is_relax);
  // Not ELF.
  sorun::testing::WriteFileOrDie(dir + "/text.so", "not an ELF file at all, just text");
  EXPECT_ERROR(PackRelaxLibrary(dir + "/text.so", dir + "/c.so").status(), StatusCode::kDataLoss, "text.so");
  EXPECT_FALSE(sorun::testing::FileExists(dir + "/c.so"));
  // A blob symbol too short for its container (the ELF reader tests' library: 4 bytes of 0xdeadbeef).
  EXPECT_ERROR(PackRelaxLibrary(sorun::testing::Runfile("testdata/elf/libelf_test_blob.so"), dir + "/d.so").status(),
               StatusCode::kDataLoss, "libelf_test_blob.so", keys::kSymbolFfiLibraryBin);
}

TEST(RelaxPackErrorsTest, MalformedExecutableIsDataLossNamingTheSpot) {
  const std::string dir = sorun::testing::MakeTempDir();
  std::string bytes = sorun::testing::ReadFileOrDie(Model("mlp"));
  auto image = ElfImage::ReadFile(Model("mlp"));
  ASSERT_TRUE(image.ok());
  const FileExecutable f = ReadExecutable(*image);
  // The executable's version string "0.14" -> "0.15" (TVM refuses any other version too).
  const size_t at = bytes.find("0.14", static_cast<size_t>(f.symbol.file_offset));
  ASSERT_NE(at, std::string::npos);
  bytes[at + 3] = '5';
  sorun::testing::WriteFileOrDie(dir + "/bad.so", bytes);
  auto status = PackRelaxLibrary(dir + "/bad.so", dir + "/out.so").status();
  EXPECT_ERROR(status, StatusCode::kDataLoss, "bad.so", "version '0.15'", "byte");
  EXPECT_FALSE(sorun::testing::FileExists(dir + "/out.so"));
  EXPECT_TRUE(IsRelaxExport(dir + "/bad.so").ok());  // the container is fine; the executable is not
}

// Legacy containers (TVM 0.16 - 0.21) keep their generation; V2 scope maps follow the renumbering.
TEST(RelaxRealignTest, LegacyContainersAndScopeMaps) {
  for (bool ffi_tags : {false, true}) {
    const char* symbol = ffi_tags ? keys::kSymbolFfiLibraryBin : keys::kSymbolDevMblob;
    SCOPED_TRACE(symbol);
    const std::string payload = testing::FixtureExecutable::Small(ffi_tags, /*v2=*/true).Serialize();
    const std::string blob = testing::WrapLegacy(payload);
    auto realigned = RealignLibraryBlob(Bytes(blob), blob.size(), symbol);
    ASSERT_TRUE(realigned.ok()) << realigned.status().ToString();
    EXPECT_EQ(realigned->generation, ffi_tags ? BlobGeneration::kFfiLegacy021 : BlobGeneration::kLegacyDevMblob);
    auto parsed = ParseLibraryBlob(Bytes(realigned->blob), realigned->blob.size(), symbol);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    auto root = RootExecutable(*parsed);
    ASSERT_TRUE(root.ok());
    const ConstantTagDialect dialect = ffi_tags ? ConstantTagDialect::kFfiTypeIndex : ConstantTagDialect::kLegacyEnum;
    auto exec = ParseVmExecutable((*root)->payload, (*root)->payload_size, dialect, "x", (*root)->payload_offset);
    ASSERT_TRUE(exec.ok()) << exec.status().ToString();
    // The fixture's tensor (old c[2]) and its scope entry moved together.
    ASSERT_EQ(exec->scopes.size(), 1u);
    const VmConstant& scoped = exec->constants[static_cast<size_t>(exec->scopes[0].const_index)];
    EXPECT_EQ(scoped.kind, VmConstantKind::kTensor);
    EXPECT_EQ(scoped.data_offset % 64, 0u);
    EXPECT_EQ(realigned->report.aligned_after, 1u);
    // The rest of the container (the "_lib" entry and the import tree) is unchanged.
    const std::string tail_before = blob.substr(blob.size() - 60);
    EXPECT_EQ(realigned->blob.substr(realigned->blob.size() - 60), tail_before);
  }
}

TEST(RelaxRealignTest, CompiledModeIsRefused) {
  auto fixture = testing::FixtureExecutable::Small(true, false);
  fixture.functions.push_back({2, "__vmtir__main"});
  const std::string payload = fixture.Serialize();
  auto exec = ParseVmExecutable(Bytes(payload), payload.size(), ConstantTagDialect::kFfiTypeIndex);
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  EXPECT_ERROR(RealignVmConstants(*exec, ConstantTagDialect::kFfiTypeIndex, 0).status(), StatusCode::kUnimplemented,
               "__vmtir__main", "compiled");
}

}  // namespace
}  // namespace relax
}  // namespace sorun
