// Memory of the calling process as the kernel accounts it, for the memory benchmarks: /proc/self/status
// (VmRSS, VmHWM = peak RSS, RssAnon, RssFile), /proc/self/smaps_rollup (Pss: shared pages divided by
// the number of processes mapping them), getrusage (ru_maxrss, minor/major faults), and which file a
// mapping shows (/proc/self/maps). Values in bytes; 0 when the kernel does not report one.
// Header-only; thread-safe.
#ifndef SORUN_BENCH_PROCESS_STATS_H_
#define SORUN_BENCH_PROCESS_STATS_H_

#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace sorun {
namespace bench {

struct ProcessMemory {
  uint64_t rss = 0;       // VmRSS
  uint64_t hwm = 0;       // VmHWM: peak RSS since start (or since ResetPeakRss)
  uint64_t rss_anon = 0;  // RssAnon
  uint64_t rss_file = 0;  // RssFile
  uint64_t pss = 0;       // Pss (smaps_rollup)
  uint64_t maxrss = 0;    // getrusage ru_maxrss
  uint64_t minor_faults = 0;
  uint64_t major_faults = 0;
};

// "Key:   123 kB" lines of a /proc file -> bytes.
inline uint64_t ReadProcKb(const char* file, const char* key) {
  std::FILE* f = std::fopen(file, "r");
  if (f == nullptr) return 0;
  char line[256];
  const size_t n = std::strlen(key);
  uint64_t value = 0;
  while (std::fgets(line, sizeof(line), f)) {
    if (std::strncmp(line, key, n) == 0 && line[n] == ':') {
      unsigned long long kb = 0;
      if (std::sscanf(line + n + 1, "%llu", &kb) == 1) value = kb * 1024;
      break;
    }
  }
  std::fclose(f);
  return value;
}

inline ProcessMemory ReadProcessMemory() {
  ProcessMemory m;
  m.rss = ReadProcKb("/proc/self/status", "VmRSS");
  m.hwm = ReadProcKb("/proc/self/status", "VmHWM");
  m.rss_anon = ReadProcKb("/proc/self/status", "RssAnon");
  m.rss_file = ReadProcKb("/proc/self/status", "RssFile");
  m.pss = ReadProcKb("/proc/self/smaps_rollup", "Pss");
  struct rusage u;
  if (getrusage(RUSAGE_SELF, &u) == 0) {
    m.maxrss = static_cast<uint64_t>(u.ru_maxrss) * 1024;
    m.minor_faults = static_cast<uint64_t>(u.ru_minflt);
    m.major_faults = static_cast<uint64_t>(u.ru_majflt);
  }
  return m;
}

// Resets VmHWM to the current RSS (writes "5" to /proc/self/clear_refs); false if not permitted.
inline bool ResetPeakRss() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  bool ok = std::fputs("5", f) >= 0;
  return (std::fclose(f) == 0) && ok;
}

// MemAvailable of the machine (/proc/meminfo).
inline uint64_t MemAvailableBytes() { return ReadProcKb("/proc/meminfo", "MemAvailable"); }

// The file mapped at `address` (/proc/self/maps pathname), or "" for anonymous memory / no mapping.
inline std::string MappedFileAt(const void* address) {
  std::FILE* f = std::fopen("/proc/self/maps", "r");
  if (f == nullptr) return "";
  const unsigned long long a = reinterpret_cast<uintptr_t>(address);
  char line[4352];
  std::string path;
  while (std::fgets(line, sizeof(line), f)) {
    unsigned long long begin = 0, end = 0;
    int name_at = 0;
    if (std::sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &begin, &end, &name_at) < 2) continue;
    if (a < begin || a >= end) continue;
    path = line + name_at;
    while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
    if (!path.empty() && path[0] != '/') path.clear();  // [heap], [stack], [anon:...]
    break;
  }
  std::fclose(f);
  return path;
}

inline double MiB(uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

// {"rss_mib":..,"hwm_mib":..,...}
inline std::string ProcessMemoryJson(const ProcessMemory& m) {
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "{\"rss_mib\":%.2f,\"hwm_mib\":%.2f,\"rss_anon_mib\":%.2f,\"rss_file_mib\":%.2f,\"pss_mib\":%.2f,"
                "\"maxrss_mib\":%.2f,\"minor_faults\":%llu,\"major_faults\":%llu}",
                MiB(m.rss), MiB(m.hwm), MiB(m.rss_anon), MiB(m.rss_file), MiB(m.pss), MiB(m.maxrss),
                static_cast<unsigned long long>(m.minor_faults), static_cast<unsigned long long>(m.major_faults));
  return buf;
}

}  // namespace bench
}  // namespace sorun

#endif  // SORUN_BENCH_PROCESS_STATS_H_
