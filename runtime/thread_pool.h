// ThreadPool: the persistent worker pool behind TVMBackendParallelLaunch / TVMBackendParallelBarrier.
//
// Launch(f, cdata, num_task) runs f(task_id, penv, cdata) for every task_id in [0, penv->num_task):
// num_task = 0 means one task per pool thread; the calling thread runs task 0 itself. When num_task
// is at most the pool size all tasks run concurrently, so tasks may wait on each other through
// Barrier(); larger num_task values are distributed round-robin (every id still runs) and a Barrier
// in such a launch fails instead of deadlocking. A launch from inside a task, or while another thread
// holds the pool, runs inline on the caller with num_task = 1. Workers spin briefly between launches,
// then sleep. The pool size is SORUN_NUM_THREADS or the number of hardware threads.
// Thread-safe: any thread may call Launch.
#ifndef SORUN_RUNTIME_THREAD_POOL_H_
#define SORUN_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/c_runtime_api.h"
#include "base/status.h"

namespace sorun {

class ThreadPool {
 public:
  // `num_threads` counts the calling thread; values < 1 mean 1.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The process-wide pool (created on first use).
  static ThreadPool& Global();
  // SORUN_NUM_THREADS if set (1..kMaxThreads), else std::thread::hardware_concurrency(). A malformed
  // value means the default here; ConfiguredNumThreads() / CheckSorunEnvironment() report it.
  static int DefaultNumThreads();
  // SORUN_NUM_THREADS and SORUN_SPIN_US, parsed strictly (base/env_vars.h): nullopt when unset,
  // InvalidArgument naming the variable and the accepted values when malformed.
  static constexpr int64_t kMaxThreads = 1024;
  static constexpr int64_t kMaxSpinUs = 1000000;
  static StatusOr<std::optional<int64_t>> ConfiguredNumThreads();
  static StatusOr<std::optional<int64_t>> ConfiguredSpinUs();

  int num_threads() const { return num_threads_; }

  // Returns 0, or -1 with the first failing task's message as the caller's last error.
  int Launch(FTVMParallelLambda f, void* cdata, int num_task);
  // TVMBackendParallelBarrier.
  static int Barrier(int task_id, TVMParallelGroupEnv* penv);

 private:
  struct BarrierState {
    std::atomic<int32_t> arrived{0};
    std::atomic<uint32_t> generation{0};
    int32_t num_task = 1;
    bool concurrent = true;
  };

  void WorkerLoop(int worker_index);
  // Runs the tasks of the current job assigned to `slot`; returns false if any failed.
  void RunSlot(int slot);
  static int RunInline(FTVMParallelLambda f, void* cdata);

  const int num_threads_;
  std::vector<std::thread> workers_;

  std::mutex launch_mutex_;  // one launch at a time

  // Current job (written by the launcher before publishing a new generation).
  FTVMParallelLambda job_f_ = nullptr;
  void* job_cdata_ = nullptr;
  int job_num_task_ = 0;
  TVMParallelGroupEnv job_env_{};
  BarrierState barrier_;
  std::atomic<bool> job_failed_{false};
  std::mutex error_mutex_;
  std::string job_error_;

  // Wake-up protocol.
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> launcher_sleeping_{false};
  std::atomic<bool> stop_{false};
  std::mutex wake_mutex_;
  std::condition_variable wake_cv_;
  std::condition_variable done_cv_;
};

}  // namespace sorun

#endif  // SORUN_RUNTIME_THREAD_POOL_H_
