// GraphBuilder: builds a graph-executor graph in C++ (for the model zoo generator, tools and tests)
// and plans its storage like TVM's graph memory planner: graph inputs get their own storage,
// an operator output reuses the storage of an intermediate whose last reader already ran, a __nop
// (reshape) output aliases its input, and outputs are never reused. Not thread-safe.
#ifndef SORUN_GRAPH_EXECUTOR_GRAPH_BUILDER_H_
#define SORUN_GRAPH_EXECUTOR_GRAPH_BUILDER_H_

#include <dlpack/dlpack.h>

#include <string>
#include <vector>

#include "base/status.h"
#include "graph_executor/graph_json.h"

namespace sorun {

class GraphBuilder {
 public:
  // A graph input (user input or parameter). Returns its node id.
  int Input(const std::string& name, std::vector<int64_t> shape, DLDataType dtype = DLDataType{kDLFloat, 32, 1});
  // An operator calling kernel `func_name` on output 0 of each node in `inputs`, producing one output.
  int Op(const std::string& func_name, const std::vector<int>& inputs, std::vector<int64_t> out_shape,
         DLDataType dtype = DLDataType{kDLFloat, 32, 1}, const std::string& name = "", bool flatten_data = false);
  // A reshape that moves no data (func_name "__nop"): the output aliases the input's storage.
  int Reshape(int input, std::vector<int64_t> out_shape, const std::string& name = "reshape_nop");
  // Marks output 0 of `node` as a graph output.
  void Output(int node);
  // Places every entry on `device_type` (adds the device_index attribute).
  void SetDeviceType(int node, int device_type);

  // The finished graph (storage planned, validated).
  StatusOr<GraphSpec> Build() const;
  StatusOr<std::string> BuildJson() const;

 private:
  GraphSpec g_;
  std::vector<int> device_type_;
  bool has_device_ = false;
};

}  // namespace sorun

#endif  // SORUN_GRAPH_EXECUTOR_GRAPH_BUILDER_H_
