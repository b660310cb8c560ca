// The executor conformance suite's thread cases (the fixture: tests/executor/conformance_fixture.h), for
// every model of both kinds: a second thread's call on a busy executor is refused, executors of one model
// run on several threads at once, and every "any thread" accessor is read while another thread runs the
// executor (a dynamic-shape Relax model changing its batch between runs). TSan in CI.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "api/sorun.h"
#include "tests/executor/conformance_fixture.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using testing::Bytes;
using testing::ConformanceModel;
using testing::CopyOf;
using testing::ExecutorConformanceTest;
using testing::IsBusyRefusal;
using testing::kBusy;
using testing::kNoSuchDeviceType;
using testing::Misaligned;
using testing::RepeatRows;
using testing::SameInfo;
using testing::SameInfos;
using testing::SameValues;
using testing::Transformed;
using testing::Zeros;

// ---- Threads ----

// A second thread's call while the executor is busy is refused, never run concurrently: one thread loops
// Run while this one makes every kind of exclusive call until each has been refused once. Every call
// either succeeds (it got in between two runs) or fails with the busy refusal; the runner's own runs too.
TEST_P(ExecutorConformanceTest, ABusyExecutorRefusesASecondThread) {
  Executor exec = NewExecutor();
  ASSERT_TRUE(SetInputs(exec, inputs_));
  ASSERT_TRUE(exec.Run().ok());
  NDArray out = Zeros(expected_[0].shape(), expected_[0].dtype());
  const std::vector<std::string> calls = {"Run",          "SetInput", "GetInput", "GetOutput",
                                          "CopyOutputTo", "Warmup",   "Profile"};
  auto call = [&](size_t c) -> Status {
    switch (c) {
      case 0: return exec.Run();
      case 1: return exec.SetInput(settable_[0], inputs_[0].dl());
      case 2: return exec.GetInput(settable_[0]).status();
      case 3: return exec.GetOutput(0).status();
      case 4: return exec.CopyOutputTo(0, out.dl());
      case 5: return exec.Warmup();
      default: return exec.Profile(1).status();
    }
  };
  std::atomic<bool> stop{false};
  std::atomic<bool> runner_failed{false};
  std::string runner_error;  // written by the runner only, read after join
  std::thread runner([&] {
    while (!stop.load(std::memory_order_acquire)) {
      Status s = exec.Run();
      if (!s.ok() && !IsBusyRefusal(s)) {
        runner_error = s.ToString();
        runner_failed.store(true, std::memory_order_release);
        return;
      }
    }
  });
  std::vector<int> refused(calls.size(), 0);
  std::string error;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto all_refused = [&] {
    for (int r : refused) {
      if (r == 0) return false;
    }
    return true;
  };
  for (size_t i = 0;
       error.empty() && !runner_failed.load() && !all_refused() && std::chrono::steady_clock::now() < deadline; ++i) {
    const size_t c = i % calls.size();
    Status s = call(c);
    if (IsBusyRefusal(s)) {
      ++refused[c];
    } else if (!s.ok()) {
      error = calls[c] + ": " + s.ToString();
    }
  }
  stop.store(true, std::memory_order_release);
  runner.join();
  EXPECT_EQ(error, "");
  EXPECT_EQ(runner_error, "");
  for (size_t c = 0; c < calls.size(); ++c) EXPECT_GE(refused[c], 1) << calls[c] << " was never refused";
  ASSERT_TRUE(exec.Run().ok());
  EXPECT_TRUE(OutputsAreRecorded(exec));
}

