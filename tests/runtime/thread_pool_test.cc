#include "runtime/thread_pool.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include "runtime/c_runtime_api.h"
#include "runtime/last_error.h"
#include "runtime/workspace_pool.h"
#include "tests/util/status_matchers.h"

namespace sorun {
namespace {

struct Counts {
  std::atomic<int> per_task[64];
  std::atomic<int> total{0};
  Counts() {
    for (auto& c : per_task) c = 0;
  }
};

int CountTask(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  auto* c = static_cast<Counts*>(cdata);
  c->per_task[task_id]++;
  c->total++;
  return 0;
}

TEST(ThreadPoolTest, EveryTaskRunsExactlyOnce) {
  ThreadPool pool(4);
  for (int num_task : {0, 1, 2, 3, 4, 7, 20}) {
    Counts c;
    ASSERT_EQ(pool.Launch(CountTask, &c, num_task), 0);
    int expected = num_task == 0 ? 4 : num_task;
    EXPECT_EQ(c.total.load(), expected) << num_task;
    for (int t = 0; t < expected; ++t) EXPECT_EQ(c.per_task[t].load(), 1) << "task " << t;
  }
}

TEST(ThreadPoolTest, ManyBackToBackLaunches) {
  ThreadPool pool(3);
  Counts c;
  for (int i = 0; i < 20000; ++i) ASSERT_EQ(pool.Launch(CountTask, &c, 0), 0);
  EXPECT_EQ(c.total.load(), 60000);
}

struct PhaseState {
  std::atomic<int> phase_counts[32];
  std::atomic<bool> violated{false};
  int phases = 0;
  PhaseState() {
    for (auto& p : phase_counts) p = 0;
  }
};

int PhasedTask(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  auto* s = static_cast<PhaseState*>(cdata);
  for (int p = 0; p < s->phases; ++p) {
    s->phase_counts[p]++;
    if (ThreadPool::Barrier(task_id, penv) != 0) return -1;
    // After the barrier every task must have finished phase p.
    if (s->phase_counts[p].load() != penv->num_task) s->violated = true;
    if (ThreadPool::Barrier(task_id, penv) != 0) return -1;
  }
  return 0;
}

TEST(ThreadPoolTest, BarrierSeparatesPhases) {
  ThreadPool pool(4);
  for (int rep = 0; rep < 50; ++rep) {
    PhaseState s;
    s.phases = 16;
    ASSERT_EQ(pool.Launch(PhasedTask, &s, 0), 0);
    EXPECT_FALSE(s.violated.load());
  }
}

TEST(ThreadPoolTest, BarrierWithMoreTasksThanThreadsFailsInsteadOfDeadlocking) {
  ThreadPool pool(2);
  PhaseState s;
  s.phases = 1;
  EXPECT_EQ(pool.Launch(PhasedTask, &s, 5), -1);
  EXPECT_NE(GetLastErrorMessage().find("exceeds the thread pool size"), std::string::npos) << GetLastErrorMessage();
}

int FailOnTwo(int task_id, TVMParallelGroupEnv*, void*) {
  if (task_id == 2) {
    SetLastError("task two broke");
    return -1;
  }
  return 0;
}

TEST(ThreadPoolTest, FailureMessageReachesLauncher) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.Launch(FailOnTwo, nullptr, 4), -1);
  EXPECT_EQ(GetLastErrorMessage(), "task two broke");
  // The pool is usable afterwards.
  Counts c;
  EXPECT_EQ(pool.Launch(CountTask, &c, 0), 0);
  EXPECT_EQ(c.total.load(), 4);
}

