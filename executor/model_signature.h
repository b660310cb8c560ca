// ModelSignature: what a model takes and gives, as every executor kind describes it — the inputs and
// outputs (api's TensorInfo: name, dtype, shape with -1 for a dimension known only at run time) and the
// one rule that turns a name into an index (NotFound listing the names). Built once per model by its
// Executable (executor/executable.h) and shared, immutable, by every executor made from it: thread-safe.
//
// Naming rules, the same for every kind:
//   - an input is found by its exact name;
//   - an output by its exact name, or "<name>:0" for an output named "<name>" (TVM's graph outputs are
//     "node", "node:1", ...), or — when the model does not describe its outputs statically (outputs()
//     empty: a Relax main whose bytecode branches) — "output_<k>" for any k >= 0, the range being
//     checked when output k is read.
#ifndef SORUN_EXECUTOR_MODEL_SIGNATURE_H_
#define SORUN_EXECUTOR_MODEL_SIGNATURE_H_

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/executor_types.h"
#include "base/status.h"

namespace sorun {

class ModelSignature {
 public:
  // `outputs` empty with `outputs_known` false: the count and names are known only after a run.
  static std::shared_ptr<const ModelSignature> Make(std::vector<TensorInfo> inputs, std::vector<TensorInfo> outputs,
                                                    bool outputs_known = true);

  const std::vector<TensorInfo>& inputs() const { return inputs_; }
  const std::vector<TensorInfo>& outputs() const { return outputs_; }
  // False when the model tells its outputs only by running (outputs() is then empty).
  bool outputs_known() const { return outputs_known_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }

  // NotFound "no input named 'x' (inputs: a, b)" listing the inputs a caller sets (parameters bound
  // from the weights are left out; the first 16, then "...").
  StatusOr<int> InputIndex(std::string_view name) const;
  // NotFound "no output named 'x' (outputs: y, z)"; see the naming rules above.
  StatusOr<int> OutputIndex(std::string_view name) const;
  // OutOfRange "input index 7 out of range (the model has 3 inputs)" unless 0 <= index < count.
  // `what` is "input" or "output".
  static Status CheckIndex(int index, int count, const char* what);

 private:
  ModelSignature() = default;
  std::vector<TensorInfo> inputs_;
  std::vector<TensorInfo> outputs_;
  bool outputs_known_ = true;
  std::unordered_map<std::string, int> input_index_;
  std::unordered_map<std::string, int> output_index_;
};

}  // namespace sorun

#endif  // SORUN_EXECUTOR_MODEL_SIGNATURE_H_
