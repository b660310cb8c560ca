// Test helpers for the CUDA backend: the launch descriptions (FunctionInfo) of the kernels in
// testdata/cuda/test_kernels.cu, access to their nvcc-built images through runfiles, and the blob
// round trip (BinaryWriter -> BinaryReader -> RunBlobLoader("cuda")). Test-only; thread-compatible.
#ifndef SORUN_TESTS_CUDA_CUDA_TEST_KERNELS_H_
#define SORUN_TESTS_CUDA_CUDA_TEST_KERNELS_H_

#include <string>
#include <utility>
#include <vector>

#include "backends/device_module_payload.h"
#include "base/status.h"
#include "runtime/module.h"

namespace sorun {
namespace testing {

// A FunctionInfo with these parameter types and launch tags (name left empty, as TVM writes it).
FunctionInfo MakeFunctionInfo(std::vector<DLDataType> arg_types, std::vector<std::string> launch_param_tags);
// The dtype of a pointer parameter ("handle", 64 bits).
DLDataType HandleType();

// True when this test binary was built with nvcc available (the images exist in its runfiles).
bool HaveTestKernelImages();

// Runfile path of an image built from test_kernels.cu ("test_kernels.ptx", "test_kernels.fatbin",
// "test_kernels_sm90.cubin", "test_kernels_sm75.cubin").
std::string TestKernelImagePath(const std::string& file);

// The kernels of test_kernels.cu with their TVM launch descriptions, sorted by name.
std::vector<std::pair<std::string, FunctionInfo>> TestKernelFunctions();

// A payload of `fmt` holding `image` and TestKernelFunctions().
DeviceModulePayload TestKernelPayload(const std::string& fmt, std::string image);

// The payload's blob form (what SaveToBinary writes).
std::string SerializePayload(const DeviceModulePayload& payload);

// Serializes `payload` and loads it back through the registered "cuda" blob loader.
StatusOr<Module> LoadThroughBlobLoader(const DeviceModulePayload& payload);

// `module`'s SaveToBinary bytes (empty on failure, with a test failure recorded).
std::string SaveModule(const Module& module);

}  // namespace testing
}  // namespace sorun

#endif  // SORUN_TESTS_CUDA_CUDA_TEST_KERNELS_H_
