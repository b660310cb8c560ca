// The loader and the inspector bound `__tvm_dev_mblob` and `__sorun_blob_checksum` by the same rule
// (serialization/blob_extent.h): crafted copies of a real packed zoo model (testdata/models:mlp) whose
// dynamic symbol entries point outside the file, into .bss, carry a huge st_size, or have no size and
// a 2^40 length prefix are a clean DataLoss with the SAME message from `Load` (the dlopen'ed library)
// and from `ModelFile::Open` (the file's bytes, `sorun inspect`/`verify`), never a crash (the suite
// runs under ASan in CI). Also: a library whose section headers were stripped still has its blob found
// by the inspector (through PT_DYNAMIC) and loads and runs; the checksum option applies to `.tar`
// models and an explicit LoadOptions choice wins over SORUN_VERIFY_CHECKSUM.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "api/model_loading.h"
#include "graph_executor/graph_executable.h"
#include "inspect/elf_reader.h"
#include "inspect/model_file.h"
#include "inspect/model_inspector.h"
#include "runtime/data_type.h"
#include "serialization/blob_extent.h"
#include "serialization/loader.h"
#include "serialization/module_blob.h"
#include "tests/util/test_util.h"
#include "tools/cli/verify_command.h"
#include "tools/npy.h"

namespace sorun {
namespace {

std::string Zoo(const std::string& file) { return testing::Runfile("testdata/models/" + file); }

void PutU64(std::string* bytes, uint64_t at, uint64_t v) { std::memcpy(bytes->data() + at, &v, 8); }
uint64_t GetU64(const std::string& bytes, uint64_t at) {
  uint64_t v;
  std::memcpy(&v, bytes.data() + at, 8);
  return v;
}

// A copy of a real packed model and the facts needed to patch it.
class LoaderBoundsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_TRUE(Initialize().ok()); }
  void SetUp() override {
    dir_ = testing::MakeTempDir("loader_bounds");
    bytes_ = testing::ReadFileOrDie(Zoo("mlp.so"));
    auto image = ElfImage::Parse(reinterpret_cast<const uint8_t*>(bytes_.data()), bytes_.size(), "mlp.so");
    ASSERT_TRUE(image.ok()) << image.status().ToString();
    for (const ElfSymbol& s : image->dynamic_symbols()) {
      if (s.name == "__tvm_dev_mblob") blob_ = s;
      if (s.name == "__sorun_blob_checksum") record_ = s;
    }
    ASSERT_NE(blob_.entry_offset, 0u);
    ASSERT_NE(record_.entry_offset, 0u);
    segments_ = image->LoadSegments();
    auto blob = image->FindSymbolData("__tvm_dev_mblob");
    ASSERT_TRUE(blob.ok());
    blob_file_offset_ = blob->file_offset;
  }
  std::string Write(const std::string& name, const std::string& bytes) {
    std::string path = dir_ + "/" + name;
    testing::WriteFileOrDie(path, bytes);
    return path;
  }
  // Load (verifying the checksum) and the inspector must both fail with DataLoss and one message
  // that contains every string of `expected`.
  void ExpectSameDataLoss(const std::string& path, const std::vector<std::string>& expected) {
    LoadOptions verify;
    verify.verify_checksum = true;
    auto loaded = Load(path, verify);
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.status().code(), StatusCode::kDataLoss) << loaded.status().ToString();
    auto inspected = ModelFile::Open(path);
    ASSERT_FALSE(inspected.ok());
    EXPECT_EQ(inspected.status().code(), StatusCode::kDataLoss) << inspected.status().ToString();
    EXPECT_EQ(loaded.status().message(), inspected.status().message());
    for (const std::string& e : expected) {
      EXPECT_NE(loaded.status().message().find(e), std::string::npos) << e << " in " << loaded.status().message();
    }
    auto report = InspectModelFile(path);
    EXPECT_FALSE(report.ok());
  }
  const LoadSegment& WritableSegment() const {
    for (const LoadSegment& s : segments_) {
      if (s.memory_size > s.file_size) return s;
    }
    ADD_FAILURE() << "mlp.so has no segment with a .bss tail";
    return segments_.front();
  }

  std::string dir_;
  std::string bytes_;
  ElfSymbol blob_, record_;
  std::vector<LoadSegment> segments_;
  uint64_t blob_file_offset_ = 0;
};

