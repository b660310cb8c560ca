#include "backends/opencl/program_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "base/xxhash64.h"

namespace sorun {
namespace {

constexpr char kMagic[8] = {'S', 'O', 'R', 'U', 'N', 'C', 'L', 'B'};
constexpr char kMaterialTag[] = "sorun-opencl-program-cache";

std::string Getenv(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

void AppendField(std::string* out, std::string_view field) {
  uint64_t n = field.size();
  char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  out->append(len, 8);
  out->append(field.data(), field.size());
}

std::string KeyMaterial(const ProgramCacheKey& key) {
  std::string m;
  m.reserve(key.source.size() + 256);
  AppendField(&m, kMaterialTag);
  AppendField(&m, std::to_string(ProgramCache::kFormatVersion));
  for (std::string_view f : {key.source, key.device_name, key.device_version, key.driver_version, key.platform_name,
                             key.platform_version, key.build_options}) {
    AppendField(&m, f);
  }
  return m;
}

void PutU32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void PutU64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
uint64_t GetU64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// mkdir -p. Returns "" on success, else the reason.
std::string MakeDirs(const std::string& path) {
  if (path.empty()) return "empty path";
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      return "cannot create " + partial + ": " + std::strerror(errno);
    }
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "cannot stat " + path + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return path + " is not a directory";
  if (::access(path.c_str(), W_OK | X_OK) != 0) return path + " is not writable: " + std::strerror(errno);
  return "";
}

bool ReadFully(int fd, char* out, size_t n) {
  while (n > 0) {
    ssize_t r = ::read(fd, out, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    out += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool WriteFully(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool IsOff(const std::string& v) { return v == "0" || v == "off" || v == "false" || v == "no"; }

}  // namespace

ProgramCache::ProgramCache(ProgramCacheOptions options) {
  if (!options.enabled) {
    disabled_reason_ = "disabled by option";
    return;
  }
  directory_ = std::move(options.directory);
  if (directory_.empty()) {
    auto dir = DefaultDirectory();
    if (!dir.ok()) {
      disabled_reason_ = dir.status().message();
      return;
    }
    directory_ = *dir;
  }
  while (directory_.size() > 1 && directory_.back() == '/') directory_.pop_back();
  std::string why = MakeDirs(directory_);
  if (!why.empty()) {
    disabled_reason_ = "cache directory unusable: " + why;
    return;
  }
  enabled_ = true;
}

std::shared_ptr<ProgramCache> ProgramCache::Default() {
  static std::shared_ptr<ProgramCache>* cache = [] {
    ProgramCacheOptions options;
    options.enabled = !IsOff(Getenv("SORUN_OPENCL_CACHE"));
    return new std::shared_ptr<ProgramCache>(std::make_shared<ProgramCache>(std::move(options)));  // never destroyed
  }();
  return *cache;
}

StatusOr<std::string> ProgramCache::DefaultDirectory() {
  std::string dir = Getenv("SORUN_OPENCL_CACHE_DIR");
  if (!dir.empty()) return dir;
  dir = Getenv("XDG_CACHE_HOME");
  if (!dir.empty()) return dir + "/sorun/opencl";
  dir = Getenv("HOME");
  if (!dir.empty()) return dir + "/.cache/sorun/opencl";
  return NotFound("no OpenCL program cache directory: none of SORUN_OPENCL_CACHE_DIR, XDG_CACHE_HOME, HOME is set");
}

uint64_t ProgramCache::ComputeKey(const ProgramCacheKey& key) { return Xxh64(KeyMaterial(key)); }

std::string ProgramCache::EntryPath(const ProgramCacheKey& key) const {
  char name[32];
  std::snprintf(name, sizeof(name), "%016llx.clbin", static_cast<unsigned long long>(ComputeKey(key)));
  return directory_ + "/" + name;
}

ProgramCache::LookupResult ProgramCache::Lookup(const ProgramCacheKey& key, std::string* binary) {
  if (!enabled_) return LookupResult::kDisabled;
  const std::string material = KeyMaterial(key);
  const uint64_t k = Xxh64(material);
  const uint64_t check = Xxh64(material, kKeyCheckSeed);
  int fd = ::open(EntryPath(key).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return LookupResult::kMiss;
  }
  bool valid = false;
  char header[kHeaderSize];
  struct stat st;
  if (::fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_size) >= kHeaderSize && ReadFully(fd, header, kHeaderSize) &&
      std::memcmp(header, kMagic, sizeof(kMagic)) == 0 && GetU32(header + 8) == kFormatVersion &&
      GetU32(header + 12) == kHeaderSize && GetU64(header + 16) == k && GetU64(header + 24) == check) {
    const uint64_t size = GetU64(header + 32);
    if (size <= kMaxPayloadBytes && size == static_cast<uint64_t>(st.st_size) - kHeaderSize) {
      binary->resize(static_cast<size_t>(size));
      valid = ReadFully(fd, &(*binary)[0], binary->size()) && Xxh64(*binary) == GetU64(header + 40);
    }
  }
  ::close(fd);
  if (!valid) {
    binary->clear();
    corrupt_.fetch_add(1, std::memory_order_relaxed);
    return LookupResult::kCorrupt;
  }
  hits_.fetch_add(1, std::memory_order_relaxed);
  return LookupResult::kHit;
}

void ProgramCache::Store(const ProgramCacheKey& key, std::string_view binary) {
  if (!enabled_) return;
  if (binary.empty() || binary.size() > kMaxPayloadBytes) {
    store_failures_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const std::string material = KeyMaterial(key);
  char header[kHeaderSize];
  std::memcpy(header, kMagic, sizeof(kMagic));
  PutU32(header + 8, kFormatVersion);
  PutU32(header + 12, kHeaderSize);
  PutU64(header + 16, Xxh64(material));
  PutU64(header + 24, Xxh64(material, kKeyCheckSeed));
  PutU64(header + 32, binary.size());
  PutU64(header + 40, Xxh64(binary));

  const std::string path = EntryPath(key);
  // A unique temporary file in the same directory, renamed over the entry: readers see the old
  // entry, no entry, or the complete new one.
  std::string tmp = path + ".tmp.XXXXXX";
  std::vector<char> tmp_name(tmp.begin(), tmp.end());
  tmp_name.push_back('\0');
  int fd = ::mkstemp(tmp_name.data());
  if (fd < 0) {
    store_failures_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  bool ok = WriteFully(fd, header, kHeaderSize) && WriteFully(fd, binary.data(), binary.size());
  ok = (::close(fd) == 0) && ok;
  ok = ok && ::rename(tmp_name.data(), path.c_str()) == 0;
  if (!ok) {
    ::unlink(tmp_name.data());
    store_failures_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  stores_.fetch_add(1, std::memory_order_relaxed);
}

ProgramCacheStats ProgramCache::stats() const {
  ProgramCacheStats s;
  s.hits = hits_.load(std::memory_order_relaxed);
  s.misses = misses_.load(std::memory_order_relaxed);
  s.corrupt = corrupt_.load(std::memory_order_relaxed);
  s.rejected = rejected_.load(std::memory_order_relaxed);
  s.stores = stores_.load(std::memory_order_relaxed);
  s.store_failures = store_failures_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace sorun
