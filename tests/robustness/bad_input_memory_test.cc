// The bad-input catalogue, models from memory (Model::LoadFromMemory): the good model's bytes cut short
// (a truncated download), emptied or with the ELF header damaged, handed over as a buffer named
// "buffer.so". Each must be refused with the message a file of the same bytes gets (byte offsets
// included), "buffer.so" standing where the file's path stands; a case whose messages differ fails with
// both. Every case runs through BadInputCatalogueTest (tests/robustness/catalogue.h).
#include <functional>
#include <string>
#include <vector>

#include "api/sorun.h"
#include "base/file_util.h"
#include "tests/robustness/catalogue.h"

namespace sorun {
namespace catalogue {
namespace {

using Env = CatalogueEnv;
using Case = CatalogueCase;

// Loads `bytes` from memory as "buffer.so" and from a file; the memory load's status when the two say
// the same (the path replaced by the name), else Internal naming both.
Status MemoryMatchesFile(const std::string& bytes, const std::string& tag) {
  const std::string path = Env::Get().Path(tag + ".so");
  SORUN_RETURN_IF_ERROR(WriteFileBytes(path, bytes));
  const Status from_file = Model::Load(path).status();
  const Status from_memory = Model::LoadFromMemory(bytes, {}, "buffer.so").status();
  if (from_memory.ok()) return Internal("the memory load succeeded");
  std::string expected = from_file.message();
  for (size_t at = expected.find(path); at != std::string::npos; at = expected.find(path, at + 9)) {
    expected.replace(at, path.size(), "buffer.so");
  }
  if (from_memory.code() != from_file.code() || from_memory.message() != expected) {
    return Internal("from memory: '" + from_memory.ToString() + "'; from the file: '" + from_file.ToString() + "'");
  }
  return from_memory;
}

std::vector<Case> MemoryCases() {
  Env& env = Env::Get();
  const std::string good = *ReadFileToString(env.good_so);
  std::vector<Case> cases;
  for (size_t keep :
       {size_t{1}, size_t{16}, size_t{63}, size_t{64}, size_t{120}, size_t{1000}, good.size() / 3, good.size() / 2}) {
    const std::string cut = good.substr(0, keep);
    cases.push_back({"buffer cut to " + std::to_string(keep) + " bytes",
                     [cut, keep] { return MemoryMatchesFile(cut, "cut" + std::to_string(keep)); }, "buffer.so: "});
  }
  cases.push_back({"empty buffer", [] { return MemoryMatchesFile("", "empty"); }, "buffer.so"});
  std::string wrong_class = good;
  wrong_class[4] = 1;  // ELFCLASS32
  cases.push_back({"buffer with a 32-bit ELF class", [wrong_class] { return MemoryMatchesFile(wrong_class, "class"); },
                   "buffer.so: "});
  std::string no_phdrs = good;
  for (int i = 0; i < 8; ++i) no_phdrs[32 + i] = '\xff';  // e_phoff far past the end
  cases.push_back({"buffer whose program headers lie past its end",
                   [no_phdrs] { return MemoryMatchesFile(no_phdrs, "phoff"); }, "buffer.so: "});
  return cases;
}

SORUN_CATALOGUE_CASES(Memory, MemoryCases());

}  // namespace
}  // namespace catalogue
}  // namespace sorun
