// Bad-input catalogue, class 2: blob and checksum symbols that point outside what the library maps.
// Each case runs through BadInputCatalogueTest (tests/robustness/catalogue.h).
#include <cstring>
#include <string>
#include <vector>

#include "inspect/elf_reader.h"
#include "tests/robustness/catalogue.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace catalogue {
namespace {

constexpr uint64_t kOutside = 0x7fff0000;      // past every segment of the small model
constexpr uint64_t kHuge = uint64_t{1} << 40;  // 1 TiB

// One patch of a copy of the good model: a u64 field of a dynamic symbol's Elf64_Sym entry
// (8 = st_value, 16 = st_size), optionally the blob's length prefix, optionally the section headers
// zeroed as `sstrip` leaves them. Written to a fresh path; "" when the good model is not as expected.
struct Patch {
  std::string symbol;
  uint64_t field = 8;
  uint64_t value = 0;
  bool bss = false;  // value = the first .bss byte of the writable segment (plus `value`)
  bool prefix_huge = false;
  bool strip_sections = false;
};

std::string Patched(const Patch& p, const std::string& name) {
  CatalogueEnv& env = CatalogueEnv::Get();
  std::string bytes = testing::ReadFileOrDie(env.good_so);
  auto image = ElfImage::Parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), name);
  if (!image.ok()) return "";
  uint64_t value = p.value;
  if (p.bss) {
    for (const LoadSegment& s : image->LoadSegments()) {
      if (s.memory_size > s.file_size) value += s.vaddr + s.file_size;
    }
  }
  for (const ElfSymbol& s : image->dynamic_symbols()) {
    if (s.name == p.symbol) std::memcpy(bytes.data() + s.entry_offset + p.field, &value, 8);
  }
  if (p.prefix_huge) {
    auto blob = image->FindSymbolData("__tvm_dev_mblob");
    if (!blob.ok()) return "";
    std::memcpy(bytes.data() + blob->file_offset, &kHuge, 8);
  }
  if (p.strip_sections) {
    std::memset(bytes.data() + 40, 0, 8);  // e_shoff
    std::memset(bytes.data() + 58, 0, 6);  // e_shentsize, e_shnum, e_shstrndx
  }
  std::string path = env.Path(name);
  testing::WriteFileOrDie(path, bytes);
  return path;
}

Status LoadVerified(const std::string& path) {
  LoadOptions verify;
  verify.verify_checksum = true;
  return Load(path, verify).status();
}

std::vector<CatalogueCase> ElfCases() {
  std::vector<CatalogueCase> cases;
  auto add = [&](std::string name, Patch p, std::string expected) {
    const std::string file = name + ".so";
    cases.push_back({std::move(name), [p, file] { return LoadVerified(Patched(p, file)); }, std::move(expected)});
  };
  add("blob st_value outside the file", {"__tvm_dev_mblob", 8, kOutside},
      "__tvm_dev_mblob at address 0x7fff0000 is outside the file-backed part of every PT_LOAD segment");
  add("blob st_value in bss", {"__tvm_dev_mblob", 8, 0, /*bss=*/true}, "zero-filled (.bss) part of PT_LOAD segment");
  add("blob st_size 2^40", {"__tvm_dev_mblob", 16, kHuge}, "(st_size 1099511627776) runs past the end of PT_LOAD");
  add("blob without st_size and a 2^40 prefix", {"__tvm_dev_mblob", 16, 0, false, /*prefix_huge=*/true},
      "length prefix claims 1099511627776 payload bytes");
  add("checksum record st_value outside the file", {"__sorun_blob_checksum", 8, kOutside},
      "__sorun_blob_checksum at address 0x7fff0000 is outside the file-backed part");
  add("checksum record st_value in bss", {"__sorun_blob_checksum", 8, 0, /*bss=*/true},
      "__sorun_blob_checksum at address");
  add("checksum record st_size 2^40", {"__sorun_blob_checksum", 16, kHuge}, "runs past the end of PT_LOAD segment");
  add("section-stripped library with blob st_size 2^40", {"__tvm_dev_mblob", 16, kHuge, false, false, true},
      "(st_size 1099511627776) runs past the end of PT_LOAD");
  return cases;
}

SORUN_CATALOGUE_CASES(Elf, ElfCases());

}  // namespace
}  // namespace catalogue
}  // namespace sorun
