#include "runtime/thread_pool.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "base/env_vars.h"
#include "runtime/last_error.h"

namespace sorun {
namespace {

// True on pool workers and on a launcher while it runs tasks: a nested launch runs inline.
thread_local bool t_in_parallel_region = false;
// The innermost ThreadPool::Scope's pool on this thread (nullptr: Global()).
thread_local ThreadPool* t_current_pool = nullptr;

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

// SORUN_SPIN_US, else the default. A bad value falls back to the default here (a pool constructor
// cannot fail); CheckSorunEnvironment() reports it to the caller of sorun::Initialize() and to the CLI.
int64_t DefaultSpinUs() {
  auto v = ThreadPool::ConfiguredSpinUs();
  return v.ok() && v->has_value() ? **v : kDefaultWorkerSpinUs;
}

// "0-3, 6" for the CPUs in `set`.
std::string CpuListString(const cpu_set_t& set) {
  std::string s;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    int last = cpu;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    s += (s.empty() ? "" : ", ") + std::to_string(cpu) + (last > cpu ? "-" + std::to_string(last) : "");
    cpu = last;
  }
  return s.empty() ? "none" : s;
}

// OK when every id of `cpus` is a CPU this process may run on (the main thread's affinity mask).
Status CheckCpuIds(const std::vector<int>& cpus) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(getpid(), sizeof(allowed), &allowed) != 0) {
    return Internal(std::string("cpu_affinity: cannot read this process's CPU affinity: ") + std::strerror(errno));
  }
  for (size_t i = 0; i < cpus.size(); ++i) {
    const int cpu = cpus[i];
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed)) {
      return InvalidArgument("cpu_affinity[" + std::to_string(i) + "]: CPU " + std::to_string(cpu) +
                             " is not one this process may run on (allowed CPUs: " + CpuListString(allowed) + ")");
    }
  }
  return Status::Ok();
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
  return GetEnvInt(
      kEnvSpinUs, 0, kMaxSpinUs,
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

ThreadPool& ThreadPool::Current() {
  ThreadPool* pool = t_current_pool;
  return pool != nullptr ? *pool : Global();
}

ThreadPool::Scope::Scope(ThreadPool* pool) : previous_(t_current_pool) { t_current_pool = pool; }

ThreadPool::Scope::~Scope() { t_current_pool = previous_; }

ThreadPool::ThreadPool(int num_threads) : ThreadPool(num_threads, DefaultSpinUs(), {}) {}

ThreadPool::ThreadPool(int num_threads, int64_t spin_us, std::vector<int> cpu_affinity)
    : num_threads_(num_threads < 1 ? 1 : num_threads),
      spin_ns_(spin_us * 1000),
      cpu_affinity_(std::move(cpu_affinity)) {
  workers_.reserve(static_cast<size_t>(num_threads_ - 1));
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

StatusOr<std::shared_ptr<ThreadPool>> ThreadPool::Create(const ThreadPoolOptions& options) {
  if (options.num_threads < 0 || options.num_threads > kMaxThreads) {
    return InvalidArgument("num_threads " + std::to_string(options.num_threads) +
                           " is out of range (0 = " + kEnvNumThreads + " or one per hardware thread, else 1.." +
                           std::to_string(kMaxThreads) + ")");
  }
  if (options.spin_us.has_value() && (*options.spin_us < 0 || *options.spin_us > kMaxSpinUs)) {
    return InvalidArgument("spin_us " + std::to_string(*options.spin_us) + " is out of range (0.." +
                           std::to_string(kMaxSpinUs) + " microseconds)");
  }
  SORUN_RETURN_IF_ERROR(CheckCpuIds(options.cpu_affinity));
  const int threads = options.num_threads > 0 ? options.num_threads : DefaultNumThreads();
  const int64_t spin_us = options.spin_us.has_value() ? *options.spin_us : DefaultSpinUs();
  std::shared_ptr<ThreadPool> pool(new ThreadPool(threads, spin_us, options.cpu_affinity));
  SORUN_RETURN_IF_ERROR(pool->PinWorkers());
  return pool;
}

Status ThreadPool::PinWorkers() {
  if (cpu_affinity_.empty()) return Status::Ok();
  for (size_t w = 0; w < workers_.size(); ++w) {  // workers_[w] is worker w + 1
    const int cpu = cpu_affinity_[w % cpu_affinity_.size()];
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    const int rc = pthread_setaffinity_np(workers_[w].native_handle(), sizeof(set), &set);
    if (rc != 0) {
      return InvalidArgument("cpu_affinity: cannot pin worker " + std::to_string(w + 1) + " to CPU " +
                             std::to_string(cpu) + ": " + std::strerror(rc));
    }
  }
  return Status::Ok();
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
    // Wait for a new generation: poll for up to spin_ns_ (checking the clock every 64 pauses), then
    // sleep. Yielding instead of pausing would hand the core to other processes and add their time
    // slice to the wake-up latency.
    const int64_t spin_until = NowNs() + spin_ns_;
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
    if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1 && launcher_sleeping_.load(std::memory_order_seq_cst)) {
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
