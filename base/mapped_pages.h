// Page-level handling of bytes read in place from a mapped file (a loaded library's blob): copying a
// tensor out while giving the source pages back, so the copy does not leave the source resident too.
// Only for PRIVATE, NEVER-WRITTEN file mappings: MADV_DONTNEED drops the pages from this process (the
// page cache keeps them; a later read faults them in again from the file). On anonymous memory it
// would zero the bytes: callers must know the range is file-backed. Pure functions; thread-safe.
#ifndef SORUN_BASE_MAPPED_PAGES_H_
#define SORUN_BASE_MAPPED_PAGES_H_

#include <cstdint>
#include <utility>

namespace sorun {

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
