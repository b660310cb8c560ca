// The C++ API example of docs/api.md: loads a packed model, lists its inputs and outputs, runs it
// three ways (the Run(inputs) convenience; SetInput / Run / GetOutput; zero-copy bindings) and on two
// threads with an executor each, checks that every way gives the same output, and shows an error.
// //tests/api:sorun_example_test runs it on the zoo MLP; it exits 1 if anything fails or disagrees.
//
//   bazel build //api:sorun   # then link the program with it (cc_binary deps = ["//api:sorun"])
//   ./example model.so
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "api/sorun.h"

namespace {

// Prints the status of a failed step; true when it failed.
bool Failed(const sorun::Status& status, const char* step) {
  if (status.ok()) return false;
  std::fprintf(stderr, "%s failed: %s\n", step, status.ToString().c_str());
  return true;
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t d = 0; d < shape.size(); ++d) text += (d ? ", " : "") + std::to_string(shape[d]);
  return text + "]";
}

// True when two float32 host arrays hold the same values (within float rounding: executors with
// different thread counts may sum in a different order).
bool SameValues(const sorun::NDArray& a, const sorun::NDArray& b) {
  const auto is_float32 = [](const sorun::NDArray& x) { return x.dtype().code == kDLFloat && x.dtype().bits == 32; };
  if (a.shape() != b.shape() || !is_float32(a) || !is_float32(b)) return false;
  for (int64_t k = 0; k < a.num_elements(); ++k) {
    const float x = a.data_as<float>()[k], y = b.data_as<float>()[k];
    if (!(std::fabs(x - y) <= 1e-5f * std::fmax(1.0f, std::fabs(y)))) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL.so\n", argv[0]);
    return 2;
  }
  std::printf("sorun %s\n", sorun::Version());

  // 1. Load: graph, weights and kernels from one file. An option set here wins over its SORUN_*
  //    environment variable (SORUN_VERIFY_CHECKSUM); an option left unset falls back to it.
  sorun::RuntimeOptions runtime_options;
  runtime_options.verify_checksum = true;
  sorun::StatusOr<sorun::Model> model = sorun::Model::Load(argv[1], runtime_options);
  if (Failed(model.status(), "Model::Load")) return 1;  // never dereference a failed StatusOr

  // 2. What the model takes and gives, read from the graph without running it.
  for (const sorun::TensorInfo& info : model->inputs()) {
    std::printf("input  %-8s %s%s%s\n", info.name.c_str(), sorun::DataTypeName(info.dtype).c_str(),
                ShapeText(info.shape).c_str(), info.is_param ? " (weight)" : "");
  }
  for (const sorun::TensorInfo& info : model->outputs()) {
    std::printf("output %-8s %s%s\n", info.name.c_str(), sorun::DataTypeName(info.dtype).c_str(),
                ShapeText(info.shape).c_str());
  }

  // One host array per input that is not a weight, filled with a ramp (this example feeds float32).
  std::vector<std::pair<std::string, sorun::NDArray>> arrays;
  for (const sorun::TensorInfo& info : model->inputs()) {
    if (info.is_param) continue;
    if (info.dtype.code != kDLFloat || info.dtype.bits != 32) {
      std::fprintf(stderr, "input %s is %s; this example feeds float32\n", info.name.c_str(),
                   sorun::DataTypeName(info.dtype).c_str());
      return 1;
    }
    auto array = sorun::NDArray::Empty(info.shape, info.dtype);  // on cpu:0, 64-byte aligned
    if (Failed(array.status(), "NDArray::Empty")) return 1;
    float* values = array->data_as<float>();
    for (int64_t k = 0; k < array->num_elements(); ++k) values[k] = 0.01f * static_cast<float>(k % 97);
    arrays.emplace_back(info.name, std::move(*array));
  }
  std::vector<std::pair<std::string, const DLTensor*>> inputs;  // any DLTensor will do
  for (const auto& [name, array] : arrays) inputs.emplace_back(name, &array.dl());
  // The array step 6 binds as output 0: declared before the executor, so it outlives the binding.
  const sorun::TensorInfo& output0 = model->outputs()[0];
  sorun::StatusOr<sorun::NDArray> zero_copy_out = sorun::NDArray::Empty(output0.shape, output0.dtype);
  if (Failed(zero_copy_out.status(), "NDArray::Empty")) return 1;

  // 3. An executor with a pool of its own: 2 threads counting the one that calls Run (num_threads = 0
  //    would share the process-wide pool, sized by SORUN_NUM_THREADS). Idle workers spin 0 us: an
  //    explicit value, so SORUN_SPIN_US does not apply.
  sorun::ExecutorOptions options;
  options.num_threads = 2;
  options.spin_us = 0;
  sorun::StatusOr<sorun::Executor> exec = model->NewExecutor(options);
  if (Failed(exec.status(), "NewExecutor")) return 1;

  // 4. The convenience: set the inputs by name, run, get every output as a new host array that later
  //    runs leave alone.
  sorun::StatusOr<std::vector<sorun::NDArray>> outputs = exec->Run(inputs);
  if (Failed(outputs.status(), "Run(inputs)")) return 1;
  const sorun::NDArray& y = (*outputs)[0];
  std::printf("output 0 = %s:", y.Describe().c_str());
  for (int64_t k = 0; k < y.num_elements() && k < 4; ++k) std::printf(" %g", y.data_as<float>()[k]);
  std::printf("%s\n", y.num_elements() > 4 ? " ..." : "");

  // 5. The same step by step. SetInput copies, so the array may change or go afterwards. GetOutput is
  //    the executor's own memory (no copy): valid while the NDArray lives, overwritten by the next Run.
  for (const auto& [name, array] : arrays) {
    if (Failed(exec->SetInput(name, array.dl()), "SetInput")) return 1;
  }
  if (Failed(exec->Run(), "Run")) return 1;
  sorun::StatusOr<sorun::NDArray> view = exec->GetOutput(0);
  if (Failed(view.status(), "GetOutput")) return 1;
  if (!SameValues(*view, y)) {
    std::fprintf(stderr, "SetInput/Run/GetOutput disagrees with Run(inputs)\n");
    return 1;
  }

  // 6. Zero-copy: the kernels read the caller's input and write the caller's output in place (same
  //    shape, dtype and device; 64-byte aligned on the CPU, as NDArray::Empty allocates). Both arrays
  //    must stay alive while bound (here: until the executor goes).
  for (const auto& [name, array] : arrays) {
    if (Failed(exec->SetInputZeroCopy(name, array.dl()), "SetInputZeroCopy")) return 1;
  }
  if (Failed(exec->SetOutputZeroCopy(0, zero_copy_out->dl()), "SetOutputZeroCopy")) return 1;
  if (Failed(exec->Run(), "Run (zero-copy)")) return 1;
  if (!SameValues(*zero_copy_out, y)) {
    std::fprintf(stderr, "the zero-copy run disagrees with Run(inputs)\n");
    return 1;
  }

  // 7. Threads: a Model is shared freely; an Executor is used by one thread at a time. Each thread
  //    makes its own executor (one thread each: no pool workers) over the model's one copy of the
  //    weights, and they run concurrently.
  std::vector<sorun::NDArray> thread_outputs(2);
  std::vector<sorun::Status> thread_status(2);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < thread_outputs.size(); ++t) {
    threads.emplace_back([&, t] {
      sorun::ExecutorOptions one_thread;
      one_thread.num_threads = 1;
      auto own = model->NewExecutor(one_thread);
      if (!own.ok()) {
        thread_status[t] = own.status();
        return;
      }
      for (int run = 0; run < 10; ++run) {
        auto result = own->Run(inputs);
        if (!result.ok()) {
          thread_status[t] = result.status();
          return;
        }
        thread_outputs[t] = (*result)[0];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (size_t t = 0; t < threads.size(); ++t) {
    if (Failed(thread_status[t], "a thread's executor")) return 1;
    if (!SameValues(thread_outputs[t], y)) {
      std::fprintf(stderr, "thread %zu disagrees with Run(inputs)\n", t);
      return 1;
    }
  }

  // 8. Errors are values: nothing throws. The message names what is wrong and where.
  sorun::Status wrong = exec->SetInput("no_such_input", arrays[0].second.dl());
  std::printf("expected error: %s\n", wrong.ToString().c_str());
  if (wrong.code() != sorun::StatusCode::kNotFound) return 1;

  std::printf("every way agrees\n");
  return 0;
}
