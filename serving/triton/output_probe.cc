#include "serving/triton/output_probe.h"

#include <cstring>
#include <string>

#include "serving/triton/data_types.h"

namespace sorun::triton {

Status RunOnZeros(sorun::Executor& executor, int64_t dynamic_dim) {
  const std::vector<TensorInfo>& inputs = executor.inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorInfo& info = inputs[i];
    if (info.is_param) continue;
    std::vector<int64_t> shape = info.shape;
    for (int64_t& dim : shape) {
      if (dim < 0) dim = dynamic_dim;
    }
    SORUN_ASSIGN_OR_RETURN(NDArray zeros, NDArray::Empty(shape, info.dtype));
    std::memset(zeros.data(), 0, zeros.nbytes());
    Status set = executor.SetInput(static_cast<int>(i), zeros.dl());
    if (!set.ok()) return set.Annotate("probing the outputs: input '" + info.name + "' " + ShapeString(shape));
  }
  Status run = executor.Run();
  if (!run.ok()) {
    return run.Annotate("probing the outputs: running on zero inputs (dynamic dimensions " +
                        std::to_string(dynamic_dim) + ")");
  }
  return Status::Ok();
}

namespace {

// Name, dtype and shape of every output of `executor`'s last run (the output arrays' own).
StatusOr<std::vector<TensorInfo>> RunOutputs(const sorun::Executor& executor) {
  const std::vector<TensorInfo>& described = executor.outputs();
  std::vector<TensorInfo> out(static_cast<size_t>(executor.num_outputs()));
  for (size_t i = 0; i < out.size(); ++i) {
    SORUN_ASSIGN_OR_RETURN(NDArray output, executor.GetOutput(static_cast<int>(i)));
    out[i].name = i < described.size() ? described[i].name : "output_" + std::to_string(i);
    out[i].shape = output.shape();
    out[i].dtype = output.dtype();
  }
  return out;
}

}  // namespace

StatusOr<std::vector<TensorInfo>> ProbeOutputs(const sorun::Model& model) {
  ExecutorOptions options;
  options.num_threads = 1;
  SORUN_ASSIGN_OR_RETURN(Executor executor, model.NewExecutor(options));
  SORUN_RETURN_IF_ERROR(RunOnZeros(executor, 1));
  SORUN_ASSIGN_OR_RETURN(std::vector<TensorInfo> outputs, RunOutputs(executor));
  SORUN_RETURN_IF_ERROR(RunOnZeros(executor, 2));
  SORUN_ASSIGN_OR_RETURN(const std::vector<TensorInfo> second, RunOutputs(executor));
  if (second.size() != outputs.size()) {
    return Unimplemented("probing the outputs: main returns " + std::to_string(outputs.size()) +
                         " tensors for dynamic dimensions 1 and " + std::to_string(second.size()) +
                         " for 2; the sorun backend serves a fixed number of outputs");
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    TensorInfo& info = outputs[i];
    const TensorInfo& other = second[i];
    if (other.name != info.name || other.shape.size() != info.shape.size() || other.dtype.code != info.dtype.code ||
        other.dtype.bits != info.dtype.bits || other.dtype.lanes != info.dtype.lanes) {
      return Unimplemented("probing the outputs: output " + std::to_string(i) + " is " + DataTypeName(info.dtype) +
                           " " + ShapeString(info.shape) + " for dynamic dimensions 1 but " +
                           DataTypeName(other.dtype) + " " + ShapeString(other.shape) +
                           " for 2; the sorun backend serves outputs of a fixed rank and dtype");
    }
    for (size_t d = 0; d < info.shape.size(); ++d) {
      if (info.shape[d] != other.shape[d]) info.shape[d] = -1;
    }
  }
  return outputs;
}

}  // namespace sorun::triton
