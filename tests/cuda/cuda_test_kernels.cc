#include "tests/cuda/cuda_test_kernels.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "format/binary_reader.h"
#include "format/binary_writer.h"
#include "runtime/blob_loader.h"
#include "runtime/data_type.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace testing {

FunctionInfo MakeFunctionInfo(std::vector<DLDataType> arg_types, std::vector<std::string> launch_param_tags) {
  FunctionInfo info;
  info.arg_types = std::move(arg_types);
  info.launch_param_tags = std::move(launch_param_tags);
  return info;
}

DLDataType HandleType() { return MakeDType(kDTypeHandle, 64); }

bool HaveTestKernelImages() {
#ifdef SORUN_HAVE_CUDA_TEST_KERNELS
  return true;
#else
  return false;
#endif
}

std::string TestKernelImagePath(const std::string& file) { return Runfile("testdata/cuda/" + file); }

std::vector<std::pair<std::string, FunctionInfo>> TestKernelFunctions() {
  return {
      {"affine_2d",
       MakeFunctionInfo({HandleType(), HandleType(), Int32(), Int32(), Float32(), Int64(), MakeDType(kDLFloat, 64)},
                        {"blockIdx.x", "blockIdx.y", "threadIdx.x", "threadIdx.y"})},
      {"barrier_probe", MakeFunctionInfo({HandleType()}, {})},
      {"reverse_dyn_smem", MakeFunctionInfo({HandleType(), HandleType(), Int32()},
                                            {"blockIdx.x", "threadIdx.x", "tir.use_dyn_shared_memory"})},
      {"vector_add",
       MakeFunctionInfo({HandleType(), HandleType(), HandleType(), Int32()}, {"blockIdx.x", "threadIdx.x"})},
  };
}

DeviceModulePayload TestKernelPayload(const std::string& fmt, std::string image) {
  DeviceModulePayload payload;
  payload.fmt = fmt;
  payload.functions = TestKernelFunctions();
  payload.data = std::move(image);
  return payload;
}

std::string SerializePayload(const DeviceModulePayload& payload) {
  BinaryWriter writer;
  WriteDeviceModulePayload(payload, &writer);
  return writer.TakeBytes();
}

StatusOr<Module> LoadThroughBlobLoader(const DeviceModulePayload& payload) {
  const std::string bytes = SerializePayload(payload);
  BinaryReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "test blob");
  SORUN_ASSIGN_OR_RETURN(Module module, RunBlobLoader("cuda", reader));
  if (!reader.at_end()) return Internal("the cuda loader left " + std::to_string(reader.remaining()) + " bytes");
  return module;
}

std::string SaveModule(const Module& module) {
  BinaryWriter writer;
  Status status = module->SaveToBinary(&writer);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return writer.TakeBytes();
}

}  // namespace testing
}  // namespace sorun
