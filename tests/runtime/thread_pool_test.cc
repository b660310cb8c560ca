#include "runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "runtime/last_error.h"
#include "runtime/workspace_pool.h"

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
