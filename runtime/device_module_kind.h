// Which device a device module's kernels run on, by the module's type key: the blob key, which is also
// the loaded module's ModuleNode::type_key() (keys::kTypeKeyCuda "cuda" -> kDLCUDA, keys::kTypeKeyOpenCL
// "opencl" -> kDLOpenCL). The one mapping for the runtime (the executor's device check,
// executor/device_check.h, over a loaded module tree) and for `sorun inspect` / `sorun verify`, which
// read the keys from the file (inspect/model_inspector.h). Pure functions; any thread.
#ifndef SORUN_RUNTIME_DEVICE_MODULE_KIND_H_
#define SORUN_RUNTIME_DEVICE_MODULE_KIND_H_

#include <dlpack/dlpack.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sorun {

// The device type whose kernels a module of `type_key` holds; nullopt for every other module (the
// kernel library's host code, executor roots, constants).
std::optional<DLDeviceType> DeviceTypeOfModule(std::string_view type_key);

// The device types a model whose modules have `type_keys` needs: each DeviceTypeOfModule once, in the
// order first met, or {kDLCPU} when none is a device module (its kernels are the host library's own).
std::vector<DLDeviceType> DeviceTypesOfModules(const std::vector<std::string_view>& type_keys);

// How messages name the device module of `type`: "CUDA module", "OpenCL module"; for a type no module
// kind of sorun holds, its DeviceTypeName ("vulkan module").
std::string DeviceModuleName(DLDeviceType type);

}  // namespace sorun

#endif  // SORUN_RUNTIME_DEVICE_MODULE_KIND_H_
