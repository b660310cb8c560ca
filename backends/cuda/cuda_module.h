// The "cuda" device module (TVM's CUDAModule): a PTX, cubin or fatbin image plus the launch
// description of each kernel (DeviceModulePayload, docs/spec/FORMAT.md section 8.1).
//
// GetFunction(kernel) returns a PackedFunc with TVM's calling convention: the kernel's parameters,
// then one integer per thread-axis tag, then the dynamic shared-memory size when the kernel uses it.
// A call marshals the parameters (MarshalKernelArgs), loads the image on the calling thread's
// current device if not done yet (cuModuleLoadData, once per device, under a lock), raises the
// kernel's dynamic shared-memory limit when a launch needs 48 KiB or more, and launches on the
// thread's current stream of that device. Launch failures read "CUDA launch of kernel K failed:
// CUDA_ERROR_...: description (grid ..., block ..., ...)". The function
// "__tvm_prepare_global_barrier" zeroes the image's `__tvm_global_barrier_state` global, when it
// has one, on the current device and stream.
//
// Ownership: the module owns its payload and the per-device CUmodules (unloaded when the last
// reference goes); functions keep the module alive. Thread-safe: calls may come from any number of
// threads at once.
#ifndef SORUN_BACKENDS_CUDA_CUDA_MODULE_H_
#define SORUN_BACKENDS_CUDA_CUDA_MODULE_H_

#include "backends/device_module_payload.h"
#include "base/status.h"
#include "format/binary_reader.h"
#include "runtime/module.h"

namespace sorun {

// Creates a module from `payload`. Unimplemented for fmt "cuda" (CUDA C++ source: TVM writes it when
// the exporting machine has no CUDA driver; sorun has no NVRTC) and for kernels sorun cannot launch
// (LaunchConfig::FromFunctionInfo); InvalidArgument when fmt is not "ptx", "cubin" or "fatbin" (TVM
// labels fatbins "cubin"; the driver accepts either), when the image is empty, or when a kernel's
// FunctionInfo is malformed. Does not touch the driver: images are loaded on first use (or by
// PrepareCudaModule).
StatusOr<Module> CreateCudaModule(DeviceModulePayload payload);

// Loads `module`'s image on `device_id` now (a no-op when already loaded), so a missing
// architecture ("no kernel image for this GPU", PTX too new for the driver, invalid PTX with the
// JIT's log) is reported here, naming the device and its sm version. InvalidArgument when `module`
// is not a cuda module; the driver's error (Unavailable "no CUDA driver: ...") without a driver.
Status PrepareCudaModule(const Module& module, int device_id);

// The loader: reads a "cuda" payload at `reader` in `grammar` and creates the module. Registered as
// the blob loader "runtime.module.loadbinary_cuda" (kDetect: the legacy containers of TVM <= 0.20 and
// TVM 0.21's) and as "ffi.Module.load_from_bytes.cuda" (kFfi, TVM 0.22+; RegisterFfiBytesLoader). When a driver with at
// least one device is present, the image is loaded on the calling thread's current device right away
// (PrepareCudaModule) so incompatible code fails the model load; without a driver the check is deferred silently and
// loading succeeds. Malformed payloads are DataLoss with the byte offset.
StatusOr<Module> LoadCudaModuleFromBlob(BinaryReader& reader, PayloadGrammar grammar = PayloadGrammar::kDetect);

}  // namespace sorun

#endif  // SORUN_BACKENDS_CUDA_CUDA_MODULE_H_
