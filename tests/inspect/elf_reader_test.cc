#include "inspect/elf_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using ::sorun::testing::MakeTempDir;
using ::sorun::testing::ReadFileOrDie;
using ::sorun::testing::Runfile;

const char kLibrary[] = "testdata/elf/libelf_test_blob.so";
const char kStripped[] = "testdata/elf/libelf_test_blob_stripped.so";
const char kObject[] = "testdata/elf/elf_test_blob.o";

// Byte i of __tvm_dev_mblob in testdata/elf/elf_test_blob.c.
uint8_t BlobByte(size_t i) { return static_cast<uint8_t>(i * 37 + 11); }

using ::sorun::testing::Contains;

// Little-endian field access for mutating file images.
void Put16(std::string* b, uint64_t off, uint16_t v) { std::memcpy(&(*b)[off], &v, 2); }
void Put32(std::string* b, uint64_t off, uint32_t v) { std::memcpy(&(*b)[off], &v, 4); }
void Put64(std::string* b, uint64_t off, uint64_t v) { std::memcpy(&(*b)[off], &v, 8); }
uint64_t Get64(const std::string& b, uint64_t off) {
  uint64_t v;
  std::memcpy(&v, &b[off], 8);
  return v;
}

// Parses a heap copy of exactly `size` bytes, so that AddressSanitizer sees any read past the end, and
// on success exercises every accessor while the copy is alive (none may read outside it).
Status ParseExact(const std::string& bytes, size_t size, const std::string& name = "lib.so") {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[size == 0 ? 1 : size]);
  std::memcpy(copy.get(), bytes.data(), size);
  StatusOr<ElfImage> image = ElfImage::Parse(copy.get(), size, name);
  if (!image.ok()) return image.status();
  for (const char* symbol : {"__tvm_dev_mblob", "__tvm_module_ctx", "sorun_data_value", "puts", "sorun_absolute_symbol",
                             "sorun_tls_value", "sorun_hidden_blob", ""}) {
    StatusOr<ElfSymbolData> data = image->FindSymbolData(symbol);
    if (data.ok() && data->size > 0) {
      EXPECT_GE(data->data, copy.get());
      EXPECT_LE(data->data + data->size, copy.get() + size);
      volatile uint8_t sink = data->data[0] ^ data->data[data->size - 1];
      (void)sink;
    }
    (void)image->HasSymbol(symbol);
  }
  (void)image->DefinedSymbolNames("__tvm");
  (void)image->MachineName();
  return Status::Ok();
}

Status ParseStatus(const std::string& bytes, const std::string& name = "lib.so") {
  return ParseExact(bytes, bytes.size(), name);
}

class ElfReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    library_ = ReadFileOrDie(Runfile(kLibrary));
    stripped_ = ReadFileOrDie(Runfile(kStripped));
    object_ = ReadFileOrDie(Runfile(kObject));
    auto image = ElfImage::Parse(Bytes(library_), library_.size(), "libelf_test_blob.so");
    ASSERT_TRUE(image.ok()) << image.status().ToString();
    image_ = std::move(image).value();
  }

  static const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

  const ElfSection& Section(const std::string& name) const {
    const ElfSection* s = image_.FindSection(name);
    EXPECT_NE(s, nullptr) << name;
    return s != nullptr ? *s : image_.sections()[0];
  }

  const ElfSymbol& DynamicSymbol(const std::string& name) const {
    for (const ElfSymbol& s : image_.dynamic_symbols()) {
      if (s.name == name) return s;
    }
    ADD_FAILURE() << "no .dynsym entry " << name;
    return image_.dynamic_symbols()[0];
  }

  std::string library_;
  std::string stripped_;
  std::string object_;
  ElfImage image_;
};

// ---------------------------------------------------------------------------------------------------
// Reading real files.

