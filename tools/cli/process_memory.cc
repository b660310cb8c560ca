#include "tools/cli/process_memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

namespace sorun {
namespace cli {

uint64_t PeakRssBytes() {
  // VmHWM: the high-water mark of this program's address space. getrusage's ru_maxrss is not used
  // when VmHWM is there: Linux carries the parent's peak over fork() + execve() into it, so a small
  // program started from a large process (a Python driver with TVM loaded) reports the parent's RSS.
  if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    unsigned long long kib = 0;
    bool found = false;
    while (std::fgets(line, sizeof(line), f) != nullptr) {
      if (std::sscanf(line, "VmHWM: %llu kB", &kib) == 1) {
        found = true;
        break;
      }
    }
    std::fclose(f);
    if (found) return static_cast<uint64_t>(kib) * 1024;
  }
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

uint64_t CurrentRssBytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  if (n != 2) return 0;
  long page = sysconf(_SC_PAGESIZE);
  return resident * static_cast<uint64_t>(page > 0 ? page : 4096);
}

}  // namespace cli
}  // namespace sorun