TEST_F(LoaderBoundsTest, TheUnpatchedCopyLoadsAndInspects) {
  std::string path = Write("good.so", bytes_);
  LoadOptions verify;
  verify.verify_checksum = true;
  EXPECT_TRUE(Load(path, verify).ok());
  auto file = ModelFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_NE(file->blob(), nullptr);
  EXPECT_EQ(file->blob()->file_offset, blob_file_offset_);
  EXPECT_EQ(file->blob()->section, ".rodata");
}

TEST_F(LoaderBoundsTest, BlobAddressOutsideTheFile) {
  PutU64(&bytes_, blob_.entry_offset + 8, 0x7fff0000);
  ExpectSameDataLoss(Write("outside.so", bytes_),
                     {"outside.so: __tvm_dev_mblob at address 0x7fff0000 is outside the file-backed part of every "
                      "PT_LOAD segment"});
}

TEST_F(LoaderBoundsTest, BlobAddressInBss) {
  const LoadSegment& rw = WritableSegment();
  PutU64(&bytes_, blob_.entry_offset + 8, rw.vaddr + rw.file_size + 8);
  ExpectSameDataLoss(Write("bss.so", bytes_),
                     {"__tvm_dev_mblob at address", "zero-filled (.bss) part of PT_LOAD segment"});
}

TEST_F(LoaderBoundsTest, HugeBlobSize) {
  PutU64(&bytes_, blob_.entry_offset + 16, uint64_t{1} << 40);
  ExpectSameDataLoss(Write("huge.so", bytes_), {"__tvm_dev_mblob at address",
                                                "(st_size 1099511627776) runs past the "
                                                "end of PT_LOAD segment"});
}

TEST_F(LoaderBoundsTest, NoSizeAndA2To40Prefix) {
  PutU64(&bytes_, blob_.entry_offset + 16, 0);
  PutU64(&bytes_, blob_file_offset_, uint64_t{1} << 40);
  ExpectSameDataLoss(Write("prefix.so", bytes_), {"__tvm_dev_mblob (no st_size: bounded by the end of PT_LOAD segment",
                                                  "length prefix claims 1099511627776 payload bytes"});
}

TEST_F(LoaderBoundsTest, NoSizeIsBoundedByTheSegmentAndStillLoads) {
  PutU64(&bytes_, blob_.entry_offset + 16, 0);
  std::string path = Write("nosize.so", bytes_);
  auto model = Load(path);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto file = ModelFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_GT(file->blob()->size, 8 + file->payload_size() - 1);
}

TEST_F(LoaderBoundsTest, ChecksumRecordOutsideTheFile) {
  PutU64(&bytes_, record_.entry_offset + 8, 0x7fff0000);
  ExpectSameDataLoss(Write("rec_outside.so", bytes_),
                     {"__sorun_blob_checksum at address 0x7fff0000 is outside the file-backed part"});
}

TEST_F(LoaderBoundsTest, ChecksumRecordHugeSize) {
  PutU64(&bytes_, record_.entry_offset + 16, uint64_t{1} << 40);
  ExpectSameDataLoss(Write("rec_huge.so", bytes_), {"__sorun_blob_checksum at address", "runs past the end"});
}

TEST_F(LoaderBoundsTest, ChecksumRecordInBss) {
  const LoadSegment& rw = WritableSegment();
  PutU64(&bytes_, record_.entry_offset + 8, rw.vaddr + rw.file_size);
  ExpectSameDataLoss(Write("rec_bss.so", bytes_), {"__sorun_blob_checksum at address", "zero-filled (.bss)"});
}

