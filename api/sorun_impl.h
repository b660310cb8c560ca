// The private state behind api/sorun.h's pimpl classes (Model, Executor, NDArray), shared by the
// api/*.cc files that implement them. Internal: nothing outside api/ includes it.
//
// Ownership: a Model::Impl is immutable and shared by every copy of the Model: it holds the model's
// Executable (executor/executable.h: whichever executor kind runs it; the module tree, kernels and
// weights stay alive through it). An Executor::Impl owns its ModelExecutor, which holds what it runs
// from (so an executor outlives the Model it came from); an NDArray::Impl holds a reference-counted
// Tensor (so an array outlives the executor whose memory it views). No kind is named here.
#ifndef SORUN_API_SORUN_IMPL_H_
#define SORUN_API_SORUN_IMPL_H_

#include <memory>
#include <string>
#include <utility>

#include "api/sorun.h"
#include "base/object.h"
#include "executor/executable.h"
#include "executor/model_executor.h"
#include "runtime/tensor.h"

namespace sorun {

struct Model::Impl {
  ObjectPtr<Executable> executable;  // non-null
  std::string path;
};

struct Executor::Impl {
  std::unique_ptr<ModelExecutor> executor;  // non-null
};

struct NDArray::Impl {
  explicit Impl(Tensor t) : tensor(std::move(t)) {}
  Tensor tensor;  // defined
};

}  // namespace sorun

#endif  // SORUN_API_SORUN_IMPL_H_