TEST_F(ElfReaderTest, FindsTheBlobBytesInASharedLibrary) {
  EXPECT_EQ(image_.type(), ET_DYN);
#if defined(__x86_64__)
  EXPECT_EQ(image_.machine(), EM_X86_64);
  EXPECT_EQ(image_.MachineName(), "x86_64");
#elif defined(__aarch64__)
  EXPECT_EQ(image_.machine(), EM_AARCH64);
  EXPECT_EQ(image_.MachineName(), "aarch64");
#endif
  auto blob = image_.FindSymbolData("__tvm_dev_mblob");
  ASSERT_TRUE(blob.ok()) << blob.status().ToString();
  EXPECT_EQ(blob->name, "__tvm_dev_mblob");
  EXPECT_EQ(blob->section, ".rodata");
  EXPECT_EQ(blob->table, ".dynsym");
  ASSERT_EQ(blob->size, 256u);
  EXPECT_EQ(blob->data, Bytes(library_) + blob->file_offset);
  for (size_t i = 0; i < 256; ++i) ASSERT_EQ(blob->data[i], BlobByte(i)) << "byte " << i;
  EXPECT_TRUE(image_.HasSymbol("__tvm_dev_mblob"));
}

TEST_F(ElfReaderTest, MapsVirtualAddressesThroughTheContainingSection) {
  // .data is mapped at a different address than its file offset in this library.
  auto value = image_.FindSymbolData("sorun_data_value");
  ASSERT_TRUE(value.ok()) << value.status().ToString();
  const ElfSection& data = Section(".data");
  EXPECT_EQ(value->section, ".data");
  EXPECT_EQ(value->file_offset, data.offset + (value->address - data.addr));
  ASSERT_EQ(value->size, 4u);
  uint32_t v;
  std::memcpy(&v, value->data, 4);
  EXPECT_EQ(v, 0x12345678u);

  auto ffi = image_.FindSymbolData("__tvm_ffi_library_bin");
  ASSERT_TRUE(ffi.ok()) << ffi.status().ToString();
  ASSERT_EQ(ffi->size, 4u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(ffi->data), 4), "\xde\xad\xbe\xef");
}

TEST_F(ElfReaderTest, ReadFileMapsTheFile) {
  auto image = ElfImage::ReadFile(Runfile(kLibrary));
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  EXPECT_TRUE(static_cast<bool>(image->owner()));
  ElfImage copy = *image;  // copies share the mapping
  image = StatusOr<ElfImage>(Internal("drop"));
  auto blob = copy.FindSymbolData("__tvm_dev_mblob");
  ASSERT_TRUE(blob.ok()) << blob.status().ToString();
  for (size_t i = 0; i < blob->size; ++i) ASSERT_EQ(blob->data[i], BlobByte(i));
  EXPECT_EQ(copy.file_name(), Runfile(kLibrary));
}

TEST_F(ElfReaderTest, ReadFileReportsMissingFilesAndDirectories) {
  EXPECT_ERROR(ElfImage::ReadFile("/nonexistent/lib.so").status(), StatusCode::kNotFound, "/nonexistent/lib.so");
  std::string dir = MakeTempDir("elf");
  EXPECT_ERROR(ElfImage::ReadFile(dir).status(), StatusCode::kInvalidArgument, "not a regular file");
  std::string empty = dir + "/empty.so";
  ::sorun::testing::WriteFileOrDie(empty, "");
  EXPECT_ERROR(ElfImage::ReadFile(empty).status(), StatusCode::kDataLoss, "empty.so", "not an ELF file");
}

TEST_F(ElfReaderTest, SymbolInBssHasNoBytes) {
  EXPECT_TRUE(image_.HasSymbol("__tvm_module_ctx"));
  EXPECT_ERROR(image_.FindSymbolData("__tvm_module_ctx").status(), StatusCode::kFailedPrecondition,
               "libelf_test_blob.so", "__tvm_module_ctx", ".bss", "SHT_NOBITS", ".dynsym symbol");
  // A tentative definition ends up in .bss of the library too.
  EXPECT_ERROR(image_.FindSymbolData("sorun_common_value").status(), StatusCode::kFailedPrecondition, ".bss");
}

TEST_F(ElfReaderTest, UndefinedAbsoluteAndThreadLocalSymbolsAreErrors) {
  EXPECT_FALSE(image_.HasSymbol("puts"));  // imported, not defined
  EXPECT_ERROR(image_.FindSymbolData("puts").status(), StatusCode::kFailedPrecondition, "'puts'", "SHN_UNDEF");
  EXPECT_TRUE(image_.HasSymbol("sorun_absolute_symbol"));
  EXPECT_ERROR(image_.FindSymbolData("sorun_absolute_symbol").status(), StatusCode::kFailedPrecondition, "SHN_ABS");
  EXPECT_ERROR(image_.FindSymbolData("sorun_tls_value").status(), StatusCode::kUnimplemented, "STT_TLS");
}