TEST_F(LoaderBoundsTest, ChecksumRecordWithoutSizeAtTheSegmentEnd) {
  // 8 bytes before the end of the blob's (read-only) segment, no size: only 8 bytes may be read.
  const uint64_t blob_address = blob_.value;
  const LoadSegment* seg = nullptr;
  for (const LoadSegment& s : segments_) {
    if (blob_address >= s.vaddr && blob_address - s.vaddr < s.file_size) seg = &s;
  }
  ASSERT_NE(seg, nullptr);
  PutU64(&bytes_, record_.entry_offset + 8, seg->vaddr + seg->file_size - 8);
  PutU64(&bytes_, record_.entry_offset + 16, 0);
  std::string path = Write("rec_tail.so", bytes_);
  LoadOptions verify;
  verify.verify_checksum = true;
  auto loaded = Load(path, verify);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(loaded.status().message().find("__sorun_blob_checksum holds 8 bytes, expected 32"), std::string::npos)
      << loaded.status().message();
  auto verified = cli::VerifyModelFile(path);
  ASSERT_FALSE(verified.ok());
  EXPECT_NE(verified.status().message().find("__sorun_blob_checksum holds 8 bytes, expected 32"), std::string::npos)
      << verified.status().message();
}

// e_shoff / e_shnum / e_shstrndx zeroed, as `sstrip` leaves a library: dlopen still works.
std::string StripSectionHeaders(std::string bytes) {
  PutU64(&bytes, 40, 0);                 // e_shoff
  std::memset(bytes.data() + 58, 0, 6);  // e_shentsize, e_shnum, e_shstrndx
  return bytes;
}

TEST_F(LoaderBoundsTest, SectionStrippedModelIsInspectedLoadedAndRun) {
  std::string path = Write("sstripped.so", StripSectionHeaders(bytes_));
  auto image = ElfImage::ReadFile(path);
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  EXPECT_TRUE(image->sections().empty());
  auto blob = image->FindSymbolData("__tvm_dev_mblob");
  ASSERT_TRUE(blob.ok()) << blob.status().ToString();
  EXPECT_EQ(blob->table, "DT_SYMTAB");
  EXPECT_EQ(blob->file_offset, blob_file_offset_);
  auto report = InspectModelFile(path);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->kind, ArtifactKind::kPackedModel);
  EXPECT_TRUE(report->checksum.present);
  EXPECT_TRUE(report->checksum.valid) << report->checksum.error;
  EXPECT_GE(report->host_functions.size(), 3u);
  EXPECT_TRUE(cli::VerifyModelFile(path).ok());

  LoadOptions verify;
  verify.verify_checksum = true;
  auto model = Load(path, verify);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto exec = CreateExecutor(*model, {CpuDevice()});
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  auto input = ReadNpyFile(Zoo("mlp_input.npy"));
  auto expected = ReadNpyFile(Zoo("mlp_expected.npy"));
  ASSERT_TRUE(input.ok() && expected.ok());
  ASSERT_TRUE((*exec)->SetInput("data", *input->dl()).ok());
  ASSERT_TRUE((*exec)->Run().ok());
  auto info = (*exec)->OutputInfo()[0];
  auto out = Tensor::Empty(info.shape, info.dtype, CpuDevice());
  ASSERT_TRUE((*exec)->CopyOutputTo(0, *out->dl()).ok());
  ASSERT_EQ(out->num_elements(), expected->num_elements());
  for (int64_t i = 0; i < expected->num_elements(); ++i) {
    EXPECT_NEAR(out->data_as<float>()[i], expected->data_as<float>()[i], 1e-4) << i;
  }
}

TEST_F(LoaderBoundsTest, SectionStrippedModelWithABadBlobSymbolFailsTheSameWay) {
  PutU64(&bytes_, blob_.entry_offset + 16, uint64_t{1} << 40);
  ExpectSameDataLoss(Write("sstripped_huge.so", StripSectionHeaders(bytes_)), {"runs past the end of PT_LOAD segment"});
}

