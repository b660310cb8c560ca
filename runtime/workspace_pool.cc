#include "runtime/workspace_pool.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "runtime/device_api.h"

namespace sorun {
namespace {

constexpr size_t kPageSize = 4096;
std::atomic<uint64_t> g_total_reserved{0};
std::atomic<uint64_t> g_peak_reserved{0};

void NoteReserved(int64_t delta) {
  uint64_t now = g_total_reserved.fetch_add(static_cast<uint64_t>(delta)) + static_cast<uint64_t>(delta);
  uint64_t peak = g_peak_reserved.load(std::memory_order_relaxed);
  while (now > peak && !g_peak_reserved.compare_exchange_weak(peak, now)) {
  }
}

}  // namespace

WorkspacePool& WorkspacePool::ThreadLocal() {
  thread_local WorkspacePool pool;
  return pool;
}

WorkspacePool::~WorkspacePool() {
  for (const Block& b : free_) Release(b);
  for (const Block& b : in_use_) Release(b);
}

void WorkspacePool::Release(const Block& block) {
  std::free(block.ptr);
  reserved_bytes_ -= block.size;
  NoteReserved(-static_cast<int64_t>(block.size));
}

void* WorkspacePool::Alloc(size_t nbytes) {
  if (nbytes == 0) nbytes = 1;
  if (nbytes > SIZE_MAX - kPageSize) return nullptr;
  size_t size = (nbytes + kPageSize - 1) / kPageSize * kPageSize;
  // Best fit among cached blocks (ascending size).
  auto it = std::lower_bound(free_.begin(), free_.end(), size, [](const Block& b, size_t s) { return b.size < s; });
  Block block;
  if (it != free_.end()) {
    block = *it;
    free_.erase(it);
  } else {
    // Nothing large enough: drop the largest cached block (it is too small) and allocate anew.
    if (!free_.empty()) {
      Release(free_.back());
      free_.pop_back();
    }
    void* ptr = nullptr;
    if (posix_memalign(&ptr, kAllocAlignment, size) != 0) return nullptr;
    block = Block{ptr, size};
    reserved_bytes_ += size;
    NoteReserved(static_cast<int64_t>(size));
  }
  in_use_.push_back(block);
  return block.ptr;
}

bool WorkspacePool::Free(void* ptr) {
  // LIFO fast path, else search from the most recent.
  for (size_t i = in_use_.size(); i-- > 0;) {
    if (in_use_[i].ptr != ptr) continue;
    Block block = in_use_[i];
    in_use_.erase(in_use_.begin() + static_cast<std::ptrdiff_t>(i));
    auto pos =
        std::lower_bound(free_.begin(), free_.end(), block.size, [](const Block& b, size_t s) { return b.size < s; });
    free_.insert(pos, block);
    return true;
  }
  return false;
}

uint64_t WorkspacePool::TotalReservedBytes() { return g_total_reserved.load(); }
uint64_t WorkspacePool::PeakReservedBytes() { return g_peak_reserved.load(); }

}  // namespace sorun
