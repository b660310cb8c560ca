// The on-disk OpenCL program-binary cache: keys, the entry format, corruption handling, unusable
// directories, and its use by "opencl" modules on a real device (miss, hit, corrupt entry rebuilt).
#include "backends/opencl/program_cache.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <thread>
#include <vector>

#include "backends/opencl/opencl_devices.h"
#include "backends/opencl/opencl_module.h"
#include "tests/opencl/opencl_test_util.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using testing::DeviceFloats;
using testing::HostFloats;
using testing::MakeFunctionInfo;

ProgramCacheKey Key(std::string_view source, std::string_view options = "") {
  ProgramCacheKey key;
  key.source = source;
  key.device_name = "dev";
  key.device_version = "OpenCL 3.0";
  key.driver_version = "1.0";
  key.platform_name = "plat";
  key.platform_version = "OpenCL 3.0 plat";
  key.build_options = options;
  return key;
}

std::shared_ptr<ProgramCache> CacheIn(const std::string& dir) {
  ProgramCacheOptions options;
  options.directory = dir;
  return std::make_shared<ProgramCache>(options);
}

// Restores an environment variable when it goes out of scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

TEST(ProgramCacheTest, DirectoryComesFromTheEnvironment) {
  {
    ScopedEnv a("SORUN_OPENCL_CACHE_DIR", "/x/explicit");
    ScopedEnv b("XDG_CACHE_HOME", "/x/xdg");
    EXPECT_EQ(*ProgramCache::DefaultDirectory(), "/x/explicit");
  }
  {
    ScopedEnv a("SORUN_OPENCL_CACHE_DIR", nullptr);
    ScopedEnv b("XDG_CACHE_HOME", "/x/xdg");
    EXPECT_EQ(*ProgramCache::DefaultDirectory(), "/x/xdg/sorun/opencl");
  }
  {
    ScopedEnv a("SORUN_OPENCL_CACHE_DIR", "");
    ScopedEnv b("XDG_CACHE_HOME", nullptr);
    ScopedEnv c("HOME", "/x/home");
    EXPECT_EQ(*ProgramCache::DefaultDirectory(), "/x/home/.cache/sorun/opencl");
  }
  {
    ScopedEnv a("SORUN_OPENCL_CACHE_DIR", nullptr);
    ScopedEnv b("XDG_CACHE_HOME", nullptr);
    ScopedEnv c("HOME", nullptr);
    EXPECT_EQ(ProgramCache::DefaultDirectory().status().code(), StatusCode::kNotFound);
    ProgramCache cache{ProgramCacheOptions()};
    EXPECT_FALSE(cache.enabled());
    EXPECT_NE(cache.disabled_reason().find("SORUN_OPENCL_CACHE_DIR"), std::string::npos);
  }
}

TEST(ProgramCacheTest, KeyCoversEveryField) {
  uint64_t base = ProgramCache::ComputeKey(Key("src"));
  EXPECT_EQ(ProgramCache::ComputeKey(Key("src")), base);
  EXPECT_NE(ProgramCache::ComputeKey(Key("src2")), base);
  EXPECT_NE(ProgramCache::ComputeKey(Key("src", "-cl-fast-relaxed-math")), base);
  for (int field = 0; field < 5; ++field) {
    ProgramCacheKey k = Key("src");
    std::string_view* f[] = {&k.device_name, &k.device_version, &k.driver_version, &k.platform_name,
                             &k.platform_version};
    *f[field] = "other";
    EXPECT_NE(ProgramCache::ComputeKey(k), base) << field;
  }
  // Field boundaries matter: ("ab", "c") and ("a", "bc") differ.
  ProgramCacheKey x = Key("src"), y = Key("src");
  x.device_name = "ab";
  x.device_version = "c";
  y.device_name = "a";
  y.device_version = "bc";
  EXPECT_NE(ProgramCache::ComputeKey(x), ProgramCache::ComputeKey(y));
}

TEST(ProgramCacheTest, StoreThenLookup) {
  auto cache = CacheIn(testing::MakeTempDir("cache") + "/nested/dir");  // created with parents
  ASSERT_TRUE(cache->enabled()) << cache->disabled_reason();
  std::string binary;
  EXPECT_EQ(cache->Lookup(Key("a"), &binary), ProgramCache::LookupResult::kMiss);
  cache->Store(Key("a"), std::string("\x00\x01binary\xff", 9));
  EXPECT_EQ(cache->Lookup(Key("a"), &binary), ProgramCache::LookupResult::kHit);
  EXPECT_EQ(binary, std::string("\x00\x01binary\xff", 9));
  EXPECT_EQ(cache->Lookup(Key("a", "-O0"), &binary), ProgramCache::LookupResult::kMiss);
  std::string file = testing::ReadFileOrDie(cache->EntryPath(Key("a")));
  EXPECT_EQ(file.size(), ProgramCache::kHeaderSize + 9);
  EXPECT_EQ(file.substr(0, 8), "SORUNCLB");
  ProgramCacheStats s = cache->stats();
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(s.stores, 1u);
  EXPECT_EQ(s.corrupt, 0u);
}