TEST_F(ElfReaderTest, MissingSymbolIsNotFound) {
  EXPECT_FALSE(image_.HasSymbol("__tvm_no_such_symbol"));
  EXPECT_ERROR(image_.FindSymbolData("__tvm_no_such_symbol").status(), StatusCode::kNotFound, "libelf_test_blob.so",
               "'__tvm_no_such_symbol'");
  EXPECT_ERROR(image_.FindSymbolData("").status(), StatusCode::kInvalidArgument, "empty symbol name");
  EXPECT_FALSE(image_.HasSymbol(""));
}

TEST_F(ElfReaderTest, LocalSymbolsComeFromSymtab) {
  ASSERT_FALSE(image_.static_symbols().empty());
  auto hidden = image_.FindSymbolData("sorun_hidden_blob");
  ASSERT_TRUE(hidden.ok()) << hidden.status().ToString();
  EXPECT_EQ(hidden->table, ".symtab");
  ASSERT_EQ(hidden->size, 8u);
  for (uint8_t i = 0; i < 8; ++i) EXPECT_EQ(hidden->data[i], i + 1);
}

TEST_F(ElfReaderTest, StrippedLibraryStillHasDynsym) {
  auto image = ElfImage::Parse(Bytes(stripped_), stripped_.size(), "stripped.so");
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  EXPECT_EQ(image->FindSection(".symtab"), nullptr);
  EXPECT_TRUE(image->static_symbols().empty());
  EXPECT_FALSE(image->dynamic_symbols().empty());
  auto blob = image->FindSymbolData("__tvm_dev_mblob");
  ASSERT_TRUE(blob.ok()) << blob.status().ToString();
  EXPECT_EQ(blob->table, ".dynsym");
  ASSERT_EQ(blob->size, 256u);
  for (size_t i = 0; i < 256; ++i) ASSERT_EQ(blob->data[i], BlobByte(i));
  EXPECT_ERROR(image->FindSymbolData("sorun_hidden_blob").status(), StatusCode::kNotFound, "sorun_hidden_blob");
}

TEST_F(ElfReaderTest, ListsDefinedSymbolsByPrefix) {
  EXPECT_EQ(image_.DefinedSymbolNames("__tvm_"), (std::vector<std::string>{"__tvm_dev_mblob", "__tvm_ffi_library_bin",
                                                                           "__tvm_ffi_main", "__tvm_module_ctx"}));
  EXPECT_EQ(image_.DefinedSymbolNames("__tvm_ffi"),
            (std::vector<std::string>{"__tvm_ffi_library_bin", "__tvm_ffi_main"}));
  EXPECT_TRUE(image_.DefinedSymbolNames("no_such_prefix").empty());
  std::vector<std::string> all = image_.DefinedSymbolNames();
  EXPECT_NE(std::find(all.begin(), all.end(), "sorun_hidden_blob"), all.end());
  EXPECT_EQ(std::find(all.begin(), all.end(), "puts"), all.end());  // undefined
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());  // no duplicates across tables
}

TEST_F(ElfReaderTest, ReadsRelocatableObjects) {
  auto image = ElfImage::Parse(Bytes(object_), object_.size(), "elf_test_blob.o");
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  EXPECT_EQ(image->type(), ET_REL);
  EXPECT_TRUE(image->dynamic_symbols().empty());
  auto blob = image->FindSymbolData("__tvm_dev_mblob");
  ASSERT_TRUE(blob.ok()) << blob.status().ToString();
  EXPECT_EQ(blob->table, ".symtab");
  ASSERT_EQ(blob->size, 256u);
  for (size_t i = 0; i < 256; ++i) ASSERT_EQ(blob->data[i], BlobByte(i));
  EXPECT_ERROR(image->FindSymbolData("sorun_common_value").status(), StatusCode::kFailedPrecondition, "SHN_COMMON");
  EXPECT_ERROR(image->FindSymbolData("__tvm_module_ctx").status(), StatusCode::kFailedPrecondition, ".bss");
  EXPECT_ERROR(image->FindSymbolData("puts").status(), StatusCode::kFailedPrecondition, "SHN_UNDEF");
}

