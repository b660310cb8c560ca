// The device types a model's kernels need, read once from its loaded module tree, and the one check of
// the devices an executor is asked for against them — the same for every executor kind. A model whose
// kernels are in a CUDA or OpenCL module (runtime/device_module_kind.h) cannot run them without a device
// of that type, and a model without such a module has no kernels for one: both are refused when the
// executor is asked for (Executable::CheckDevices, called by Model::NewExecutor), before a thread pool,
// a buffer or an upload is made, instead of failing at the first kernel with the kernel's own message.
// Pure functions of their arguments; any thread (a module tree is immutable once loaded).
#ifndef SORUN_EXECUTOR_DEVICE_CHECK_H_
#define SORUN_EXECUTOR_DEVICE_CHECK_H_

#include <dlpack/dlpack.h>

#include <vector>

#include "base/status.h"
#include "runtime/module.h"

namespace sorun {

// DeviceTypesOfModules (runtime/device_module_kind.h) of the modules in `tree`, the root and its imports
// depth-first: the device types of its device modules, or {kDLCPU} when it has none.
std::vector<DLDeviceType> DeviceTypesNeeded(const Module& tree);

// OK when an executor on `devices` can run kernels for `needed` (DeviceTypesNeeded's list): every
// device type of a device module has a device among `devices`, and every non-CPU device has a module
// of its type. Otherwise InvalidArgument (the caller's devices are wrong for this model), e.g.
//   "its kernels are in a CUDA module: it needs a cuda device, the executor was given cpu:0"
//   "it has kernels for cpu only (no OpenCL module): it cannot run on opencl:0"
// The caller annotates it with the model's path.
Status CheckExecutorDevices(const std::vector<DLDeviceType>& needed, const std::vector<DLDevice>& devices);

}  // namespace sorun

#endif  // SORUN_EXECUTOR_DEVICE_CHECK_H_