// Both hash styles give the symbol count of a section-stripped library: the same defined names as
// its .dynsym section.
TEST(ElfDynamicSegmentTest, StrippedLibrariesListTheSameDynamicSymbols) {
  for (const char* lib : {"libnn_kernels_sysv_hash.so", "libnn_kernels_gnu_hash.so", "libnn_kernels_both_hash.so"}) {
    std::string bytes = testing::ReadFileOrDie(testing::Runfile(std::string("testdata/kernels/") + lib));
    auto full = ElfImage::Parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), lib);
    ASSERT_TRUE(full.ok()) << full.status().ToString();
    std::string stripped_bytes = StripSectionHeaders(bytes);
    auto stripped =
        ElfImage::Parse(reinterpret_cast<const uint8_t*>(stripped_bytes.data()), stripped_bytes.size(), lib);
    ASSERT_TRUE(stripped.ok()) << lib << ": " << stripped.status().ToString();
    EXPECT_EQ(stripped->dynamic_symbols().size(), full->dynamic_symbols().size()) << lib;
    std::vector<std::string> a, b;
    for (const ElfSymbol& s : full->dynamic_symbols()) a.emplace_back(s.name);
    for (const ElfSymbol& s : stripped->dynamic_symbols()) b.emplace_back(s.name);
    EXPECT_EQ(a, b) << lib;
  }
}

// Malformed dynamic tables of a section-stripped library are DataLoss, never a wild read.
TEST(ElfDynamicSegmentTest, MalformedDynamicTablesAreDataLoss) {
  const std::string lib = "libnn_kernels_sysv_hash.so";
  std::string bytes = StripSectionHeaders(testing::ReadFileOrDie(testing::Runfile("testdata/kernels/" + lib)));
  // Find PT_DYNAMIC and the DT_HASH / DT_STRSZ entries.
  const uint64_t phoff = GetU64(bytes, 32);
  uint16_t phnum;
  std::memcpy(&phnum, bytes.data() + 56, 2);
  uint64_t dyn = 0, dyn_size = 0;
  for (uint16_t i = 0; i < phnum; ++i) {
    uint32_t type;
    std::memcpy(&type, bytes.data() + phoff + 56 * i, 4);
    if (type == 2) {
      dyn = GetU64(bytes, phoff + 56 * i + 8);
      dyn_size = GetU64(bytes, phoff + 56 * i + 32);
    }
  }
  ASSERT_NE(dyn, 0u);
  uint64_t strsz_at = 0, hash_vaddr = 0;
  for (uint64_t at = dyn; at + 16 <= dyn + dyn_size; at += 16) {
    const uint64_t tag = GetU64(bytes, at);
    if (tag == 10) strsz_at = at + 8;                  // DT_STRSZ
    if (tag == 4) hash_vaddr = GetU64(bytes, at + 8);  // DT_HASH
  }
  ASSERT_NE(strsz_at, 0u);
  ASSERT_NE(hash_vaddr, 0u);
  {
    std::string bad = bytes;
    PutU64(&bad, strsz_at, uint64_t{1} << 40);
    auto image = ElfImage::Parse(reinterpret_cast<const uint8_t*>(bad.data()), bad.size(), "strsz.so");
    ASSERT_FALSE(image.ok());
    EXPECT_EQ(image.status().code(), StatusCode::kDataLoss);
    EXPECT_NE(image.status().message().find("strsz.so: DT_STRTAB"), std::string::npos) << image.status().message();
  }
  {
    // nchain (the symbol count) far beyond the file. The hash table sits at the same file offset as
    // its address in this library's first segment (p_offset 0 = p_vaddr 0).
    std::string bad = bytes;
    const uint32_t huge = 0x7fffffff;
    std::memcpy(bad.data() + hash_vaddr + 4, &huge, 4);
    auto image = ElfImage::Parse(reinterpret_cast<const uint8_t*>(bad.data()), bad.size(), "nchain.so");
    ASSERT_FALSE(image.ok());
    EXPECT_EQ(image.status().code(), StatusCode::kDataLoss);
    EXPECT_NE(image.status().message().find("DT_SYMTAB at address"), std::string::npos) << image.status().message();
  }
}