TEST_F(ElfReaderTest, ExtendedSectionNumberingIsFollowed) {
  // e_shnum = 0 and e_shstrndx = SHN_XINDEX move the real values into section header 0.
  std::string b = library_;
  const uint64_t shoff = Get64(b, 40);
  Put64(&b, shoff + 32, image_.sections().size());    // section 0 sh_size = count
  Put32(&b, shoff + 40, Section(".shstrtab").index);  // section 0 sh_link = shstrndx
  Put16(&b, 60, 0);
  Put16(&b, 62, 0xffff);
  auto image = ElfImage::Parse(Bytes(b), b.size(), "x.so");
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  EXPECT_EQ(image->sections().size(), image_.sections().size());
  EXPECT_NE(image->FindSection(".rodata"), nullptr);
  EXPECT_TRUE(image->FindSymbolData("__tvm_dev_mblob").ok());
}

TEST_F(ElfReaderTest, UnnamedSectionsStillWork) {
  std::string b = library_;
  Put16(&b, 62, 0);  // no section-name table
  auto image = ElfImage::Parse(Bytes(b), b.size(), "x.so");
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  EXPECT_EQ(image->FindSection(".rodata"), nullptr);
  auto blob = image->FindSymbolData("__tvm_dev_mblob");
  ASSERT_TRUE(blob.ok()) << blob.status().ToString();
  EXPECT_EQ(blob->data[5], BlobByte(5));
  EXPECT_EQ(blob->table, ".dynsym");
  EXPECT_EQ(blob->section, "");
  EXPECT_ERROR(image->FindSymbolData("__tvm_module_ctx").status(), StatusCode::kFailedPrecondition, "SHT_NOBITS",
               "(.dynsym symbol");
}

// Without section headers (sstrip) the dynamic symbols are still found, as ld.so finds them: through
// PT_DYNAMIC, bounded by their PT_LOAD segment.
TEST_F(ElfReaderTest, NoSectionHeadersStillHasTheDynamicSymbols) {
  auto full = ElfImage::Parse(Bytes(library_), library_.size(), "x.so");
  ASSERT_TRUE(full.ok());
  auto expected = full->FindSymbolData("__tvm_dev_mblob");
  ASSERT_TRUE(expected.ok());
  std::string b = library_;
  Put64(&b, 40, 0);
  Put16(&b, 60, 0);
  Put16(&b, 62, 0);
  auto image = ElfImage::Parse(Bytes(b), b.size(), "x.so");
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  EXPECT_TRUE(image->sections().empty());
  EXPECT_TRUE(image->static_symbols().empty());
  EXPECT_EQ(image->dynamic_symbols().size(), full->dynamic_symbols().size());
  auto blob = image->FindSymbolData("__tvm_dev_mblob");
  ASSERT_TRUE(blob.ok()) << blob.status().ToString();
  EXPECT_EQ(blob->table, "DT_SYMTAB");
  EXPECT_EQ(blob->file_offset, expected->file_offset);
  EXPECT_EQ(blob->size, expected->size);
  EXPECT_EQ(std::memcmp(blob->data, expected->data, static_cast<size_t>(expected->size)), 0);
  // A .bss object has no file bytes: the segment rule says so.
  EXPECT_ERROR(image->FindSymbolData("__tvm_module_ctx").status(), StatusCode::kDataLoss, "zero-filled (.bss)");
}

// ---------------------------------------------------------------------------------------------------
// Malformed files: each returns an error naming the file, the structure and the byte offset.

TEST_F(ElfReaderTest, NotAnElfFile) {
  EXPECT_ERROR(ParseStatus("", "empty.so"), StatusCode::kDataLoss, "empty.so: not an ELF file");
  EXPECT_ERROR(ParseStatus("\x7f"
                           "EL",
                           "short.so"),
               StatusCode::kDataLoss, "short.so: not an ELF file");
  EXPECT_ERROR(ParseStatus(std::string(100, 'x'), "x.so"), StatusCode::kDataLoss, "not an ELF file", "byte 0");
  EXPECT_ERROR(ParseStatus("!<arch>\nfoo.o/  ", "lib.a"), StatusCode::kDataLoss, "not an ELF file");
  EXPECT_ERROR(ElfImage::Parse(nullptr, 64, "null.so").status(), StatusCode::kDataLoss, "not an ELF file");
}

