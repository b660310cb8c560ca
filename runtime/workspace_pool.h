// WorkspacePool: the calling thread's pool of 64-byte aligned scratch blocks behind
// TVMBackendAllocWorkspace on the CPU.
//
// Kernels allocate and free workspace in LIFO order; the pool keeps freed blocks and hands the
// best-fitting one back, so steady-state runs allocate nothing. Each thread owns its pool (created
// on first use, released at thread exit); only the owning thread may call Alloc/Free.
// Reserved bytes across all threads are reported for the memory plan.
#ifndef SORUN_RUNTIME_WORKSPACE_POOL_H_
#define SORUN_RUNTIME_WORKSPACE_POOL_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sorun {

class WorkspacePool {
 public:
  WorkspacePool() = default;
  WorkspacePool(const WorkspacePool&) = delete;
  WorkspacePool& operator=(const WorkspacePool&) = delete;
  ~WorkspacePool();

  // The pool of the calling thread.
  static WorkspacePool& ThreadLocal();

  // A 64-byte aligned block of at least `nbytes`; nullptr when the system is out of memory.
  void* Alloc(size_t nbytes);
  // Returns a block to the pool; false if `ptr` is not a live block of this pool.
  bool Free(void* ptr);

  // Bytes this pool holds from the system (live + cached blocks).
  size_t reserved_bytes() const { return reserved_bytes_; }
  // Bytes held by all pools of all threads, now and at most so far.
  static uint64_t TotalReservedBytes();
  static uint64_t PeakReservedBytes();

 private:
  struct Block {
    void* ptr;
    size_t size;
  };
  void Release(const Block& block);

  std::vector<Block> free_;    // cached blocks, ascending size
  std::vector<Block> in_use_;  // live blocks, allocation order
  size_t reserved_bytes_ = 0;
};

}  // namespace sorun

#endif  // SORUN_RUNTIME_WORKSPACE_POOL_H_
