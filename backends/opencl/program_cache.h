// ProgramCache: an on-disk cache of OpenCL program binaries, so that a program compiled once from
// source is loaded with clCreateProgramWithBinary next time (in this or any later process).
//
// Key: XXH64 over the program source, the device's name/version, the driver version, the platform's
// name/version and the build options (plus a second, differently seeded XXH64 of the same material
// stored in the entry to rule out collisions). Location: $SORUN_OPENCL_CACHE_DIR, else
// $XDG_CACHE_HOME/sorun/opencl, else $HOME/.cache/sorun/opencl; SORUN_OPENCL_CACHE=0 disables the
// default cache. One file per entry, "<key as 16 hex digits>.clbin":
//
//   offset 0  "SORUNCLB"            magic
//          8  u32 format version    (1)
//         12  u32 header size       (48)
//         16  u64 key               XXH64(material, seed 0)
//         24  u64 key check         XXH64(material, seed kKeyCheckSeed)
//         32  u64 payload size
//         40  u64 payload checksum  XXH64(payload, seed 0)
//         48  payload               the device's program binary
//
// all little-endian. An entry that is truncated, has a bad magic/version/key/size/checksum is
// reported as kCorrupt, and the caller rebuilds it from source and overwrites it. Entries are written
// to a unique temporary file in the cache directory and renamed into place, so concurrent writers
// (threads or processes) never expose a partial entry. A directory that cannot be created or written
// disables the cache (never an error); failed writes are only counted.
//
// Thread-safety: all methods are thread-safe; statistics are atomic counters.
#ifndef SORUN_BACKENDS_OPENCL_PROGRAM_CACHE_H_
#define SORUN_BACKENDS_OPENCL_PROGRAM_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sorun {

// What identifies a program binary. Borrowed views; valid for the duration of a call.
struct ProgramCacheKey {
  std::string_view source;
  std::string_view device_name;
  std::string_view device_version;
  std::string_view driver_version;
  std::string_view platform_name;
  std::string_view platform_version;
  std::string_view build_options;
};

// Counters since the cache object was created.
struct ProgramCacheStats {
  uint64_t hits = 0;            // lookups answered with a valid entry
  uint64_t misses = 0;          // lookups that found no entry
  uint64_t corrupt = 0;         // entries found invalid (truncated, bad header/checksum): ignored, rebuilt
  uint64_t rejected = 0;        // valid entries the driver refused to load: rebuilt from source
  uint64_t stores = 0;          // entries written
  uint64_t store_failures = 0;  // entries that could not be written (the cache keeps working)
};

struct ProgramCacheOptions {
  bool enabled = true;
  // Cache directory; empty = ProgramCache::DefaultDirectory(). Created (with parents) if missing.
  std::string directory;
};

// One cache directory (see the file comment). Shared by modules through shared_ptr; thread-safe.
class ProgramCache {
 public:
  static constexpr uint32_t kFormatVersion = 1;
  static constexpr uint32_t kHeaderSize = 48;
  static constexpr uint64_t kKeyCheckSeed = 0x736f72756e2d636cULL;  // "sorun-cl"
  // Entries larger than this are treated as corrupt rather than read.
  static constexpr uint64_t kMaxPayloadBytes = uint64_t{1} << 30;

  enum class LookupResult { kHit, kMiss, kCorrupt, kDisabled };

  explicit ProgramCache(ProgramCacheOptions options);
  ProgramCache(const ProgramCache&) = delete;
  ProgramCache& operator=(const ProgramCache&) = delete;

  // The process-wide cache used by modules created without an explicit cache: configured from the
  // environment on first use, then fixed. Never null (possibly disabled).
  static std::shared_ptr<ProgramCache> Default();
  // The directory the environment selects (see the file comment); NotFound when none of
  // SORUN_OPENCL_CACHE_DIR, XDG_CACHE_HOME, HOME is set (non-empty).
  static StatusOr<std::string> DefaultDirectory();

  bool enabled() const { return enabled_; }
  const std::string& directory() const { return directory_; }
  // Why the cache is disabled ("" when enabled).
  const std::string& disabled_reason() const { return disabled_reason_; }

  // The entry key of `key` (XXH64 of its material).
  static uint64_t ComputeKey(const ProgramCacheKey& key);
  // Path of the entry file for `key` (also when disabled, for tools and tests).
  std::string EntryPath(const ProgramCacheKey& key) const;

  // Reads the entry for `key` into `*binary` on kHit.
  LookupResult Lookup(const ProgramCacheKey& key, std::string* binary);
  // Writes (or overwrites) the entry for `key` atomically. No-op when disabled; failures only count.
  void Store(const ProgramCacheKey& key, std::string_view binary);
  // Records that the driver refused a binary Lookup returned (the caller then rebuilds and stores).
  void RecordRejected() { rejected_.fetch_add(1, std::memory_order_relaxed); }

  ProgramCacheStats stats() const;

 private:
  bool enabled_ = false;
  std::string directory_;
  std::string disabled_reason_;
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
  std::atomic<uint64_t> corrupt_{0};
  std::atomic<uint64_t> rejected_{0};
  std::atomic<uint64_t> stores_{0};
  std::atomic<uint64_t> store_failures_{0};
};

}  // namespace sorun

#endif  // SORUN_BACKENDS_OPENCL_PROGRAM_CACHE_H_
