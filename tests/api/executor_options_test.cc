// sorun::ExecutorOptions (api/sorun.h): the process pool by default, an executor's own pool when a
// thread count, CPU affinity or spin time is given (an explicit option wins over SORUN_NUM_THREADS),
// devices, warmup, and the errors. The pool a kernel really runs on is observed through a kernel
// (testdata/kernels/abi_test_kernels.c parallel_default_tasks) that reports how many tasks a
// TVMBackendParallelLaunch with num_task = 0 ("one per pool thread") ran.
#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "api/sorun.h"
#include "graph_executor/graph_builder.h"
#include "tests/api/api_test_util.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

// A one-operator model: parallel_default_tasks writes [num_task, tasks run] into its int32[2] output.
Model TaskCountModel() {
  GraphBuilder builder;
  builder.Output(builder.Op("parallel_default_tasks", {}, {2}, ParseDataType("int32").value(), "tasks"));
  auto json = builder.BuildJson();
  EXPECT_TRUE(json.ok()) << json.status().ToString();
  const std::string path = testing::MakeTempDir("executor_options") + "/tasks.json";
  testing::WriteFileOrDie(path, *json);
  auto model = Model::LoadFromFiles(path, testing::Runfile("testdata/kernels/libabi_test_kernels.so"), "");
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return *model;
}

// The number of tasks one parallel launch of `exec`'s kernel ran (-1 on error).
int TasksPerLaunch(Executor& exec) {
  auto out = NDArray::Empty({2}, ParseDataType("int32").value());
  if (!out.ok()) return -1;
  std::memset(out->data(), 0, out->nbytes());
  if (!exec.SetOutputZeroCopy(0, out->dl()).ok() || !exec.Run().ok()) return -1;
  const int32_t* v = out->data_as<int32_t>();
  EXPECT_EQ(v[0], v[1]) << "num_task and the tasks that ran differ";
  return v[0];
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

class ExecutorOptionsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_TRUE(Initialize().ok()); }
};

TEST_F(ExecutorOptionsTest, DefaultOptionsUseTheProcessPool) {
  Model model = TaskCountModel();
  auto a = model.NewExecutor();
  auto b = model.NewExecutor();
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString();
  EXPECT_EQ(a->num_threads(), b->num_threads());
  EXPECT_EQ(TasksPerLaunch(*a), a->num_threads());
  ASSERT_EQ(a->devices().size(), 1u);
  EXPECT_EQ(DeviceName(a->devices()[0]), "cpu:0");
}

TEST_F(ExecutorOptionsTest, NumThreadsGivesTheExecutorItsOwnPool) {
  Model model = TaskCountModel();
  auto shared = model.NewExecutor();
  ASSERT_TRUE(shared.ok());
  const int process_threads = shared->num_threads();
  ExecutorOptions options;
  options.num_threads = process_threads + 2;  // a size the process pool does not have
  auto own = model.NewExecutor(options);
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ(own->num_threads(), process_threads + 2);
  EXPECT_EQ(TasksPerLaunch(*own), process_threads + 2);
  EXPECT_EQ(TasksPerLaunch(*shared), process_threads);  // the other executor is unaffected
  options.num_threads = 1;
  auto single = model.NewExecutor(options);
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(TasksPerLaunch(*single), 1);
}

TEST_F(ExecutorOptionsTest, AnExplicitThreadCountWinsOverTheEnvironment) {
  Model model = TaskCountModel();
  setenv("SORUN_NUM_THREADS", "1", 1);
  ExecutorOptions two;
  two.num_threads = 2;
  auto explicit_pool = model.NewExecutor(two);
  ExecutorOptions spin_only;  // an own pool whose size is left to the environment
  spin_only.spin_us = 0;
  auto env_sized = model.NewExecutor(spin_only);
  unsetenv("SORUN_NUM_THREADS");
  ASSERT_TRUE(explicit_pool.ok()) << explicit_pool.status().ToString();
  ASSERT_TRUE(env_sized.ok()) << env_sized.status().ToString();
  EXPECT_EQ(explicit_pool->num_threads(), 2);
  EXPECT_EQ(TasksPerLaunch(*explicit_pool), 2);
  EXPECT_EQ(env_sized->num_threads(), 1);
  EXPECT_EQ(TasksPerLaunch(*env_sized), 1);
}

TEST_F(ExecutorOptionsTest, CpuAffinityPinsTheExecutorsPool) {
  Model model = TaskCountModel();
  ExecutorOptions options;
  options.num_threads = 2;
  options.cpu_affinity = {AllowedCpus().back()};
  auto exec = model.NewExecutor(options);
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  EXPECT_EQ(exec->num_threads(), 2);
  EXPECT_EQ(TasksPerLaunch(*exec), 2);
}

TEST_F(ExecutorOptionsTest, BadOptionsFailAtCreationNamingTheValue) {
  Model model = TaskCountModel();
  ExecutorOptions bad_cpu;
  bad_cpu.num_threads = 2;
  bad_cpu.cpu_affinity = {100000};
  EXPECT_ERROR(model.NewExecutor(bad_cpu).status(), StatusCode::kInvalidArgument, "ExecutorOptions", "CPU 100000");
  ExecutorOptions negative;
  negative.num_threads = -3;
  EXPECT_ERROR(model.NewExecutor(negative).status(), StatusCode::kInvalidArgument, "num_threads -3");
  ExecutorOptions bad_spin;
  bad_spin.spin_us = -1;
  EXPECT_ERROR(model.NewExecutor(bad_spin).status(), StatusCode::kInvalidArgument, "spin_us -1");
  ExecutorOptions absent;
  absent.devices = {DLDevice{kDLCPU, 5}};
  EXPECT_ERROR(model.NewExecutor(absent).status(), StatusCode::kUnavailable, "cpu:5");
}

TEST_F(ExecutorOptionsTest, DevicesAndWarmup) {
  auto model = Model::Load(testing::ZooFile("mlp.so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ExecutorOptions options;
  options.devices = {ParseDevice("cpu:0").value()};
  options.warmup = true;
  options.spin_us = 0;
  auto exec = model->NewExecutor(options);
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  NDArray input = testing::ReadZooNpy("mlp_input.npy");
  auto out = exec->Run({{"data", &input.dl()}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_LE(testing::MaxRelativeError((*out)[0], testing::ReadZooNpy("mlp_expected.npy")), testing::kZooTolerance);
}

// Executors with pools of their own, created and run on several threads at once.
TEST_F(ExecutorOptionsTest, OwnPoolsOnManyThreads) {
  Model model = TaskCountModel();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      ExecutorOptions options;
      options.num_threads = 1 + t % 3;
      auto exec = model.NewExecutor(options);
      if (!exec.ok()) {
        ++failures;
        return;
      }
      for (int i = 0; i < 50; ++i) {
        if (TasksPerLaunch(*exec) != options.num_threads) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace sorun
