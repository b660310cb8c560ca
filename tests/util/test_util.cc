#include "tests/util/test_util.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace sorun {
namespace testing {

std::string Runfile(const std::string& workspace_relative) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir && workspace) return std::string(srcdir) + "/" + workspace + "/" + workspace_relative;
  return workspace_relative;
}

std::string KernelIncludeFlag() {
  const std::string header = "runtime/c_runtime_api.h";
  const std::string path = Runfile(header);
  return "-I" + path.substr(0, path.size() - header.size());
}

std::string MakeTempDir(const std::string& prefix) {
  static std::atomic<int> counter{0};
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(base ? base : "/tmp") + "/" + prefix + "_" + std::to_string(getpid()) + "_" +
                    std::to_string(counter.fetch_add(1));
  std::string cmd = "rm -rf '" + dir + "'";
  if (std::system(cmd.c_str()) != 0 || mkdir(dir.c_str(), 0755) != 0) {
    throw std::runtime_error("cannot create " + dir);
  }
  return dir;
}

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFileOrDie(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

long ResidentKibOfMappingAt(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  const uintptr_t a = reinterpret_cast<uintptr_t>(address);
  bool in = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') != std::string::npos &&
        line.find('-') < line.find(' ')) {
      in = a >= lo && a < hi;
      continue;
    }
    long kb = 0;
    if (in && std::sscanf(line.c_str(), "Rss: %ld kB", &kb) == 1) return kb;
  }
  return -1;
}

}  // namespace testing
}  // namespace sorun