TEST_F(ElfReaderTest, Elf32AndBigEndianAreUnimplemented) {
  std::string b = library_;
  b[4] = 1;
  EXPECT_ERROR(ParseStatus(b, "x32.so"), StatusCode::kUnimplemented, "x32.so", "ELF32", "EI_CLASS 1", "byte 4");
  b = library_;
  b[5] = 2;
  EXPECT_ERROR(ParseStatus(b, "be.so"), StatusCode::kUnimplemented, "be.so", "big-endian", "byte 5");
}

TEST_F(ElfReaderTest, BadIdentification) {
  std::string b = library_;
  b[4] = 7;
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, "lib.so: ELF header byte 4: invalid EI_CLASS 7");
  b = library_;
  b[5] = 0;
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, "ELF header byte 5: invalid EI_DATA 0");
  b = library_;
  b[6] = 9;
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, "ELF header byte 6", "EI_VERSION 9");
  b = library_;
  Put32(&b, 20, 5);
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, "ELF header byte 20", "e_version 5");
  b = library_;
  Put16(&b, 52, 40);
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, "ELF header byte 52", "e_ehsize 40");
}

TEST_F(ElfReaderTest, TruncatedHeader) {
  EXPECT_ERROR(ParseStatus(library_.substr(0, 10)), StatusCode::kDataLoss, "ELF header byte 10", "e_ident");
  EXPECT_ERROR(ParseStatus(library_.substr(0, 40)), StatusCode::kDataLoss, "ELF header byte 40",
               "needs 64 bytes but the file has 40");
}

TEST_F(ElfReaderTest, TruncationAtEveryOffsetIsAnError) {
  // The section header table is at the end of the file, so every proper prefix is malformed.
  ASSERT_EQ(Get64(library_, 40) + image_.sections().size() * 64, library_.size());
  for (size_t n = 0; n < library_.size(); ++n) {
    Status status = ParseExact(library_, n);
    ASSERT_FALSE(status.ok()) << "prefix of " << n << " bytes parsed";
    ASSERT_EQ(status.code(), StatusCode::kDataLoss) << n << ": " << status.ToString();
    ASSERT_TRUE(Contains(status.message(), "lib.so")) << status.message();
    ASSERT_TRUE(Contains(status.message(), "byte")) << status.message();
  }
  // One case in detail: cutting the last section header (the counts are the linker's: 37 sections on
  // x86-64, 33 on aarch64).
  const size_t sections = image_.sections().size();
  EXPECT_ERROR(ParseStatus(library_.substr(0, library_.size() - 1)), StatusCode::kDataLoss, "ELF header byte 60",
               "section count " + std::to_string(sections),
               "only " + std::to_string(sections * 64 - 1) + " bytes remain");
}

TEST_F(ElfReaderTest, ProgramHeaderTableOutOfBounds) {
  std::string b = library_;
  Put64(&b, 32, b.size() - 8);
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, "ELF header byte 32", "program header table");
  b = library_;
  Put64(&b, 32, ~0ull - 3);
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, "ELF header byte 32", "program header table");
  b = library_;
  Put16(&b, 54, 8);
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, "ELF header byte 54", "e_phentsize 8");
}

TEST_F(ElfReaderTest, SectionHeaderTableOutOfBounds) {
  std::string b = library_;
  Put64(&b, 40, b.size() + 8);
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, "ELF header byte 40", "e_shoff", "past the end");
  b = library_;
  Put64(&b, 40, ~0ull - 10);
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, "ELF header byte 40");
  b = library_;
  Put16(&b, 60, 0xffff);
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, "ELF header byte 60", "section count 65535");
  b = library_;
  Put16(&b, 58, 32);
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, "ELF header byte 58", "e_shentsize 32");
  b = library_;
  Put64(&b, 40, 0);  // e_shoff 0 but e_shnum != 0
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, "ELF header byte 60", "e_shoff is 0");
  // Extended numbering with an absurd count in section 0.
  b = library_;
  Put16(&b, 60, 0);
  Put64(&b, Get64(b, 40) + 32, ~0ull);
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, "section header 0 byte", "more than 2^64");
}

