// MarshalKernelArgs: TVM packed arguments -> the `void** kernelParams` array of cuLaunchKernel
// (docs: docs/spec/FORMAT.md section 8.1, "Param marshalling"). Pure and driver-free, so it is unit-tested on
// machines without a GPU.
//
// Each kernel parameter gets one 8-byte slot; kernelParams[i] points at slot i. Integer and float
// parameters narrower than 64 bits are narrowed from the TVMValue's int64 / double into the low
// bytes of their slot (the driver reads KernelArgBytes(type) bytes); 64-bit scalars are copied
// whole; a handle parameter's slot holds the raw device pointer. The launch values that follow the
// parameters (grid/block extents, dynamic shared memory) are read by ExtractLaunchDims
// (backends/device_module_payload.h).
//
// Thread-compatible: a KernelArgs is filled and used by one thread at a time; reusing one across
// launches keeps its capacity (no allocation per launch).
#ifndef SORUN_BACKENDS_CUDA_KERNEL_ARGS_H_
#define SORUN_BACKENDS_CUDA_KERNEL_ARGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "backends/device_module_payload.h"
#include "base/status.h"
#include "runtime/c_runtime_api.h"

namespace sorun {

// One kernel parameter as the driver reads it: every member starts at offset 0.
union KernelArgSlot {
  int8_t i8;
  int16_t i16;
  int32_t i32;
  int64_t i64;
  uint8_t u8;
  uint16_t u16;
  uint32_t u32;
  uint64_t u64;
  float f32;
  double f64;
};
static_assert(sizeof(KernelArgSlot) == 8, "kernel argument slots are 8 bytes");

// The marshalled parameters of one launch. `pointers[i] == &slots[i]`; both have one entry per
// kernel parameter. Owns its storage; the pointers stay valid until the next Marshal into it.
struct KernelArgs {
  std::vector<KernelArgSlot> slots;
  std::vector<void*> pointers;

  // The array to pass as cuLaunchKernel's kernelParams (nullptr when there are no parameters).
  void** kernel_params() { return pointers.empty() ? nullptr : pointers.data(); }
};

// Fills `out` from the first info.arg_types.size() of `num_args` packed values. Checks, with errors
// naming `kernel` and the argument index:
//  - num_args == arg_types.size() + launch_param_tags.size() (parameters + launch values);
//  - every parameter type is passable (KernelArgBytes);
//  - integer parameters get an int (or bool) whose value fits the type's bits (signed or unsigned
//    reading); float parameters get a float or an int;
//  - handle parameters get an opaque handle (the raw device pointer), null, or a DLTensor / NDArray
//    on a CUDA-visible device (kDLCUDA, kDLCUDAHost, kDLCUDAManaged), passed as data + byte_offset.
// All failures are InvalidArgument; `out` is unspecified after a failure.
Status MarshalKernelArgs(const std::string& kernel, const FunctionInfo& info, const TVMValue* values, const int* codes,
                         int num_args, KernelArgs* out);

}  // namespace sorun

#endif  // SORUN_BACKENDS_CUDA_KERNEL_ARGS_H_
