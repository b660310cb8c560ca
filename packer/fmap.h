// Kernel description files ("fmap" files) for `sorun pack --cuda/--opencl`: the launch description of
// every kernel of a device-code file, in the layout of TVM's `.tvm_meta.json` sidecar
// (SaveMetaDataToFile / LoadMetaDataFromFile):
//
//   {"tvm_version": "0.16.0",                        optional, informational
//    "func_info": {
//      "vadd": {"name": "",                          optional (TVM writes it empty)
//               "arg_types": ["handle", "handle", "float32", "int32"],
//               "launch_param_tags": ["blockIdx.x", "threadIdx.x"]}}}
//
// "thread_axis_tags" is accepted as an alias of "launch_param_tags" (TVM's reader does the same; giving
// both is an error unless they are equal). "arg_extra_tags" (TVM v0.21+) is accepted only when every tag
// is 0: the legacy payload cannot carry others. Other keys are errors (they are typos). Every kernel is
// validated with LaunchConfig::FromFunctionInfo (argument types a kernel can take, known launch tags,
// tir.use_dyn_shared_memory last). Errors (InvalidArgument) name the file and the kernel. Pure; reentrant.
#ifndef SORUN_PACKER_FMAP_H_
#define SORUN_PACKER_FMAP_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/device_module_payload.h"
#include "base/status.h"

namespace sorun {

using KernelMap = std::vector<std::pair<std::string, FunctionInfo>>;

// Kernels sorted by name. `source_name` names the input in errors.
StatusOr<KernelMap> ParseFmapJson(std::string_view json, const std::string& source_name);
StatusOr<KernelMap> ReadFmapFile(const std::string& path);

}  // namespace sorun

#endif  // SORUN_PACKER_FMAP_H_
