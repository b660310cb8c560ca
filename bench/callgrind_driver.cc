// The measured phases of bench/callgrind_counts.sh: one process that loads a model, creates an
// executor and runs it, each phase inside its own noinline extern "C" function so that
//   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=sorun_cg_<phase> callgrind_driver ...
// counts the instructions of exactly that phase (no valgrind header needed). Phases:
//   sorun_cg_load    sorun::Model::Load of the model (dlopen, blob parse, params in place; each load
//                    after the previous one was released, so every call maps the library afresh)
//   sorun_cg_create  Model::NewExecutor (default options: the process-wide pool)
//   sorun_cg_run     Executor::Run (after one uncounted first run)
// The phase named by --phase runs --count times, the others once; the script divides by --count.
//
//   callgrind_driver --model M.so [--phase load|create|run] [--count N]
//
// Single-threaded on purpose: run it with SORUN_NUM_THREADS=1 (the script does). Inputs are zero-filled.
// Exit 1 with a message on any error.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "api/sorun.h"

namespace {

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "callgrind_driver: %s\n", what.c_str());
  std::exit(1);
}

void Check(const sorun::Status& s, const char* what) {
  if (!s.ok()) Die(std::string(what) + ": " + s.message());
}

}  // namespace

extern "C" {

__attribute__((noinline)) void sorun_cg_load(const char* path, int count, std::optional<sorun::Model>* out) {
  for (int i = 0; i < count; ++i) {
    out->reset();  // release the previous load first: every load maps the library afresh
    auto m = sorun::Model::Load(path);
    Check(m.status(), "load");
    out->emplace(std::move(*m));
  }
}

__attribute__((noinline)) void sorun_cg_create(const sorun::Model* model, int count,
                                               std::optional<sorun::Executor>* out) {
  for (int i = 0; i < count; ++i) {
    auto e = model->NewExecutor();
    Check(e.status(), "create");
    out->emplace(std::move(*e));
  }
}

__attribute__((noinline)) void sorun_cg_run(sorun::Executor* executor, int count) {
  for (int i = 0; i < count; ++i) Check(executor->Run(), "run");
}

}  // extern "C"

int main(int argc, char** argv) {
  std::string model_path;
  int count = 10;
  std::string phase = "run";
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) Die(k + " needs a value");
    if (k == "--model") {
      model_path = argv[++i];
    } else if (k == "--phase") {
      phase = argv[++i];
    } else if (k == "--count") {
      count = std::atoi(argv[++i]);
    } else {
      Die("unknown flag " + k + " (usage: callgrind_driver --model M.so [--phase P] [--count N])");
    }
  }
  if (model_path.empty() || count < 1 || (phase != "load" && phase != "create" && phase != "run")) {
    Die("usage: callgrind_driver --model M.so [--phase load|create|run] [--count N >= 1]");
  }
  Check(sorun::Initialize(), "initialize");
  std::optional<sorun::Model> model;
  sorun_cg_load(model_path.c_str(), phase == "load" ? count : 1, &model);
  std::optional<sorun::Executor> executor;
  sorun_cg_create(&*model, phase == "create" ? count : 1, &executor);
  for (size_t i = 0; i < executor->inputs().size(); ++i) {
    const sorun::TensorInfo& info = executor->inputs()[i];
    if (info.is_param) continue;
    auto input = executor->GetInput(static_cast<int>(i));  // the executor's own memory (a graph's)
    if (!input.ok()) {  // a Relax model's inputs exist once set: zeros, dynamic dims 1
      std::vector<int64_t> shape = info.shape;
      for (int64_t& d : shape) d = d < 0 ? 1 : d;
      auto zeros = sorun::NDArray::Empty(shape, info.dtype);
      Check(zeros.status(), "input");
      std::memset(zeros->data(), 0, static_cast<size_t>(zeros->nbytes()));
      Check(executor->SetInput(static_cast<int>(i), zeros->dl()), "input");
      continue;
    }
    std::memset(input->data(), 0, static_cast<size_t>(input->nbytes()));  // same data every run
  }
  Check(executor->Run(), "first run");  // faults pages in and sizes the workspace, outside the counts
  sorun_cg_run(&*executor, phase == "run" ? count : 1);
  std::printf("callgrind_driver: %s: ok\n", model_path.c_str());
  return 0;
}
