// The private state behind api/sorun.h's pimpl classes (Model, Executor, NDArray), shared by the
// api/*.cc files that implement them. Internal: nothing outside api/ includes it.
//
// Ownership: a Model::Impl is immutable and shared by every copy of the Model; an Executor::Impl owns
// its GraphExecutor (or Relax VmExecutor), which holds the graph, kernel library, weights and thread pool it uses (so
// an executor outlives the Model it came from); an NDArray::Impl holds a reference-counted Tensor (so an array outlives
// the executor whose memory it views).
#ifndef SORUN_API_SORUN_IMPL_H_
#define SORUN_API_SORUN_IMPL_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/model_loading.h"
#include "api/sorun.h"
#include "graph_executor/graph_executor.h"
#include "relax/vm_executor.h"
#include "relax/vm_program.h"
#include "runtime/tensor.h"

namespace sorun {

struct Model::Impl {
  // Reads inputs/outputs from the graph (DescribeGraphInputs: the rule every executor follows).
  static Impl Make(ModelParts parts, std::string path);
  // A Relax VM model: inputs/outputs from main's signature (relax/vm_program.h).
  static Impl MakeVm(Module root, ObjectPtr<relax::VmProgram> program, std::string path);
  // The state of a moved-from Model (empty).
  static const Impl& Empty();

  ModelParts parts;                     // graph-executor models
  ObjectPtr<relax::VmProgram> program;  // Relax VM models (parts.root holds the module tree)
  std::string path;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
};

struct Executor::Impl {
  std::unique_ptr<GraphExecutor> executor;  // exactly one of executor / vm is set
  std::unique_ptr<relax::VmExecutor> vm;
  std::shared_ptr<const void> model;      // the Model::Impl that `inputs` and `outputs` belong to
  const std::vector<TensorInfo>* inputs;  // the model's: every executor of a model has the same
  const std::vector<TensorInfo>* outputs;
};

struct NDArray::Impl {
  explicit Impl(Tensor t) : tensor(std::move(t)) {}
  Tensor tensor;  // defined
};

}  // namespace sorun

#endif  // SORUN_API_SORUN_IMPL_H_
