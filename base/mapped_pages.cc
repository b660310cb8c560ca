#include "base/mapped_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

namespace sorun {
namespace {

uintptr_t PageSize() {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return page;
}

}  // namespace

bool AdvisePages(const void* data, uint64_t bytes, PageAdvice advice) {
  if (data == nullptr || bytes == 0) return true;
#ifndef MADV_POPULATE_READ
  constexpr int MADV_POPULATE_READ = 22;  // Linux 5.14 uapi values; older headers lack them
  constexpr int MADV_POPULATE_WRITE = 23;
#endif
  const uintptr_t page = PageSize();
  const uintptr_t first = reinterpret_cast<uintptr_t>(data);
  const uintptr_t begin = first / page * page;
  const uintptr_t end = (first + static_cast<uintptr_t>(bytes) + page - 1) / page * page;
  int flag = MADV_WILLNEED;
  if (advice == PageAdvice::kPopulateRead) flag = MADV_POPULATE_READ;
  if (advice == PageAdvice::kPopulateWrite) flag = MADV_POPULATE_WRITE;
  return madvise(reinterpret_cast<void*>(begin), end - begin, flag) == 0;
}

void PopulatePages(void* data, uint64_t bytes, bool write) {
  if (data == nullptr || bytes == 0) return;
  if (AdvisePages(data, bytes, write ? PageAdvice::kPopulateWrite : PageAdvice::kPopulateRead)) return;
  const uintptr_t page = PageSize();
  const uintptr_t first = reinterpret_cast<uintptr_t>(data);
  auto* p = static_cast<volatile uint8_t*>(data);
  for (uint64_t off = 0; off < bytes; off = (first + off) / page * page + page - first) {
    const uint8_t v = p[off];
    if (write) p[off] = v;
  }
}

void ReleaseMappedPages(uintptr_t begin, uintptr_t end) {
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

std::pair<uintptr_t, uintptr_t> CopyAndReleaseSource(uint8_t* dst, const uint8_t* src, uint64_t bytes) {
  constexpr uint64_t kChunk = 1ull << 20;
  constexpr uintptr_t kLookBehind = 2u << 20;  // the largest page-cache folio mapped at once (PMD)
  const uintptr_t page = PageSize();
  const uintptr_t base = reinterpret_cast<uintptr_t>(src);
  const uintptr_t first = (base + page - 1) / page * page;  // first page wholly inside the tensor
  uintptr_t released = first;
  for (uint64_t off = 0; off < bytes; off += kChunk) {
    const uint64_t n = bytes - off < kChunk ? bytes - off : kChunk;
    std::memcpy(dst + off, src + off, static_cast<size_t>(n));
    const uintptr_t end = (base + off + n) / page * page;
    if (end > released) {
      ReleaseMappedPages(released - first > kLookBehind ? released - kLookBehind : first, end);
      released = end;
    }
  }
  return {first, released};
}

}  // namespace sorun