TEST(ProgramCacheTest, CorruptEntriesAreDetected) {
  auto cache = CacheIn(testing::MakeTempDir("cache"));
  ASSERT_TRUE(cache->enabled());
  const std::string payload(1000, 'p');
  cache->Store(Key("a"), payload);
  const std::string path = cache->EntryPath(Key("a"));
  const std::string good = testing::ReadFileOrDie(path);
  std::string binary;
  auto expect_corrupt = [&](const std::string& bytes, const char* what) {
    testing::WriteFileOrDie(path, bytes);
    EXPECT_EQ(cache->Lookup(Key("a"), &binary), ProgramCache::LookupResult::kCorrupt) << what;
    EXPECT_TRUE(binary.empty()) << what;
  };
  std::string flipped = good;
  flipped[ProgramCache::kHeaderSize + 500] ^= 1;
  expect_corrupt(flipped, "payload byte");
  expect_corrupt(good.substr(0, good.size() - 1), "truncated payload");
  expect_corrupt(good.substr(0, 20), "truncated header");
  expect_corrupt("", "empty file");
  std::string magic = good;
  magic[0] = 'X';
  expect_corrupt(magic, "magic");
  std::string version = good;
  version[8] = 9;
  expect_corrupt(version, "version");
  std::string key = good;
  key[17] ^= 0x40;
  expect_corrupt(key, "key");
  std::string size = good;
  size[32] ^= 1;
  expect_corrupt(size, "payload size");
  EXPECT_EQ(cache->stats().corrupt, 8u);
  // Storing again overwrites the bad entry.
  cache->Store(Key("a"), payload);
  EXPECT_EQ(cache->Lookup(Key("a"), &binary), ProgramCache::LookupResult::kHit);
  EXPECT_EQ(binary, payload);
}

TEST(ProgramCacheTest, UnusableDirectoryDisablesCaching) {
  const std::string dir = testing::MakeTempDir("cache");
  testing::WriteFileOrDie(dir + "/file", "x");
  auto cache = CacheIn(dir + "/file/sub");  // a regular file in the path: mkdir fails even as root
  EXPECT_FALSE(cache->enabled());
  EXPECT_NE(cache->disabled_reason().find("cannot create"), std::string::npos) << cache->disabled_reason();
  std::string binary;
  EXPECT_EQ(cache->Lookup(Key("a"), &binary), ProgramCache::LookupResult::kDisabled);
  cache->Store(Key("a"), "bytes");  // a no-op, not an error
  EXPECT_EQ(cache->stats().stores, 0u);
  ProgramCacheOptions off;
  off.enabled = false;
  off.directory = dir;
  EXPECT_FALSE(ProgramCache(off).enabled());
}

TEST(ProgramCacheTest, ConcurrentWritersNeverExposePartialEntries) {
  auto cache = CacheIn(testing::MakeTempDir("cache"));
  ASSERT_TRUE(cache->enabled());
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const std::string payload(64 * 1024, static_cast<char>('a' + t));
      std::string binary;
      for (int i = 0; i < 30; ++i) {
        cache->Store(Key("shared"), payload);
        auto r = cache->Lookup(Key("shared"), &binary);
        if (r != ProgramCache::LookupResult::kHit || binary.size() != payload.size() ||
            binary.find_first_not_of(binary[0]) != std::string::npos) {
          ++bad[t];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(bad[t], 0) << t;
  EXPECT_EQ(cache->stats().store_failures, 0u);
}

// ---- With a real device ----

DeviceModulePayload ScalePayload() {
  DeviceModulePayload p;
  p.fmt = "cl";
  p.functions = {{"scale", MakeFunctionInfo({"handle", "float32", "int32"}, {"blockIdx.x", "threadIdx.x"})}};
  p.data =
      "// Function: scale\n"
      "__kernel void scale(__global float* x, float a, int n) {\n"
      "  int i = get_global_id(0);\n"
      "  if (i < n) x[i] = a * x[i];\n"
      "}\n";
  return p;
}

void ExpectScaleWorks(const Module& m) {
  Tensor t = DeviceFloats({1, 2, 3, 4, 5});
  auto r = m.GetFunction("scale")(t.data(), 3.0, 5, 2, 4);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(HostFloats(t), (std::vector<float>{3, 6, 9, 12, 15}));
}

Module ModuleWith(const std::shared_ptr<ProgramCache>& cache, DeviceModulePayload payload = ScalePayload()) {
  OpenclModuleOptions options;
  options.program_cache = cache;
  auto m = CreateOpenclModule(std::move(payload), options);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return *m;
}

ProgramCacheKey DeviceKey(const std::string& source) {
  const OpenclDeviceInfo* info = *OpenclDevices::Global().Info(0);
  return ProgramCacheKey{
      source, info->name, info->version, info->driver_version, info->platform_name, info->platform_version, ""};
}

class ProgramCacheDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SORUN_REQUIRE_OPENCL();
    ASSERT_TRUE(OpenclDevices::Global().SetCurrentDevice(0).ok());
  }
};