// The one rule, on synthetic facts.
TEST(BoundSymbolBytesTest, TheRule) {
  std::vector<uint8_t> mem(64, 0);
  LoadSegment seg;
  seg.index = 3;
  seg.vaddr = 0x1000;
  seg.file_size = 64;
  seg.memory_size = 128;
  seg.readable = true;
  seg.bytes = mem.data();
  std::vector<LoadSegment> segs = {seg};
  auto ok = BoundSymbolBytes("s", 0x1010, 0, segs);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->bytes, 48u);
  EXPECT_EQ(ok->data, mem.data() + 16);
  EXPECT_EQ(BoundSymbolBytes("s", 0x1010, 48, segs)->bytes, 48u);
  EXPECT_NE(BoundSymbolBytes("s", 0x1010, 49, segs).status().message().find("runs past"), std::string::npos);
  EXPECT_NE(BoundSymbolBytes("s", 0x1040, 1, segs).status().message().find(".bss"), std::string::npos);
  EXPECT_NE(BoundSymbolBytes("s", 0x2000, 1, segs).status().message().find("outside"), std::string::npos);
  EXPECT_NE(BoundSymbolBytes("s", UINT64_MAX, UINT64_MAX, segs).status().message().find("outside"), std::string::npos);
  segs[0].readable = false;
  EXPECT_NE(BoundSymbolBytes("s", 0x1010, 1, segs).status().message().find("not readable"), std::string::npos);
  EXPECT_FALSE(BoundSymbolBytes("s", 0x1010, 1, {}).ok());
}

// LoadOptions::verify_checksum: an explicit choice wins over SORUN_VERIFY_CHECKSUM; unset, the
// environment decides; neither: off.
TEST(ChecksumOptionTest, ExplicitChoiceWinsOverTheEnvironment) {
  LoadOptions unset, on, off;
  on.verify_checksum = true;
  off.verify_checksum = false;
  unsetenv("SORUN_VERIFY_CHECKSUM");
  EXPECT_FALSE(*ResolveVerifyChecksum(unset));
  setenv("SORUN_VERIFY_CHECKSUM", "1", 1);
  EXPECT_TRUE(*ResolveVerifyChecksum(unset));
  EXPECT_FALSE(*ResolveVerifyChecksum(off));
  setenv("SORUN_VERIFY_CHECKSUM", "0", 1);
  EXPECT_FALSE(*ResolveVerifyChecksum(unset));
  EXPECT_TRUE(*ResolveVerifyChecksum(on));
  setenv("SORUN_VERIFY_CHECKSUM", "yes", 1);
  EXPECT_EQ(ResolveVerifyChecksum(unset).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(*ResolveVerifyChecksum(on));  // an explicit choice does not read the environment
  unsetenv("SORUN_VERIFY_CHECKSUM");
}

// A .tar export carries the record in its devc.o: a corrupted blob is caught when asked.
TEST(ChecksumOptionTest, TarModelsAreVerifiedToo) {
  ASSERT_TRUE(Initialize().ok());
  const std::string tar = Zoo("cnn_tar.tar");
  auto file = ModelFile::Open(tar);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_NE(file->checksum(), nullptr) << "the packer writes the record into the archive's devc.o";
  // Flip one byte in the middle of the payload (the cnn's weights) inside an uncompressed archive.
  std::string bytes = testing::ReadFileOrDie(tar);
  std::string dir = testing::MakeTempDir("tar_crc");
  const uint8_t* data = file->blob()->data;
  const uint64_t mid = 8 + file->payload_size() / 2;
  const std::string needle(reinterpret_cast<const char*>(data) + mid - 32, 64);
  size_t at = bytes.find(needle);
  ASSERT_NE(at, std::string::npos) << "the zoo's cnn_tar.tar is an uncompressed ustar archive";
  bytes[at + 32] ^= 0x5a;
  const std::string bad = dir + "/bad.tar";
  testing::WriteFileOrDie(bad, bytes);
  LoadOptions verify;
  verify.verify_checksum = true;
  auto loaded = Load(bad, verify);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(loaded.status().message().find("blob checksum mismatch"), std::string::npos) << loaded.status().message();
  EXPECT_NE(loaded.status().message().find("bad.tar"), std::string::npos) << loaded.status().message();
  LoadOptions skip;
  skip.verify_checksum = false;
  auto skipped = Load(bad, skip);
  EXPECT_TRUE(skipped.ok() || skipped.status().message().find("checksum mismatch") == std::string::npos)
      << skipped.status().ToString();
}

}  // namespace
}  // namespace sorun
