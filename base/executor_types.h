// Plain value types that describe an executor's graph and resources: the name, shape and dtype of an
// input or output (TensorInfo), one operator's time (NodeProfile) and bytes per device
// (DeviceMemory). Part of the public API (api/sorun.h includes this header), so it depends on DLPack
// and the C++ library only. Pure data: copyable, thread-compatible.
#ifndef SORUN_BASE_EXECUTOR_TYPES_H_
#define SORUN_BASE_EXECUTOR_TYPES_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sorun {

// Name, shape and dtype of a graph input or output.
struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  DLDataType dtype{kDLFloat, 32, 1};
  bool is_param = false;  // bound from the model's weights
};

// Time spent in one operator (Executor::Profile).
struct NodeProfile {
  uint32_t node_id = 0;
  std::string name;
  std::string func_name;
  double mean_us = 0;
  double min_us = 0;
};

// Bytes per device.
struct DeviceMemory {
  DLDevice device{kDLCPU, 0};
  uint64_t weight_bytes = 0;      // shared parameters (once per device, whatever the executor count)
  uint64_t activation_bytes = 0;  // pools this executor allocates
  uint64_t workspace_bytes = 0;   // kernel workspace reserved so far (measured; 0 before a run)
};

}  // namespace sorun

#endif  // SORUN_BASE_EXECUTOR_TYPES_H_
