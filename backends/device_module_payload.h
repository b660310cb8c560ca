// DeviceModulePayload: the blob payload shared by TVM's device modules ("cuda", "opencl", ...):
// `string fmt; map<string, FunctionInfo> fmap; string data` (docs/spec/FORMAT.md section 8). Parsed
// without touching any driver, so `sorun inspect` and the loader share it. FunctionInfo comes in two
// grammars (PayloadGrammar): TVM v0.8 - v0.20 write `string name; vector<DLDataType> arg_types;
// vector<string> tags`; TVM 0.21+ (tvm-ffi) append `vector<i32> arg_extra_tags` (docs/spec/RELAX_FORMAT.md
// section 7). Pure data and pure functions; thread-compatible (the registration function is
// thread-safe).
#ifndef SORUN_BACKENDS_DEVICE_MODULE_PAYLOAD_H_
#define SORUN_BACKENDS_DEVICE_MODULE_PAYLOAD_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "format/binary_reader.h"
#include "format/binary_writer.h"
#include "runtime/c_runtime_api.h"
#include "runtime/module.h"
#include "runtime/registry_keys.h"

namespace sorun {

// Prefix of TVM 0.22+'s module loaders: "ffi.Module.load_from_bytes.<kind>", called with ONE
// argument, the module's payload bytes, returning the module (docs/spec/RELAX_FORMAT.md section 3).
using keys::kFfiLoadFromBytesPrefix;  // runtime/registry_keys.h

// How a payload encodes its FunctionInfos.
enum class PayloadGrammar {
  kLegacy,  // TVM 0.8 - 0.20: name, arg_types, launch_param_tags
  kFfi,     // TVM 0.21+: the same, then vector<i32> arg_extra_tags
  // Reading only: either, told apart at the first kernel. The word after its launch tags is, in the
  // ffi grammar, a count m <= its argument count followed by m i32 tags each 0 or 1; in the legacy
  // grammar it is the length of the next kernel name (whose first bytes, name characters, are never
  // an i32 0 or 1) or of the code image (never that short nor starting so). Used by the stream
  // loaders, which serve both the legacy containers of TVM <= 0.20 and TVM 0.21's.
  kDetect,
};
const char* PayloadGrammarName(PayloadGrammar grammar);  // "legacy", "ffi", "detect"

// Values of FunctionInfo::arg_extra_tags (TVM's ArgExtraTags).
inline constexpr int32_t kArgExtraTagNone = 0;
inline constexpr int32_t kArgExtraTagTensorMap = 1;  // a CUDA tensor map (TMA descriptor), by value: refused

// One kernel of a device module.
struct FunctionInfo {
  std::string name;  // TVM <= 0.20 write it empty; the fmap key is authoritative
  std::vector<DLDataType> arg_types;
  // "blockIdx.x", "threadIdx.y", "tir.use_dyn_shared_memory" ("tirx." since TVM 0.26), ...
  std::vector<std::string> launch_param_tags;
  // Ffi grammar only: one tag per leading argument (may be shorter than arg_types, usually equal).
  std::vector<int32_t> arg_extra_tags;
};

struct DeviceModulePayload {
  PayloadGrammar grammar = PayloadGrammar::kLegacy;  // as read (never kDetect); the writer uses it
  std::string fmt;  // "ptx", "cubin", "fatbin", "cl", "cuda" (CUDA source, refused by the cuda module), ...
  // Kernels by name, sorted by name (TVM writes hash order; readers must not depend on it).
  std::vector<std::pair<std::string, FunctionInfo>> functions;
  std::string data;  // the code image or source

  const FunctionInfo* Find(const std::string& name) const;
};

// Reads and validates one payload in `grammar`: every launch tag known and the dyn-shared-memory tag
// last, argument dtypes passable to a kernel, no duplicate kernel names (LaunchConfig::FromFunctionInfo).
// `module_kind` ("cuda") prefixes errors, which name the byte offset: DataLoss for malformed bytes,
// Unimplemented (naming the kernel and the tag) for what sorun cannot launch: TensorMap arguments,
// cooperative, programmatic-dependent, required-block-dimension and cluster launches.
Status ReadDeviceModulePayload(BinaryReader& reader, const char* module_kind, DeviceModulePayload* out,
                               PayloadGrammar grammar = PayloadGrammar::kLegacy);
// Writes the payload in payload.grammar (functions in the stored order).
void WriteDeviceModulePayload(const DeviceModulePayload& payload, BinaryWriter* writer);

// A backend's stream loader: reads a payload of its kind at `reader` in `grammar` and creates the module.
using DevicePayloadLoader = std::function<StatusOr<Module>(BinaryReader& reader, PayloadGrammar grammar)>;
// Registers kFfiLoadFromBytesPrefix + `kind` (replacing an earlier registration): its one argument (bytes
// or str) is read with `load` in the ffi grammar and must be consumed exactly (DataLoss naming the
// trailing bytes otherwise). Errors name "<kind> payload byte N". Thread-safe.
Status RegisterFfiBytesLoader(const char* kind, DevicePayloadLoader load);

// The code formats a `cuda` module loads (ptx, cubin, fatbin); `fmt "cuda"` (CUDA C++ source, what TVM
// writes when the exporting machine has no driver) is Unimplemented (no NVRTC), anything else
// InvalidArgument, an empty image InvalidArgument. Driverless: the loader and `sorun inspect` share it.
Status CheckCudaCodeFormat(const std::string& fmt, uint64_t image_bytes);

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

  // InvalidArgument for an argument type a kernel cannot take, an unknown launch tag or extra tag,
  // more extra tags than arguments; Unimplemented, naming the kernel and the tag, for what sorun
  // cannot launch (see ReadDeviceModulePayload).
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
