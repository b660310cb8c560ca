// ThreadPool: the persistent worker pool behind TVMBackendParallelLaunch / TVMBackendParallelBarrier.
//
// Launch(f, cdata, num_task) runs f(task_id, penv, cdata) for every task_id in [0, penv->num_task):
// num_task = 0 means one task per pool thread; the calling thread runs task 0 itself. When num_task
// is at most the pool size all tasks run concurrently, so tasks may wait on each other through
// Barrier(); larger num_task values are distributed round-robin (every id still runs) and a Barrier
// in such a launch fails instead of deadlocking. A launch from inside a task, or while another thread
// holds the pool, runs inline on the caller with num_task = 1. Workers spin briefly between launches,
// then sleep.
//
// Pools: the process-wide Global() pool (SORUN_NUM_THREADS threads, else one per hardware thread) and
// pools an executor owns, made by Create(ThreadPoolOptions) (their own size, worker CPU affinity and
// spin time; an option set there wins over the environment variable). TVMBackendParallelLaunch uses
// Current(): the pool of the innermost ThreadPool::Scope on the calling thread, else Global().
// Thread-safe: any thread may call Launch; a pool's destructor joins its workers (no launch may be
// in progress on it).
#ifndef SORUN_RUNTIME_THREAD_POOL_H_
#define SORUN_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "runtime/c_runtime_api.h"

namespace sorun {

// What ThreadPool::Create builds. Defaults: the environment's choices, exactly like Global().
struct ThreadPoolOptions {
  // Threads, counting the thread that calls Launch. 0: SORUN_NUM_THREADS, else one per hardware
  // thread. Otherwise 1..ThreadPool::kMaxThreads.
  int num_threads = 0;
  // CPU ids the workers are pinned to: worker i (1..num_threads-1) runs on cpu_affinity[(i - 1) %
  // size]; the launching thread is not moved. Every id must be a CPU this process may run on
  // (sched_getaffinity). Empty: not pinned.
  std::vector<int> cpu_affinity;
  // Microseconds an idle worker polls before it sleeps (0..ThreadPool::kMaxSpinUs). Unset:
  // SORUN_SPIN_US, else the built-in default.
  std::optional<int64_t> spin_us;
};

class ThreadPool {
 public:
  // `num_threads` counts the calling thread; values < 1 mean 1. Spin time: SORUN_SPIN_US or the
  // default; workers not pinned.
  explicit ThreadPool(int num_threads);
  // A pool with `options`. InvalidArgument naming the option and the bad value (a negative or too
  // large thread count or spin time, a CPU id this process cannot run on); Internal when a worker
  // cannot be pinned.
  static StatusOr<std::shared_ptr<ThreadPool>> Create(const ThreadPoolOptions& options);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The process-wide pool (created on first use).
  static ThreadPool& Global();
  // The pool parallel launches of the calling thread go to: the innermost Scope's, else Global().
  static ThreadPool& Current();

  // Makes `pool` the calling thread's Current() until destroyed (nullptr: Global()); scopes nest.
  // Must be destroyed on the thread that made it, and `pool` must outlive it.
  class Scope {
   public:
    explicit Scope(ThreadPool* pool);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    ThreadPool* previous_;
  };

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
  // Microseconds an idle worker polls before it sleeps.
  int64_t spin_us() const { return spin_ns_ / 1000; }
  // CPU ids worker i is pinned to (see ThreadPoolOptions); empty when not pinned.
  const std::vector<int>& cpu_affinity() const { return cpu_affinity_; }

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

  ThreadPool(int num_threads, int64_t spin_us, std::vector<int> cpu_affinity);
  // Pins the workers to cpu_affinity_ (Create).
  Status PinWorkers();
  void WorkerLoop(int worker_index);
  // Runs the tasks of the current job assigned to `slot`; returns false if any failed.
  void RunSlot(int slot);
  static int RunInline(FTVMParallelLambda f, void* cdata);

  const int num_threads_;
  const int64_t spin_ns_;  // idle polling before a worker sleeps
  const std::vector<int> cpu_affinity_;
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
