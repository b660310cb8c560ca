#include "base/mapped_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

namespace sorun {

void ReleaseMappedPages(uintptr_t begin, uintptr_t end) {
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

std::pair<uintptr_t, uintptr_t> CopyAndReleaseSource(uint8_t* dst, const uint8_t* src, uint64_t bytes) {
  constexpr uint64_t kChunk = 1ull << 20;
  constexpr uintptr_t kLookBehind = 2u << 20;  // the largest page-cache folio mapped at once (PMD)
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
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