// Executors of one model, one per thread, run concurrently (a model with a dynamic dimension: each
// thread with its own batch size).
TEST_P(ExecutorConformanceTest, ExecutorsOnSeveralThreadsRunConcurrently) {
  constexpr int kThreads = 4;
  constexpr int kRuns = 5;
  const double tolerance = GetParam().tolerance;
  std::vector<int> good(kThreads, 0);
  std::vector<std::string> errors(kThreads);
  std::vector<std::vector<NDArray>> inputs, expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(InputsWithRows(t + 1));
    expected.push_back(ExpectedWithRows(t + 1));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto exec = model_->NewExecutor();  // the model is shared; executors are created concurrently
      if (!exec.ok()) {
        errors[t] = exec.status().ToString();
        return;
      }
      for (int r = 0; r < kRuns; ++r) {
        ::testing::AssertionResult set = SetInputs(*exec, inputs[t]);
        if (!set) {
          errors[t] = set.message();
          return;
        }
        Status run = exec->Run();
        if (!run.ok()) {
          errors[t] = run.ToString();
          return;
        }
        ::testing::AssertionResult same = OutputsAre(*exec, expected[t], tolerance);
        if (!same) {
          errors[t] = same.message();
          return;
        }
        ++good[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(good[t], kRuns) << "thread " << t << ": " << errors[t];
}

// The "any thread" accessors (api/sorun.h, executor/model_executor.h) read while another thread runs
// the executor — with a model's dynamic dimension changing between runs — stay sane, and race-free
// under TSan: inputs() and outputs() never change, num_outputs() is a legal count, the indices, devices,
// threads, capabilities and weight bytes are those read before.
TEST_P(ExecutorConformanceTest, AnyThreadAccessorsWhileAnotherThreadRuns) {
  ExecutorOptions options;
  options.num_threads = 2;  // its own pool, started while the reader reads
  Executor exec = NewExecutor(options);
  const std::vector<TensorInfo> inputs = exec.inputs();
  const std::vector<TensorInfo> outputs = exec.outputs();
  const std::vector<TensorInfo>* outputs_address = &exec.outputs();
  const std::set<int> legal_counts = {static_cast<int>(outputs.size()), static_cast<int>(expected_.size())};
  const int threads = exec.num_threads();
  const ExecutorCapabilities caps = exec.capabilities();
  const uint64_t weights = exec.Memory().at(0).weight_bytes;
  const std::string kind = GetParam().kind;

  auto check = [&]() -> std::string {
    if (!SameInfos(exec.inputs(), inputs)) return "inputs() changed";
    if (&exec.outputs() != outputs_address || !SameInfos(exec.outputs(), outputs)) return "outputs() changed";
    const int n = exec.num_outputs();
    if (legal_counts.count(n) == 0) return "num_outputs() is " + std::to_string(n);
    if (exec.devices().size() != 1 || DeviceName(exec.devices()[0]) != "cpu:0") return "devices() changed";
    if (exec.num_threads() != threads) return "num_threads() is " + std::to_string(exec.num_threads());
    const ExecutorCapabilities c = exec.capabilities();
    if (c.output_zero_copy != caps.output_zero_copy || c.params_files != caps.params_files) {
      return "capabilities() changed";
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto index = exec.InputIndex(inputs[i].name);
      if (!index.ok() || *index != static_cast<int>(i)) return "InputIndex('" + inputs[i].name + "') changed";
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      auto index = exec.OutputIndex(outputs[k].name);
      if (!index.ok() || *index != static_cast<int>(k)) return "OutputIndex('" + outputs[k].name + "') changed";
    }
    if (exec.InputIndex("no_such_input").ok()) return "InputIndex found no_such_input";
    const std::vector<DeviceMemory> memory = exec.Memory();
    if (memory.size() != 1 || memory[0].weight_bytes != weights) return "Memory() weights changed";
    if (memory[0].activation_bytes > (uint64_t{1} << 30)) return "Memory() activations are insane";
    if (!SameInfos(model_->inputs(), inputs) || std::string(model_->executor_kind()) != kind) {
      return "the model's description changed";
    }
    return "";
  };

  std::atomic<bool> writer_done{false};
  std::atomic<int64_t> reads{0};
  std::atomic<bool> reader_failed{false};
  std::string reader_error;  // written by the reader only, read after join
  std::thread reader([&] {
    while (!writer_done.load(std::memory_order_acquire)) {
      reader_error = check();
      if (!reader_error.empty()) {
        reader_failed.store(true, std::memory_order_release);
        return;
      }
      reads.fetch_add(1, std::memory_order_relaxed);
    }
  });
  while (reads.load() == 0 && !reader_failed.load()) std::this_thread::yield();

  // The writer: at least 24 runs, and on until the reader has read 10 times meanwhile.
  const int64_t reads_before = reads.load();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const int64_t batches[] = {3, 1, 5, 2, 7, 4};
  const double tolerance = GetParam().tolerance;
  std::string writer_error;
  int runs = 0;
  for (; writer_error.empty() && !reader_failed.load() &&
         (runs < 24 || (reads.load() - reads_before < 10 && std::chrono::steady_clock::now() < deadline));
       ++runs) {
    const int64_t rows = batches[runs % 6];
    ::testing::AssertionResult set = SetInputs(exec, InputsWithRows(rows));
    if (!set) {
      writer_error = set.message();
      break;
    }
    Status s = exec.Run();
    if (!s.ok()) {
      writer_error = s.ToString();
      break;
    }
    ::testing::AssertionResult same = OutputsAre(exec, ExpectedWithRows(rows), tolerance);
    if (!same) writer_error = "run " + std::to_string(runs) + ": " + same.message();
  }
  const int64_t reads_during = reads.load() - reads_before;
  writer_done.store(true, std::memory_order_release);
  reader.join();
  EXPECT_EQ(writer_error, "");
  EXPECT_EQ(reader_error, "");
  EXPECT_GE(runs, 24);
  EXPECT_GE(reads_during, 10) << "the reader read while the writer ran";
}

INSTANTIATE_TEST_SUITE_P(Models, ExecutorConformanceTest, ::testing::ValuesIn(testing::ConformanceModels()),
                         [](const ::testing::TestParamInfo<ConformanceModel>& info) { return info.param.name; });

}  // namespace
}  // namespace sorun
