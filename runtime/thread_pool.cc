#include "runtime/thread_pool.h"

#include <chrono>
#include <cstdlib>

#include "base/env_vars.h"
#include "runtime/last_error.h"

namespace sorun {
namespace {

// True on pool workers and on a launcher while it runs tasks: a nested launch runs inline.
thread_local bool t_in_parallel_region = false;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

constexpr int kSpinIterations = 4000;
// Between launches a worker keeps polling this long before it sleeps: waking a sleeping thread costs
// tens to hundreds of microseconds, more than many small operators take. SORUN_SPIN_US overrides it
// (0: sleep at once, for machines shared with other busy processes).
constexpr int64_t kDefaultWorkerSpinUs = 1000;

int64_t WorkerSpinNs() {
  // A bad value falls back to the default here (a worker cannot fail); CheckSorunEnvironment()
  // reports it to the caller of sorun::Initialize() and to the CLI.
  static const int64_t ns = [] {
    auto v = ThreadPool::ConfiguredSpinUs();
    return (v.ok() && v->has_value() ? **v : kDefaultWorkerSpinUs) * 1000;
  }();
  return ns;
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

StatusOr<std::optional<int64_t>> ThreadPool::ConfiguredNumThreads() {
  return GetEnvInt(kEnvNumThreads, 1, kMaxThreads, "threads in the CPU pool; unset: one per hardware thread");
}

StatusOr<std::optional<int64_t>> ThreadPool::ConfiguredSpinUs() {
  return GetEnvInt(kEnvSpinUs, 0, kMaxSpinUs,
                   "microseconds an idle worker polls before it sleeps; unset: " + std::to_string(kDefaultWorkerSpinUs));
}

int ThreadPool::DefaultNumThreads() {
  auto configured = ConfiguredNumThreads();  // a bad value: the default (reported by CheckSorunEnvironment)
  if (configured.ok() && configured->has_value()) return static_cast<int>(**configured);
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

ThreadPool& ThreadPool::Global() {
  static ThreadPool* pool = new ThreadPool(DefaultNumThreads());  // workers live until exit
  return *pool;
}

ThreadPool::ThreadPool(int num_threads) : num_threads_(num_threads < 1 ? 1 : num_threads) {
  workers_.reserve(static_cast<size_t>(num_threads_ - 1));
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(wake_mutex_);
    stop_.store(true);
  }
  wake_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

int ThreadPool::RunInline(FTVMParallelLambda f, void* cdata) {
  TVMParallelGroupEnv env;
  env.sync_handle = nullptr;
  env.num_task = 1;
  bool was_in_region = t_in_parallel_region;
  t_in_parallel_region = true;
  int rc = f(0, &env, cdata);
  t_in_parallel_region = was_in_region;
  return rc == 0 ? 0 : -1;
}

void ThreadPool::RunSlot(int slot) {
  for (int task = slot; task < job_num_task_; task += num_threads_) {
    if (job_f_(task, &job_env_, job_cdata_) != 0) {
      bool expected = false;
      if (job_failed_.compare_exchange_strong(expected, true)) {
        std::lock_guard<std::mutex> lock(error_mutex_);
        job_error_ = GetLastErrorMessage();
        if (job_error_.empty()) job_error_ = "parallel task " + std::to_string(task) + " failed";
      }
      ClearLastError();
    }
  }
}

int ThreadPool::Launch(FTVMParallelLambda f, void* cdata, int num_task) {
  if (f == nullptr) {
    SetLastError("TVMBackendParallelLaunch: null task function");
    return -1;
  }
  if (num_task < 0) {
    SetLastError("TVMBackendParallelLaunch: negative num_task " + std::to_string(num_task));
    return -1;
  }
  if (num_threads_ == 1 || num_task == 1 || t_in_parallel_region) return RunInline(f, cdata);
  std::unique_lock<std::mutex> launch_lock(launch_mutex_, std::try_to_lock);
  if (!launch_lock.owns_lock()) return RunInline(f, cdata);  // another thread holds the pool

  if (num_task == 0) num_task = num_threads_;
  job_f_ = f;
  job_cdata_ = cdata;
  job_num_task_ = num_task;
  barrier_.arrived.store(0, std::memory_order_relaxed);
  barrier_.num_task = num_task;
  barrier_.concurrent = num_task <= num_threads_;
  job_env_.sync_handle = &barrier_;
  job_env_.num_task = num_task;
  job_failed_.store(false, std::memory_order_relaxed);
  // Every worker acknowledges every launch (idle ones at once), so none can read a later job's
  // fields while still handling this one.
  pending_.store(num_threads_ - 1, std::memory_order_relaxed);

  // Publish the job, wake sleeping workers.
  generation_.fetch_add(1, std::memory_order_seq_cst);
  if (sleeping_workers_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(wake_mutex_);
    wake_cv_.notify_all();
  }

  t_in_parallel_region = true;
  RunSlot(0);
  t_in_parallel_region = false;

  // Wait for the workers: spin, then sleep until the last one signals.
  for (int i = 0; i < kSpinIterations && pending_.load(std::memory_order_acquire) != 0; ++i) CpuRelax();
  if (pending_.load(std::memory_order_acquire) != 0) {
    std::unique_lock<std::mutex> lock(wake_mutex_);
    launcher_sleeping_.store(true, std::memory_order_seq_cst);
    done_cv_.wait(lock, [&] { return pending_.load(std::memory_order_seq_cst) == 0; });
    launcher_sleeping_.store(false, std::memory_order_relaxed);
  }

  if (job_failed_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(error_mutex_);
    SetLastError(job_error_);
    return -1;
  }
  return 0;
}

void ThreadPool::WorkerLoop(int worker_index) {
  t_in_parallel_region = true;
  uint64_t seen = 0;
  while (true) {
    // Wait for a new generation: poll for up to WorkerSpinNs() (checking the clock every 64 pauses),
    // then sleep. Yielding instead of pausing would hand the core to other processes and add their
    // time slice to the wake-up latency.
    const int64_t spin_until = NowNs() + WorkerSpinNs();
    int spins = 0;
    while (generation_.load(std::memory_order_acquire) == seen && !stop_.load(std::memory_order_relaxed)) {
      if ((++spins & 63) != 0 || NowNs() < spin_until) {
        CpuRelax();
        continue;
      }
      std::unique_lock<std::mutex> lock(wake_mutex_);
      sleeping_workers_.fetch_add(1, std::memory_order_seq_cst);
      wake_cv_.wait(lock, [&] {
        return generation_.load(std::memory_order_seq_cst) != seen || stop_.load(std::memory_order_relaxed);
      });
      sleeping_workers_.fetch_sub(1, std::memory_order_relaxed);
      break;
    }
    if (stop_.load(std::memory_order_relaxed)) return;
    seen = generation_.load(std::memory_order_acquire);
    if (worker_index < job_num_task_) RunSlot(worker_index);
    if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
        launcher_sleeping_.load(std::memory_order_seq_cst)) {
      std::lock_guard<std::mutex> lock(wake_mutex_);
      done_cv_.notify_all();
    }
  }
}

int ThreadPool::Barrier(int task_id, TVMParallelGroupEnv* penv) {
  if (penv == nullptr || penv->sync_handle == nullptr || penv->num_task <= 1) return 0;
  auto* b = static_cast<BarrierState*>(penv->sync_handle);
  if (!b->concurrent) {
    SetLastError("TVMBackendParallelBarrier: tasks of this launch do not all run concurrently (num_task " +
                 std::to_string(b->num_task) + " exceeds the thread pool size); a barrier would deadlock");
    return -1;
  }
  uint32_t gen = b->generation.load(std::memory_order_acquire);
  if (b->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == b->num_task) {
    b->arrived.store(0, std::memory_order_relaxed);
    b->generation.fetch_add(1, std::memory_order_release);
    return 0;
  }
  int spins = 0;
  while (b->generation.load(std::memory_order_acquire) == gen) {
    if (++spins < kSpinIterations) {
      CpuRelax();
    } else {
      std::this_thread::yield();
    }
  }
  return 0;
}

}  // namespace sorun
