// Page-level handling of memory: the one place that rounds a byte range to whole pages and advises the
// kernel about them.
//   - Paging in (AdvisePages, PopulatePages): read-ahead of a mapped blob at load, and an executor's
//     Warmup (weights read in place, activation memory); never changes a byte.
//   - Giving pages back (ReleaseMappedPages, CopyAndReleaseSource): copying a tensor out of a mapped
//     file while releasing the source pages, so the copy does not leave the source resident too. Only
//     for PRIVATE, NEVER-WRITTEN file mappings: MADV_DONTNEED drops the pages from this process (the
//     page cache keeps them; a later read faults them in again from the file). On anonymous memory it
//     would zero the bytes: callers must know the range is file-backed.
// Pure functions; thread-safe.
#ifndef SORUN_BASE_MAPPED_PAGES_H_
#define SORUN_BASE_MAPPED_PAGES_H_

#include <cstdint>
#include <utility>

namespace sorun {

// What AdvisePages asks of the kernel for the whole pages around a range.
enum class PageAdvice {
  kWillNeed,       // start reading them in the background (MADV_WILLNEED)
  kPopulateRead,   // map them now, for reading (MADV_POPULATE_READ, Linux 5.14+)
  kPopulateWrite,  // map them now, writable (MADV_POPULATE_WRITE, Linux 5.14+; private or anonymous memory)
};

// madvise over the whole pages around [data, data + bytes). False when the kernel refused (a
// populate advice before Linux 5.14, EINVAL); nothing has changed then.
bool AdvisePages(const void* data, uint64_t bytes, PageAdvice advice);

// Maps the pages of [data, data + bytes) into the process without changing their contents: a populate
// advice on the whole pages around the range (populating never changes a byte). On older kernels each
// page inside the range is touched instead (a volatile read, and for `write` the same value written
// back: only bytes of the range itself, which the caller owns).
void PopulatePages(void* data, uint64_t bytes, bool write);

// Drops the pages of [begin, end) (page-aligned) from this process (MADV_DONTNEED; failures ignored).
void ReleaseMappedPages(uintptr_t begin, uintptr_t end);

// Copies `bytes` from the mapped file bytes at `src` into `dst`, releasing the source pages that lie
// wholly inside [src, src + bytes) as the copy passes them. Copying in chunks bounds the peak to the
// copy plus about one chunk of source, instead of the copy plus the whole source tensor (64 MiB for one
// 4096x4096 float32 weight). Each release also covers a window behind the cursor: a read fault maps
// neighbouring page-cache pages too (fault-around, whole large folios), including already released
// ones. Returns the released range; the caller sweeps it again (ReleaseMappedPages) once every tensor
// is copied, since faults in the next tensor can map this one's tail the same way.
std::pair<uintptr_t, uintptr_t> CopyAndReleaseSource(uint8_t* dst, const uint8_t* src, uint64_t bytes);

}  // namespace sorun

#endif  // SORUN_BASE_MAPPED_PAGES_H_
