// SharedWeights: the one read-only copy of a model's parameters that every executor of a factory
// uses. On the CPU the tensors are used as they are (often zero-copy views into the mapped library);
// for another device each weight is uploaded once, on first request, and the uploaded copy is shared
// by all executors on that device. Thread-safe.
#ifndef SORUN_GRAPH_EXECUTOR_SHARED_WEIGHTS_H_
#define SORUN_GRAPH_EXECUTOR_SHARED_WEIGHTS_H_

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "graph_executor/graph_json.h"
#include "base/object.h"
#include "base/status.h"
#include "runtime/tensor.h"
#include "runtime/tensor_io.h"

namespace sorun {

class SharedWeights final : public Object {
 public:
  // `params`: CPU tensors by name (names unique). `source` names where they came from in errors (the
  // params file of a three-file deployment; empty for a factory's own params).
  static StatusOr<ObjectPtr<SharedWeights>> Create(NamedTensors params, std::string source = {});

  // The one params-vs-graph rule: every weight named like an input of `graph` has that input's dtype
  // and shape. The error names the param and `source`.
  Status CheckAgainstGraph(const GraphSpec& graph) const;

  // The CPU tensor named `name`, or nullptr.
  const Tensor* Find(const std::string& name) const;
  // The weight on `device` (uploaded once per device; the CPU tensor itself for the CPU).
  StatusOr<Tensor> OnDevice(const std::string& name, DLDevice device);

  const NamedTensors& params() const { return params_; }
  const std::string& source() const { return source_; }
  uint64_t total_bytes() const { return total_bytes_; }
  // Bytes uploaded to `device` so far.
  uint64_t uploaded_bytes(DLDevice device) const;

 private:
  SharedWeights() = default;
  NamedTensors params_;
  std::string source_;
  std::unordered_map<std::string, size_t> index_;
  uint64_t total_bytes_ = 0;
  mutable std::mutex mutex_;
  std::map<std::pair<int, int>, std::unordered_map<std::string, Tensor>> uploaded_;
};

}  // namespace sorun

#endif  // SORUN_GRAPH_EXECUTOR_SHARED_WEIGHTS_H_
