// The smallest complete embedding of sorun: a program linked statically with the CPU-only core
// (embedded/BUILD.bazel: one binary per executor variant, built at -Os for the size table in
// bench/README.md). It loads one model file, fills every non-parameter input with zeros, runs once and
// prints each output's description and first value. Exit 0 on success, 1 with the error on stderr when
// any step fails (a malformed or foreign-architecture model is refused by Model::Load), 2 on bad usage.
// Built with -DSORUN_HELLO_SYSTEM_LIB (hello_model_graph_system_lib, hello_model_vm_system_lib) it runs
// the model linked into the program instead (Model::LoadSystemLib: TVM's system-lib build), its optional
// argument the prefix.
#include <cstdio>
#include <vector>

#include "api/sorun.h"

namespace {

int Fail(const char* step, const sorun::Status& status) {
  std::fprintf(stderr, "%s: %s\n", step, status.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef SORUN_HELLO_SYSTEM_LIB
  if (argc > 2) {
    std::fprintf(stderr, "usage: %s [SYSTEM_LIB_PREFIX]\n", argv[0]);
    return 2;
  }
  sorun::StatusOr<sorun::Model> model = sorun::Model::LoadSystemLib(argc == 2 ? argv[1] : "");
#else
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL.so\n", argv[0]);
    return 2;
  }
  sorun::StatusOr<sorun::Model> model = sorun::Model::Load(argv[1]);
#endif
  if (!model.ok()) return Fail("load", model.status());
  sorun::StatusOr<sorun::Executor> exec = model->NewExecutor();
  if (!exec.ok()) return Fail("executor", exec.status());
  std::vector<sorun::NDArray> inputs;  // kept alive until Run has read them
  for (const sorun::TensorInfo& info : model->inputs()) {
    if (info.is_param) continue;
    std::vector<int64_t> shape = info.shape;
    for (int64_t& d : shape) d = d < 0 ? 1 : d;  // a dynamic dimension: run with 1
    sorun::StatusOr<sorun::NDArray> zeros = sorun::NDArray::Empty(shape, info.dtype);
    if (!zeros.ok()) return Fail("input", zeros.status());
    for (uint64_t k = 0; k < zeros->nbytes(); ++k) static_cast<char*>(zeros->data())[k] = 0;
    sorun::Status set = exec->SetInput(info.name, zeros->dl());
    if (!set.ok()) return Fail("input", set);
    inputs.push_back(*zeros);
  }
  sorun::Status run = exec->Run();
  if (!run.ok()) return Fail("run", run);
  for (size_t i = 0; i < model->outputs().size(); ++i) {
    sorun::StatusOr<sorun::NDArray> y = exec->GetOutput(static_cast<int>(i));
    if (!y.ok()) return Fail("output", y.status());
    std::printf("output %zu: %s", i, y->Describe().c_str());
    if (y->dtype().code == kDLFloat && y->dtype().bits == 32 && y->num_elements() > 0) {
      std::printf(", first value %g", static_cast<double>(y->data_as<float>()[0]));
    }
    std::printf("\n");
  }
  return 0;
}
