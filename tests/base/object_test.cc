// Object's reference count: ownership through ObjectPtr, and TryIncRef (the weak caches' "take a
// reference if still alive") ordered after the last DecRef in a way ThreadSanitizer also understands
// (run by the tsan CI job: tag concurrency).
#include "base/object.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <mutex>
#include <thread>

#include "gtest/gtest.h"

namespace sorun {
namespace {

class Counted final : public Object {
 public:
  explicit Counted(int* destroyed) : destroyed_(destroyed) {}
  ~Counted() override { ++*destroyed_; }

 private:
  int* destroyed_;
};

TEST(ObjectTest, LastReferenceDeletesAndTryIncRefOnlyRevivesTheLiving) {
  int destroyed = 0;
  ObjectPtr<Counted> a = ObjectPtr<Counted>::FromRaw(new Counted(&destroyed));
  EXPECT_EQ(a->use_count(), 1);
  ObjectPtr<Counted> b = a;
  EXPECT_EQ(a->use_count(), 2);
  EXPECT_TRUE(a->TryIncRef());
  ObjectPtr<Counted> c = ObjectPtr<Counted>::Adopt(a.get());
  EXPECT_EQ(a->use_count(), 3);
  b = ObjectPtr<Counted>();
  c = ObjectPtr<Counted>();
  EXPECT_EQ(destroyed, 0);
  a = ObjectPtr<Counted>();
  EXPECT_EQ(destroyed, 1);
}

// A weak cache, as LibraryModuleNode's live libraries are: the cache thread holds the cache's lock
// while it asks TryIncRef for an entry whose count just reached 0, and the entry's destructor waits
// for that lock (to erase itself) before the memory goes. The cache thread is ordered after the last
// owner only through TryIncRef (their other signals are raw system calls TSan does not see), and then
// touches what the owner wrote before letting go, as a cache building a replacement does. Under TSan
// that was reported as a race (ZooConcurrencyTest.ConcurrentLoadsOfDifferentFiles: a new library node
// rewriting the context slots a kernel of the dying one had read) until TryIncRef's first load acquired.
class ErasedUnderLock final : public Object {
 public:
  ErasedUnderLock(std::mutex* cache_lock, int dying) : cache_lock_(cache_lock), dying_(dying) {}
  ~ErasedUnderLock() override {
    const char c = 1;
    syscall(SYS_write, dying_, &c, 1);
    std::lock_guard<std::mutex> erase(*cache_lock_);
  }

 private:
  std::mutex* cache_lock_;
  int dying_;
};

TEST(ObjectTest, TryIncRefOnADyingObjectIsOrderedAfterItsLastOwner) {
  int cache_locked[2];
  int dying[2];
  ASSERT_EQ(pipe(cache_locked), 0);
  ASSERT_EQ(pipe(dying), 0);
  std::mutex cache_lock;
  auto* object = new ErasedUnderLock(&cache_lock, dying[1]);
  ObjectPtr<ErasedUnderLock> owner = ObjectPtr<ErasedUnderLock>::FromRaw(object);
  long written_by_owner = 0;
  bool revived = true;
  long seen = 0;
  std::thread last_owner([&] {
    char c = 0;
    if (syscall(SYS_read, cache_locked[0], &c, 1) != 1) return;
    written_by_owner = 42;
    owner = ObjectPtr<ErasedUnderLock>();  // count 0: the destructor waits for the cache's lock
  });
  std::thread cache([&] {
    std::lock_guard<std::mutex> lookup(cache_lock);
    const char c = 1;
    syscall(SYS_write, cache_locked[1], &c, 1);
    char d = 0;
    if (syscall(SYS_read, dying[0], &d, 1) != 1) return;
    revived = object->TryIncRef();
    if (!revived) seen = written_by_owner;
  });
  last_owner.join();
  cache.join();
  for (int fd : {cache_locked[0], cache_locked[1], dying[0], dying[1]}) close(fd);
  EXPECT_FALSE(revived);
  EXPECT_EQ(seen, 42);
}

}  // namespace
}  // namespace sorun