TEST_F(ProgramCacheDeviceTest, MissThenHitAcrossModules) {
  auto cache = CacheIn(testing::MakeTempDir("cl_cache"));
  ASSERT_TRUE(cache->enabled());
  ExpectScaleWorks(ModuleWith(cache));
  ProgramCacheStats s = cache->stats();
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.hits, 0u);
  EXPECT_EQ(s.stores, 1u);
  // The piece's source (without the delimiter line) keys the entry.
  const std::string piece = ScalePayload().data.substr(std::string("// Function: scale\n").size());
  EXPECT_TRUE(testing::FileExists(cache->EntryPath(DeviceKey(piece))));

  // A second module instance with the same source loads the binary.
  ExpectScaleWorks(ModuleWith(cache));
  s = cache->stats();
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.rejected, 0u);
  EXPECT_EQ(s.stores, 1u);
  // Other build options are another entry.
  OpenclModuleOptions options;
  options.program_cache = cache;
  options.build_options = "-cl-fast-relaxed-math";
  auto m = CreateOpenclModule(ScalePayload(), options);
  ASSERT_TRUE(m.ok());
  ExpectScaleWorks(*m);
  EXPECT_EQ(cache->stats().misses, 2u);
}

TEST_F(ProgramCacheDeviceTest, CorruptEntryIsRebuiltAndOverwritten) {
  auto cache = CacheIn(testing::MakeTempDir("cl_cache"));
  ExpectScaleWorks(ModuleWith(cache));
  const std::string piece = ScalePayload().data.substr(std::string("// Function: scale\n").size());
  const std::string path = cache->EntryPath(DeviceKey(piece));
  std::string bytes = testing::ReadFileOrDie(path);
  ASSERT_GT(bytes.size(), ProgramCache::kHeaderSize + 16);
  for (size_t i = ProgramCache::kHeaderSize; i < ProgramCache::kHeaderSize + 16; ++i) bytes[i] = '\xAA';
  testing::WriteFileOrDie(path, bytes);

  ExpectScaleWorks(ModuleWith(cache));  // still correct: built from source
  ProgramCacheStats s = cache->stats();
  EXPECT_EQ(s.corrupt, 1u);
  EXPECT_EQ(s.hits, 0u);
  EXPECT_EQ(s.stores, 2u);  // rewritten
  ExpectScaleWorks(ModuleWith(cache));
  EXPECT_EQ(cache->stats().hits, 1u);  // the rewritten entry is good
}

TEST_F(ProgramCacheDeviceTest, BinaryTheDriverRefusesFallsBackToSource) {
  auto cache = CacheIn(testing::MakeTempDir("cl_cache"));
  const std::string piece = ScalePayload().data.substr(std::string("// Function: scale\n").size());
  // A well-formed entry whose payload is not a program binary.
  cache->Store(DeviceKey(piece), "definitely not a device binary");
  ExpectScaleWorks(ModuleWith(cache));
  ProgramCacheStats s = cache->stats();
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.rejected, 1u);
  EXPECT_EQ(s.stores, 2u);
  ExpectScaleWorks(ModuleWith(cache));
  EXPECT_EQ(cache->stats().rejected, 1u);
}

TEST_F(ProgramCacheDeviceTest, UnwritableCacheDirectoryStillWorks) {
  const std::string dir = testing::MakeTempDir("cl_cache");
  testing::WriteFileOrDie(dir + "/blocker", "x");
  auto cache = CacheIn(dir + "/blocker/cache");
  EXPECT_FALSE(cache->enabled());
  ExpectScaleWorks(ModuleWith(cache));
  ExpectScaleWorks(ModuleWith(cache));
  // Disabled by option: no cache at all.
  OpenclModuleOptions options;
  options.disable_program_cache = true;
  auto node = OpenclModuleNode::Create(ScalePayload(), options);
  ASSERT_TRUE(node.ok());
  EXPECT_EQ((*node)->program_cache(), nullptr);
  ExpectScaleWorks(Module(ObjectPtr<ModuleNode>(*node)));
}

TEST_F(ProgramCacheDeviceTest, DefaultCacheFollowsTheEnvironment) {
  // SetUpOpenclTestEnvironment pointed SORUN_OPENCL_CACHE_DIR at TEST_TMPDIR before first use.
  std::shared_ptr<ProgramCache> cache = ProgramCache::Default();
  ASSERT_TRUE(cache->enabled()) << cache->disabled_reason();
  EXPECT_EQ(cache->directory(), std::getenv("SORUN_OPENCL_CACHE_DIR"));
  auto m = CreateOpenclModule(ScalePayload());
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(static_cast<OpenclModuleNode*>(m->get())->program_cache(), cache.get());
  const uint64_t before = cache->stats().hits + cache->stats().misses + cache->stats().corrupt;
  ExpectScaleWorks(*m);
  EXPECT_EQ(cache->stats().hits + cache->stats().misses + cache->stats().corrupt, before + 1);
}

}  // namespace
}  // namespace sorun