TEST_F(ElfReaderTest, SectionNameTableErrors) {
  std::string b = library_;
  Put16(&b, 62, 200);
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, "ELF header byte 62", "e_shstrndx 200",
               "there are " + std::to_string(image_.sections().size()));
  b = library_;
  Put16(&b, 62, static_cast<uint16_t>(Section(".text").index));
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss,
               "section header " + std::to_string(Section(".text").index) + " byte", "SHT_PROGBITS, not SHT_STRTAB");
  // sh_name past the end of .shstrtab.
  b = library_;
  const ElfSection& rodata = Section(".rodata");
  Put32(&b, rodata.header_offset, 0x7fffffff);
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss,
               "section header " + std::to_string(rodata.index) + " byte " + std::to_string(rodata.header_offset),
               "name offset 2147483647 is past the end");
  // The last name loses its terminator.
  b = library_;
  const ElfSection& names = Section(".shstrtab");
  b[names.offset + names.size - 1] = 'x';
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, "not NUL-terminated");
}

TEST_F(ElfReaderTest, SectionContentsOutOfBounds) {
  const ElfSection& rodata = Section(".rodata");
  const std::string where =
      "section header " + std::to_string(rodata.index) + " byte " + std::to_string(rodata.header_offset + 24);
  std::string b = library_;
  Put64(&b, rodata.header_offset + 24, ~0ull - 0xf);  // sh_offset + sh_size overflows
  Put64(&b, rodata.header_offset + 32, 0x20);
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, where, "extends past the end of the file");
  b = library_;
  Put64(&b, rodata.header_offset + 32, b.size());  // sh_size past the end
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, where, "extends past the end of the file");
  // SHT_NOBITS sections have no bytes: their offset/size are not checked against the file.
  b = library_;
  const ElfSection& bss = Section(".bss");
  Put64(&b, bss.header_offset + 32, ~0ull);
  EXPECT_TRUE(ParseStatus(b).ok());
}

TEST_F(ElfReaderTest, SymbolTableHeaderErrors) {
  const ElfSection& dynsym = Section(".dynsym");
  const std::string header = "section header " + std::to_string(dynsym.index) + " (.dynsym) byte ";
  std::string b = library_;
  Put32(&b, dynsym.header_offset + 40, 99);
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, header + std::to_string(dynsym.header_offset + 40), "sh_link 99",
               "not a section");
  b = library_;
  Put32(&b, dynsym.header_offset + 40, Section(".text").index);
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, "sh_link " + std::to_string(Section(".text").index),
               "SHT_PROGBITS, not SHT_STRTAB");
  b = library_;
  Put64(&b, dynsym.header_offset + 56, 16);
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, header + std::to_string(dynsym.header_offset + 56),
               "sh_entsize 16");
  b = library_;
  Put64(&b, dynsym.header_offset + 32, dynsym.size - 5);
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, header + std::to_string(dynsym.header_offset + 32),
               "not a multiple of the 24-byte Elf64_Sym");
}

TEST_F(ElfReaderTest, SymbolEntryErrors) {
  // Symbol 12 of .dynsym: its name offset points past .dynstr.
  ASSERT_GT(image_.dynamic_symbols().size(), 12u);
  const ElfSymbol& s12 = image_.dynamic_symbols()[12];
  std::string b = library_;
  Put32(&b, s12.entry_offset, 0xffffffff);
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, ".dynsym symbol 12 byte " + std::to_string(s12.entry_offset),
               "name offset 4294967295 is past the end of its string table", ".dynstr");
  // st_shndx names no section.
  const ElfSymbol& blob = DynamicSymbol("__tvm_dev_mblob");
  b = library_;
  Put16(&b, blob.entry_offset + 6, 500);
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss,
               ".dynsym symbol " + std::to_string(blob.index) + " byte " + std::to_string(blob.entry_offset + 6),
               "st_shndx 500", "__tvm_dev_mblob");
  // The string table's last name loses its terminator.
  const ElfSection& dynstr = Section(".dynstr");
  b = library_;
  b[dynstr.offset + dynstr.size - 1] = 'x';
  Put32(&b, s12.entry_offset, static_cast<uint32_t>(dynstr.size - 1));
  EXPECT_ERROR(ParseStatus(b), StatusCode::kDataLoss, ".dynsym symbol 12 byte " + std::to_string(s12.entry_offset),
               "name at offset " + std::to_string(dynstr.size - 1) + " is not NUL-terminated");
}

