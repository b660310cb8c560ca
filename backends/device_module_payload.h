// DeviceModulePayload: the blob payload shared by TVM's device modules ("cuda", "opencl", ...):
// `string fmt; map<string, FunctionInfo> fmap; string data` (FORMAT.md section 8). Parsed
// without touching any driver, so `sorun inspect` and the loader share it. FunctionInfo is TVM's
// v0.8 - v0.20 stream form: `string name; vector<DLDataType> arg_types; vector<string> tags`.
// Pure data; thread-compatible.
#ifndef SORUN_BACKENDS_DEVICE_MODULE_PAYLOAD_H_
#define SORUN_BACKENDS_DEVICE_MODULE_PAYLOAD_H_

#include <dlpack/dlpack.h>

#include <string>
#include <vector>

#include "base/status.h"
#include "format/binary_reader.h"
#include "format/binary_writer.h"
#include "runtime/c_runtime_api.h"

namespace sorun {

// One kernel of a device module.
struct FunctionInfo {
  std::string name;  // TVM writes it empty; the fmap key is authoritative
  std::vector<DLDataType> arg_types;
  std::vector<std::string> launch_param_tags;  // "blockIdx.x", "threadIdx.y", "tir.use_dyn_shared_memory"
};

struct DeviceModulePayload {
  std::string fmt;  // "ptx", "cubin", "fatbin", "cl", ...
  // Kernels by name, sorted by name (TVM writes hash order; readers must not depend on it).
  std::vector<std::pair<std::string, FunctionInfo>> functions;
  std::string data;  // the code image or source

  const FunctionInfo* Find(const std::string& name) const;
};

// Reads and validates one payload: every launch tag known and the dyn-shared-memory tag last,
// argument dtypes passable to a kernel, no duplicate kernel names. `module_kind` ("cuda") prefixes
// errors.
Status ReadDeviceModulePayload(BinaryReader& reader, const char* module_kind, DeviceModulePayload* out);
// Writes the payload (functions in the stored order).
void WriteDeviceModulePayload(const DeviceModulePayload& payload, BinaryWriter* writer);

// How a kernel's packed arguments map to a launch: the first `num_kernel_args` values are the
// kernel's parameters, then one integer per thread-axis tag, then (optionally) the dynamic
// shared-memory byte count.
struct LaunchConfig {
  int num_kernel_args = 0;
  // For each thread-axis tag in order: 0..2 = grid (blockIdx) dimension, 3..5 = block (threadIdx).
  std::vector<int> tag_dims;
  bool use_dyn_shared_memory = false;
  // 1 + the highest dimension any tag uses (OpenCL's work_dim).
  int work_dim = 1;

  static StatusOr<LaunchConfig> FromFunctionInfo(const std::string& kernel, const FunctionInfo& info);
  // Packed argument count a caller must pass.
  int num_packed_args() const {
    return num_kernel_args + static_cast<int>(tag_dims.size()) + (use_dyn_shared_memory ? 1 : 0);
  }
};

// A concrete launch: grid and block sizes (unset dims = 1) and dynamic shared memory bytes.
struct LaunchDims {
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  int64_t dyn_shared_bytes = 0;
};

// Reads the launch values that follow the kernel parameters in (values, codes). Values <= 0 leave
// a dimension at 1, as TVM does. Errors name the kernel and the argument.
StatusOr<LaunchDims> ExtractLaunchDims(const std::string& kernel, const LaunchConfig& config, const TVMValue* values,
                                       const int* codes, int num_args);

// Byte size of a kernel parameter of `type` as passed to the driver (4 for 32-bit scalars, 8 for
// 64-bit scalars and handles); an error for types a kernel cannot take.
StatusOr<size_t> KernelArgBytes(DLDataType type);

}  // namespace sorun

#endif  // SORUN_BACKENDS_DEVICE_MODULE_PAYLOAD_H_
