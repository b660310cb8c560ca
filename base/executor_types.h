// Plain value types that describe an executor's graph and resources: the name, shape and dtype of an
// input or output (TensorInfo), one kernel's time (NodeProfile, KernelEvent), bytes per device
// (DeviceMemory), what an executor kind can do beyond the common contract (ExecutorCapabilities) and
// how its runs were replayed as a device graph (DeviceGraphReport).
// Part of the public API (api/sorun.h includes this header), so it depends on DLPack and the C++
// library only. Pure data: copyable, thread-compatible.
#ifndef SORUN_BASE_EXECUTOR_TYPES_H_
#define SORUN_BASE_EXECUTOR_TYPES_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sorun {

// Name, shape and dtype of a model input or output. A dimension of -1 is known only at run time (a
// Relax model's dynamic dimension); the tensor a run gives or takes has the actual size.
struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  DLDataType dtype{kDLFloat, 32, 1};
  bool is_param = false;  // bound from the model's weights
};

// Time spent in one kernel call site (Executor::Profile): a graph's operator, a Relax instruction.
struct NodeProfile {
  uint32_t node_id = 0;
  std::string name;
  std::string func_name;
  double mean_us = 0;
  double min_us = 0;
};

// One kernel call of a traced run (Executor::Trace): the call site (as in NodeProfile), when it
// started (microseconds from the start of the trace) and how long it took.
struct KernelEvent {
  uint32_t node_id = 0;
  std::string name;
  std::string func_name;
  double start_us = 0;
  double duration_us = 0;
};

// Bytes per device.
struct DeviceMemory {
  DLDevice device{kDLCPU, 0};
  uint64_t weight_bytes = 0;      // shared parameters (once per device, whatever the executor count)
  uint64_t activation_bytes = 0;  // pools this executor allocates
  uint64_t workspace_bytes = 0;   // kernel workspace reserved so far (measured; 0 before a run)
};

// What an executor kind offers beyond the calls every executor has (Executor::capabilities(),
// Model::capabilities()). Declared by the kind, fixed for a model: a call to a capability the kind lacks
// fails with Unimplemented naming the capability and why the kind lacks it, before the executor is
// touched.
struct ExecutorCapabilities {
  bool output_zero_copy = false;  // SetOutputZeroCopy: kernels write straight into the caller's memory
  bool params_files = false;      // LoadParams / ShareParams: TVM params files bound to inputs
};

// How an executor asked for CUDA graphs (ExecutorOptions::cuda_graph) ran (Executor::GraphReport()).
// The first run with a set of bindings (input/output addresses and shapes) runs as usual, the second
// is captured into a graph, later ones replay it; a rebinding starts over. A run that cannot be
// captured (refusal says why) runs uncaptured.
struct DeviceGraphReport {
  bool requested = false;       // ExecutorOptions::cuda_graph
  bool active = false;          // a graph is captured for the current bindings
  int64_t captures = 0;         // graphs captured so far
  int64_t replays = 0;          // runs that launched a captured graph
  int64_t uncaptured_runs = 0;  // runs that ran kernel by kernel (first runs, refused runs)
  uint64_t operations = 0;      // operations recorded in the current graph (driver's node count)
  std::string refusal;          // why the current bindings are not captured ("" when they are, or may be)
};

}  // namespace sorun

#endif  // SORUN_BASE_EXECUTOR_TYPES_H_
