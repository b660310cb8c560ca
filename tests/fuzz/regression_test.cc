// Replays the fuzz corpora through the fuzz bodies (fuzz/fuzz_targets.h) in the normal build:
//  - every seed under fuzz/corpus/<target>/ and every crasher under tests/fuzz/regressions/<target>/
//    (each named after the bug it found) must run without a crash, a sanitizer report or a FUZZ_CHECK;
//  - deterministic mutations of every seed (truncations, byte flips, inserted dictionary tokens) must
//    too: a cheap stand-in for fuzzing that runs on every CI build;
//  - the committed corpus stays small and every target has seeds and a dictionary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "fuzz/fuzz_targets.h"
#include "tests/util/host_build.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

namespace fs = std::filesystem;
using fuzz::FuzzTarget;

std::vector<std::string> FilesUnder(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    if (e.is_regular_file()) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> Seeds(const std::string& target) {
  return FilesUnder(testing::Runfile("fuzz/corpus/" + target));
}

void RunInput(const FuzzTarget& t, const std::string& bytes) {
  // An exact-size heap copy, so ASan sees reads past the end of the input.
  std::vector<uint8_t> data(bytes.begin(), bytes.end());
  EXPECT_EQ(t.function(data.data(), data.size()), 0);
}

// Tokens from the target's dictionary (lines `name="value"`, with \xNN escapes).
std::vector<std::string> DictTokens(const std::string& target) {
  std::vector<std::string> tokens;
  std::string path = testing::Runfile("fuzz/dicts/" + target + ".dict");
  if (!testing::FileExists(path)) return tokens;
  std::string text = testing::ReadFileOrDie(path);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    size_t q = line.find('"');
    if (line.empty() || line[0] == '#' || q == std::string::npos || line.back() != '"' || q + 1 >= line.size())
      continue;
    std::string raw = line.substr(q + 1, line.size() - q - 2), token;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\\' && i + 3 < raw.size() && raw[i + 1] == 'x') {
        token += static_cast<char>(std::stoi(raw.substr(i + 2, 2), nullptr, 16));
        i += 3;
      } else if (raw[i] == '\\' && i + 1 < raw.size()) {
        token += raw[++i];
      } else {
        token += raw[i];
      }
    }
    tokens.push_back(token);
  }
  return tokens;
}

class FuzzRegressionTest : public ::testing::TestWithParam<FuzzTarget> {};

// relax_vm_fuzzer runs crafted bytecode on the kernels of testdata/relax: x86-64 code (its TVM 0.16 export
// has no build for another architecture, and the inputs' selector byte names it).
bool RunsX86Kernels(const FuzzTarget& t) { return std::string(t.name) == "relax_vm_fuzzer"; }

TEST_P(FuzzRegressionTest, SeedsAndCrashersRunClean) {
  const FuzzTarget& t = GetParam();
  if (RunsX86Kernels(t)) SORUN_SKIP_IF_FOREIGN_BUILD(testing::Runfile("testdata/relax/legacy_mlp.so"));
  std::vector<std::string> seeds = Seeds(t.name);
  EXPECT_GE(seeds.size(), 3u) << "fuzz/corpus/" << t.name << " needs seeds (fuzz/make_corpus.sh)";
  std::vector<std::string> crashers = FilesUnder(testing::Runfile(std::string("tests/fuzz/regressions/") + t.name));
  for (const std::string& f : seeds) {
    SCOPED_TRACE(f);
    RunInput(t, testing::ReadFileOrDie(f));
  }
  for (const std::string& f : crashers) {
    SCOPED_TRACE(f);
    RunInput(t, testing::ReadFileOrDie(f));
  }
  std::printf("%s: %zu seeds, %zu regression inputs\n", t.name, seeds.size(), crashers.size());
}

TEST_P(FuzzRegressionTest, MutatedSeedsRunClean) {
  const FuzzTarget& t = GetParam();
  if (RunsX86Kernels(t)) SORUN_SKIP_IF_FOREIGN_BUILD(testing::Runfile("testdata/relax/legacy_mlp.so"));
  std::vector<std::string> tokens = DictTokens(t.name);
  std::mt19937_64 rng(0x50a0f022);  // fixed: the same mutants on every run
  size_t runs = 0;
  for (const std::string& f : Seeds(t.name)) {
    SCOPED_TRACE(f);
    const std::string seed = testing::ReadFileOrDie(f);
    if (seed.empty()) continue;
    // Truncations at 16 points spread over the input, and the input minus its last byte.
    for (size_t k = 0; k < 16; ++k) RunInput(t, seed.substr(0, seed.size() * k / 16));
    RunInput(t, seed.substr(0, seed.size() - 1));
    for (int m = 0; m < 48; ++m) {
      std::string mutant = seed;
      size_t at = static_cast<size_t>(rng() % mutant.size());
      switch (m % 4) {
        case 0:  // flip one bit
          mutant[at] = static_cast<char>(mutant[at] ^ (1 << (rng() % 8)));
          break;
        case 1:  // an interesting byte
          mutant[at] = static_cast<char>(std::vector<uint8_t>{0, 1, 0x7f, 0x80, 0xff}[rng() % 5]);
          break;
        case 2:  // overwrite 8 bytes with a large little-endian count
          for (size_t i = 0; i < 8 && at + i < mutant.size(); ++i)
            mutant[at + i] = static_cast<char>(i == 0 ? 0xf0 : i < 4 ? 0xff : 0);
          break;
        default:  // insert a dictionary token
          if (!tokens.empty()) mutant.insert(at, tokens[rng() % tokens.size()]);
          break;
      }
      RunInput(t, mutant);
    }
    runs += 17 + 48;
  }
  std::printf("%s: %zu mutated inputs\n", t.name, runs);
}

INSTANTIATE_TEST_SUITE_P(AllTargets, FuzzRegressionTest, ::testing::ValuesIn(fuzz::AllTargets()),
                         [](const ::testing::TestParamInfo<FuzzTarget>& info) { return std::string(info.param.name); });

TEST(FuzzCorpusTest, CorpusIsSmallAndEveryTargetHasADictionary) {
  uint64_t total = 0;
  for (const std::string& f : FilesUnder(testing::Runfile("fuzz/corpus"))) total += fs::file_size(f);
  EXPECT_LT(total, 2u << 20) << "keep the committed corpus under 2 MB";
  for (const FuzzTarget& t : fuzz::AllTargets()) {
    EXPECT_TRUE(testing::FileExists(testing::Runfile(std::string("fuzz/dicts/") + t.name + ".dict"))) << t.name;
  }
}

TEST(FuzzCorpusTest, RegressionDirectoriesNameRealTargets) {
  std::string root = testing::Runfile("tests/fuzz/regressions");
  std::error_code ec;
  if (!fs::is_directory(root, ec)) GTEST_SKIP() << "no regression inputs";
  for (const auto& e : fs::directory_iterator(root, ec)) {
    std::string dir = e.path().filename().string();
    bool known = false;
    for (const FuzzTarget& t : fuzz::AllTargets()) known = known || dir == t.name;
    EXPECT_TRUE(known) << "tests/fuzz/regressions/" << dir << " is not a fuzz target";
  }
}

}  // namespace
}  // namespace sorun
