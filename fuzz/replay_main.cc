// A main() for fuzz target binaries built without libFuzzer (any build but --config=fuzz): runs
// LLVMFuzzerTestOneInput once on every file named on the command line, and on every file under each
// directory named, like a libFuzzer binary does when given files. Reproduces a crash under gcc or
// --config=asan:  bazel run --config=asan //fuzz:blob_fuzzer -- /path/to/crash-file
// Single-threaded; exits 0 after the last input (a crash aborts before that).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

int RunFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
    return 1;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // A private heap copy of exactly the input's size, so ASan sees reads past the end.
  std::vector<uint8_t> data(bytes.begin(), bytes.end());
  std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(), data.size());
  LLVMFuzzerTestOneInput(data.data(), data.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR...\n(built without libFuzzer: replays inputs only)\n", argv[0]);
    return 2;
  }
  int failures = 0;
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    if (std::filesystem::is_directory(argv[i], ec)) {
      std::vector<std::string> files;
      for (const auto& e : std::filesystem::recursive_directory_iterator(argv[i], ec)) {
        if (e.is_regular_file()) files.push_back(e.path().string());
      }
      std::sort(files.begin(), files.end());
      for (const std::string& f : files) {
        failures += RunFile(f);
        ++count;
      }
    } else {
      failures += RunFile(argv[i]);
      ++count;
    }
  }
  std::fprintf(stderr, "replay: ran %zu input(s)\n", count);
  return failures == 0 ? 0 : 1;
}
