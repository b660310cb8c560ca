// MemoryFile: an anonymous file in memory (memfd_create), written once, then sealed read-only, so a model
// that arrives as bytes (a buffer, a decrypted stream) can be mapped and dlopen'ed (/proc/self/fd/N)
// without anything being written to a file system.
//
// Owns the descriptor (closed by the destructor unless Release()d). Writing is the PlaintextSink a
// DecryptHook receives. After Seal() the size and contents can no longer change (F_SEAL_WRITE,
// F_SEAL_GROW, F_SEAL_SHRINK, F_SEAL_SEAL), so bytes checked through a mapping are the bytes any later
// mapping sees. One thread writes; after Seal() the object is read-only and thread-compatible.
#ifndef SORUN_BASE_MEMORY_FILE_H_
#define SORUN_BASE_MEMORY_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/load_hooks.h"
#include "base/status.h"

namespace sorun {

class MemoryFile final : public PlaintextSink {
 public:
  // A new, empty memory file; `label` is the name shown in /proc/self/fd and /proc/self/maps
  // ("memfd:<label>"). Unimplemented when the kernel has no memfd_create (Linux < 3.17) or sealing.
  static StatusOr<MemoryFile> Create(const std::string& label);
  MemoryFile(MemoryFile&& other) noexcept;
  MemoryFile& operator=(MemoryFile&& other) noexcept;
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  ~MemoryFile() override;

  // PlaintextSink. Appends at the end; ResourceExhausted when memory runs out (ENOSPC/ENOMEM/EFBIG),
  // FailedPrecondition after Seal().
  Status Write(const void* data, size_t size) override;
  // Sizes the file for `size` bytes at once (the unwritten tail is cut off again by Seal()).
  Status Reserve(size_t size) override;
  // Fixes the size at the bytes written and seals the file against any change.
  Status Seal();

  // The bytes written so far (the final size after Seal()).
  uint64_t size() const { return written_; }
  int fd() const { return fd_; }
  // Gives up ownership of the descriptor (the caller closes it).
  int Release();

 private:
  explicit MemoryFile(int fd) : fd_(fd) {}
  int fd_ = -1;
  uint64_t written_ = 0;
  uint64_t reserved_ = 0;
  bool sealed_ = false;
};

}  // namespace sorun

#endif  // SORUN_BASE_MEMORY_FILE_H_