TEST(ThreadPoolTest, ConcurrentLaunchersAllComplete) {
  ThreadPool pool(2);
  std::vector<std::thread> threads;
  std::atomic<int> total{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        Counts c;
        ASSERT_EQ(pool.Launch(CountTask, &c, 0), 0);
        // Either the pool ran 2 tasks, or the launch ran inline as one task.
        int n = c.total.load();
        ASSERT_TRUE(n == 1 || n == 2) << n;
        total += n;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_GE(total.load(), 8000);
}

TEST(ThreadPoolTest, NullFunctionAndNegativeTasksAreErrors) {
  ThreadPool pool(2);
  EXPECT_EQ(pool.Launch(nullptr, nullptr, 0), -1);
  EXPECT_EQ(pool.Launch(CountTask, nullptr, -3), -1);
}

TEST(ThreadPoolTest, DefaultThreadCountHonoursEnvironment) {
  setenv("SORUN_NUM_THREADS", "3", 1);
  EXPECT_EQ(ThreadPool::DefaultNumThreads(), 3);
  setenv("SORUN_NUM_THREADS", "junk", 1);
  EXPECT_GE(ThreadPool::DefaultNumThreads(), 1);
  unsetenv("SORUN_NUM_THREADS");
}

// ---- ThreadPool::Create options, Current() and Scope.

TEST(ThreadPoolOptionsTest, CreateHonoursThreadsAndSpin) {
  ThreadPoolOptions options;
  options.num_threads = 3;
  options.spin_us = 0;
  auto pool = ThreadPool::Create(options);
  ASSERT_TRUE(pool.ok()) << pool.status().ToString();
  EXPECT_EQ((*pool)->num_threads(), 3);
  EXPECT_EQ((*pool)->spin_us(), 0);
  EXPECT_TRUE((*pool)->cpu_affinity().empty());
  for (int i = 0; i < 200; ++i) {  // spin 0: workers sleep between launches, and still run every task
    Counts c;
    ASSERT_EQ((*pool)->Launch(CountTask, &c, 0), 0);
    ASSERT_EQ(c.total.load(), 3);
  }
}

TEST(ThreadPoolOptionsTest, ExplicitOptionsWinOverTheEnvironment) {
  setenv("SORUN_NUM_THREADS", "1", 1);
  setenv("SORUN_SPIN_US", "5", 1);
  ThreadPoolOptions two;
  two.num_threads = 2;
  two.spin_us = 7;
  auto explicit_pool = ThreadPool::Create(two);
  auto env_pool = ThreadPool::Create(ThreadPoolOptions{});  // unset options: the environment decides
  unsetenv("SORUN_NUM_THREADS");
  unsetenv("SORUN_SPIN_US");
  ASSERT_TRUE(explicit_pool.ok()) << explicit_pool.status().ToString();
  ASSERT_TRUE(env_pool.ok()) << env_pool.status().ToString();
  EXPECT_EQ((*explicit_pool)->num_threads(), 2);
  EXPECT_EQ((*explicit_pool)->spin_us(), 7);
  EXPECT_EQ((*env_pool)->num_threads(), 1);
  EXPECT_EQ((*env_pool)->spin_us(), 5);
}

TEST(ThreadPoolOptionsTest, BadOptionsAreErrorsNamingTheValue) {
  ThreadPoolOptions o;
  o.num_threads = -1;
  EXPECT_ERROR(ThreadPool::Create(o).status(), StatusCode::kInvalidArgument, "num_threads -1");
  o.num_threads = 5000;
  EXPECT_ERROR(ThreadPool::Create(o).status(), StatusCode::kInvalidArgument, "num_threads 5000", "1..1024");
  o = ThreadPoolOptions{};
  o.spin_us = -2;
  EXPECT_ERROR(ThreadPool::Create(o).status(), StatusCode::kInvalidArgument, "spin_us -2");
  o = ThreadPoolOptions{};
  o.num_threads = 2;
  o.cpu_affinity = {-1};
  EXPECT_ERROR(ThreadPool::Create(o).status(), StatusCode::kInvalidArgument, "CPU -1", "allowed CPUs");
  o.cpu_affinity = {0, 100000};  // checked even where no worker would use it
  EXPECT_ERROR(ThreadPool::Create(o).status(), StatusCode::kInvalidArgument, "cpu_affinity[1]", "CPU 100000");
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(getpid(), sizeof(set), &set), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

// Each task records the CPUs its thread may run on (sched_getaffinity of the calling thread).
struct AffinityRecord {
  cpu_set_t per_task[8];
};

int RecordAffinity(int task_id, TVMParallelGroupEnv*, void* cdata) {
  auto* r = static_cast<AffinityRecord*>(cdata);
  CPU_ZERO(&r->per_task[task_id]);
  return sched_getaffinity(0, sizeof(cpu_set_t), &r->per_task[task_id]) == 0 ? 0 : -1;
}

TEST(ThreadPoolOptionsTest, WorkersArePinnedAndTheLauncherIsNot) {
  const std::vector<int> allowed = AllowedCpus();
  ASSERT_FALSE(allowed.empty());
  const int cpu = allowed.back();
  ThreadPoolOptions o;
  o.num_threads = 3;
  o.cpu_affinity = {cpu};
  auto pool = ThreadPool::Create(o);
  ASSERT_TRUE(pool.ok()) << pool.status().ToString();
  EXPECT_EQ((*pool)->cpu_affinity(), std::vector<int>{cpu});
  AffinityRecord r;
  ASSERT_EQ((*pool)->Launch(RecordAffinity, &r, 3), 0);  // task i runs on worker i; task 0 on this thread
  for (int task = 1; task < 3; ++task) {
    EXPECT_EQ(CPU_COUNT(&r.per_task[task]), 1) << "task " << task;
    EXPECT_TRUE(CPU_ISSET(cpu, &r.per_task[task])) << "task " << task;
  }
  EXPECT_EQ(CPU_COUNT(&r.per_task[0]), static_cast<int>(allowed.size()));  // the launcher is not moved
}

TEST(ThreadPoolOptionsTest, CurrentFollowsTheScopesOfThisThreadOnly) {
  auto pool = ThreadPool::Create(ThreadPoolOptions{});
  ASSERT_TRUE(pool.ok());
  EXPECT_EQ(&ThreadPool::Current(), &ThreadPool::Global());
  {
    ThreadPool::Scope scope(pool->get());
    EXPECT_EQ(&ThreadPool::Current(), pool->get());
    ThreadPool* seen_elsewhere = nullptr;
    std::thread other([&] { seen_elsewhere = &ThreadPool::Current(); });
    other.join();
    EXPECT_EQ(seen_elsewhere, &ThreadPool::Global());
    {
      ThreadPool::Scope inner(nullptr);
      EXPECT_EQ(&ThreadPool::Current(), &ThreadPool::Global());
    }
    EXPECT_EQ(&ThreadPool::Current(), pool->get());
  }
  EXPECT_EQ(&ThreadPool::Current(), &ThreadPool::Global());
}

TEST(ThreadPoolOptionsTest, ParallelLaunchUsesTheCurrentPool) {
  ThreadPoolOptions o;
  o.num_threads = ThreadPool::Global().num_threads() + 3;  // a size the global pool does not have
  auto pool = ThreadPool::Create(o);
  ASSERT_TRUE(pool.ok());
  Counts c;
  {
    ThreadPool::Scope scope(pool->get());
    ASSERT_EQ(TVMBackendParallelLaunch(CountTask, &c, 0), 0);  // num_task 0: one task per pool thread
  }
  EXPECT_EQ(c.total.load(), o.num_threads);
  Counts g;
  ASSERT_EQ(TVMBackendParallelLaunch(CountTask, &g, 0), 0);
  EXPECT_EQ(g.total.load(), ThreadPool::Global().num_threads());
}

TEST(WorkspacePoolTest, ReusesBlocksLifo) {
  WorkspacePool pool;
  void* a = pool.Alloc(100);
  void* b = pool.Alloc(5000);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  size_t reserved = pool.reserved_bytes();
  EXPECT_TRUE(pool.Free(b));
  EXPECT_TRUE(pool.Free(a));
  EXPECT_FALSE(pool.Free(a));
  for (int i = 0; i < 100; ++i) {
    void* x = pool.Alloc(100);
    void* y = pool.Alloc(5000);
    ASSERT_TRUE(pool.Free(y));
    ASSERT_TRUE(pool.Free(x));
  }
  EXPECT_EQ(pool.reserved_bytes(), reserved);
  EXPECT_GE(WorkspacePool::TotalReservedBytes(), reserved);
}

}  // namespace
}  // namespace sorun