TEST_F(ElfReaderTest, SymbolOutsideItsSection) {
  const ElfSymbol& blob = DynamicSymbol("__tvm_dev_mblob");
  const std::string where =
      ".dynsym symbol " + std::to_string(blob.index) + " byte " + std::to_string(blob.entry_offset + 8);
  auto find = [](const std::string& bytes) {
    auto image = ElfImage::Parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "lib.so");
    if (!image.ok()) return image.status();
    return image->FindSymbolData("__tvm_dev_mblob").status();
  };
  std::string b = library_;
  Put64(&b, blob.entry_offset + 16, 1ull << 40);  // st_size far too large
  EXPECT_ERROR(find(b), StatusCode::kDataLoss, where,
               "lies outside its section " + std::to_string(Section(".rodata").index) + " (.rodata)");
  b = library_;
  Put64(&b, blob.entry_offset + 16, ~0ull);  // st_value + st_size overflows
  EXPECT_ERROR(find(b), StatusCode::kDataLoss, where, "lies outside");
  b = library_;
  Put64(&b, blob.entry_offset + 8, 0x10);  // below .rodata's address
  EXPECT_ERROR(find(b), StatusCode::kDataLoss, where, "st_value 0x10");
  b = library_;
  Put64(&b, blob.entry_offset + 8, ~0ull - 4);  // far above
  EXPECT_ERROR(find(b), StatusCode::kDataLoss, where, "lies outside");
  // In a SHT_NULL section.
  b = library_;
  Put32(&b, Section(".rodata").header_offset + 4, 0);
  EXPECT_ERROR(find(b), StatusCode::kDataLoss, "SHT_NULL");
  // Reserved and extended section indices.
  b = library_;
  Put16(&b, blob.entry_offset + 6, 0xffff);
  EXPECT_ERROR(find(b), StatusCode::kUnimplemented, "SHN_XINDEX");
  b = library_;
  Put16(&b, blob.entry_offset + 6, 0xff10);
  EXPECT_ERROR(find(b), StatusCode::kUnimplemented, "0xff10");
}

TEST_F(ElfReaderTest, RandomCorruptionNeverCrashes) {
  // Mutates bytes of the structures the reader parses (header, section headers, symbol tables, string
  // tables) and of the whole file; every outcome must be a value, and all reads stay inside the copy.
  std::vector<std::pair<uint64_t, uint64_t>> regions = {{0, 64}, {Get64(library_, 40), library_.size()}};
  for (const char* name : {".dynsym", ".symtab", ".dynstr", ".strtab", ".shstrtab"}) {
    const ElfSection& s = Section(name);
    regions.push_back({s.offset, s.offset + s.size});
  }
  regions.push_back({0, library_.size()});
  std::mt19937_64 rng(20240601);
  int failures = 0;
  const int kIterations = 3000;
  for (int i = 0; i < kIterations; ++i) {
    std::string b = library_;
    const auto& region = regions[rng() % regions.size()];
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int f = 0; f < flips; ++f) {
      uint64_t at = region.first + rng() % (region.second - region.first);
      b[at] = static_cast<char>(rng() % 3 == 0 ? 0xff : rng());
    }
    size_t size = rng() % 10 == 0 ? static_cast<size_t>(rng() % b.size()) : b.size();
    Status status = ParseExact(b, size);
    if (!status.ok()) {
      ++failures;
      ASSERT_TRUE(Contains(status.message(), "lib.so")) << status.message();
    }
  }
  EXPECT_GT(failures, kIterations / 10);  // the mutations do hit validated fields
}

}  // namespace
}  // namespace sorun
