// Checks backends/cuda/cuda_driver_api.h — sorun's own declarations of the CUDA driver API — against
// the toolkit's cuda.h, at compile time: every constant's value, the handle types, and each entry
// point's parameter list (same count; same type, or integers/enums of the same size, or pointers to
// such). Built only where the CUDA Toolkit is installed (tests/cuda/BUILD.bazel).
#include <cuda.h>

#include <gtest/gtest.h>

#include <type_traits>

#include "backends/cuda/cuda_driver_api.h"

namespace {

namespace sc = ::sorun::cuda;

template <typename A, typename B>
constexpr bool CompatibleType() {
  if constexpr (std::is_same_v<A, B>) {
    return true;
  } else if constexpr ((std::is_integral_v<A> || std::is_enum_v<A>)&&(std::is_integral_v<B> || std::is_enum_v<B>)) {
    return sizeof(A) == sizeof(B);
  } else if constexpr (std::is_pointer_v<A> && std::is_pointer_v<B>) {
    using PA = std::remove_pointer_t<A>;
    using PB = std::remove_pointer_t<B>;
    return std::is_const_v<PA> == std::is_const_v<PB> && CompatibleType<std::remove_cv_t<PA>, std::remove_cv_t<PB>>();
  } else {
    return false;
  }
}

template <typename F, typename G>
struct SameAbi : std::false_type {};

template <typename R1, typename... A1, typename R2, typename... A2>
struct SameAbi<R1 (*)(A1...), R2 (*)(A2...)> {
  static constexpr bool Check() {
    if constexpr (sizeof...(A1) != sizeof...(A2)) {
      return false;
    } else {
      return CompatibleType<R1, R2>() && (CompatibleType<A1, A2>() && ...);
    }
  }
  static constexpr bool value = Check();
};

#define SORUN_CHECK_ENTRY_POINT(fn)                                               \
  static_assert(SameAbi<decltype(sc::CudaDriverApi::fn), decltype(&::fn)>::value, \
                "sorun's declaration of " #fn " does not match cuda.h")
SORUN_CHECK_ENTRY_POINT(cuGetErrorName);
SORUN_CHECK_ENTRY_POINT(cuGetErrorString);
SORUN_CHECK_ENTRY_POINT(cuInit);
SORUN_CHECK_ENTRY_POINT(cuDriverGetVersion);
SORUN_CHECK_ENTRY_POINT(cuDeviceGetCount);
SORUN_CHECK_ENTRY_POINT(cuDeviceGet);
SORUN_CHECK_ENTRY_POINT(cuDeviceGetName);
SORUN_CHECK_ENTRY_POINT(cuDeviceGetAttribute);
SORUN_CHECK_ENTRY_POINT(cuDeviceTotalMem_v2);
SORUN_CHECK_ENTRY_POINT(cuDevicePrimaryCtxRetain);
SORUN_CHECK_ENTRY_POINT(cuCtxSetCurrent);
SORUN_CHECK_ENTRY_POINT(cuCtxPushCurrent_v2);
SORUN_CHECK_ENTRY_POINT(cuCtxPopCurrent_v2);
SORUN_CHECK_ENTRY_POINT(cuCtxSynchronize);
SORUN_CHECK_ENTRY_POINT(cuMemAlloc_v2);
SORUN_CHECK_ENTRY_POINT(cuMemFree_v2);
SORUN_CHECK_ENTRY_POINT(cuMemcpyHtoD_v2);
SORUN_CHECK_ENTRY_POINT(cuMemcpyDtoH_v2);
SORUN_CHECK_ENTRY_POINT(cuMemcpyDtoD_v2);
SORUN_CHECK_ENTRY_POINT(cuMemcpyPeer);
SORUN_CHECK_ENTRY_POINT(cuMemcpyHtoDAsync_v2);
SORUN_CHECK_ENTRY_POINT(cuMemcpyDtoHAsync_v2);
SORUN_CHECK_ENTRY_POINT(cuMemcpyDtoDAsync_v2);
SORUN_CHECK_ENTRY_POINT(cuMemcpyPeerAsync);
SORUN_CHECK_ENTRY_POINT(cuMemsetD32Async);
SORUN_CHECK_ENTRY_POINT(cuStreamCreate);
SORUN_CHECK_ENTRY_POINT(cuStreamDestroy_v2);
SORUN_CHECK_ENTRY_POINT(cuStreamSynchronize);
SORUN_CHECK_ENTRY_POINT(cuModuleLoadDataEx);
SORUN_CHECK_ENTRY_POINT(cuModuleUnload);
SORUN_CHECK_ENTRY_POINT(cuModuleGetFunction);
SORUN_CHECK_ENTRY_POINT(cuModuleGetGlobal_v2);
SORUN_CHECK_ENTRY_POINT(cuFuncSetAttribute);
SORUN_CHECK_ENTRY_POINT(cuLaunchKernel);
SORUN_CHECK_ENTRY_POINT(cuStreamBeginCapture_v2);
SORUN_CHECK_ENTRY_POINT(cuStreamEndCapture);
SORUN_CHECK_ENTRY_POINT(cuGraphInstantiateWithFlags);
SORUN_CHECK_ENTRY_POINT(cuGraphLaunch);
SORUN_CHECK_ENTRY_POINT(cuGraphExecDestroy);
SORUN_CHECK_ENTRY_POINT(cuGraphDestroy);
SORUN_CHECK_ENTRY_POINT(cuGraphGetNodes);
#undef SORUN_CHECK_ENTRY_POINT

// The entry-point table has exactly the members checked above (34 function pointers).
static_assert(sizeof(sc::CudaDriverApi) == 41 * sizeof(void*), "check every CudaDriverApi member above");

static_assert(std::is_same_v<sc::CUcontext, ::CUcontext>);
static_assert(std::is_same_v<sc::CUmodule, ::CUmodule>);
static_assert(std::is_same_v<sc::CUfunction, ::CUfunction>);
static_assert(std::is_same_v<sc::CUstream, ::CUstream>);
static_assert(std::is_same_v<sc::CUgraph, ::CUgraph>);
static_assert(std::is_same_v<sc::CUgraphExec, ::CUgraphExec>);
static_assert(std::is_same_v<sc::CUgraphNode, ::CUgraphNode>);
static_assert(std::is_same_v<sc::CUdevice, ::CUdevice>);
static_assert(std::is_same_v<sc::CUdeviceptr, ::CUdeviceptr>);
static_assert(sizeof(sc::CUresult) == sizeof(::CUresult));

#define SORUN_CHECK_VALUE(name) static_assert(sc::name == static_cast<int>(::name), #name " differs from cuda.h")
SORUN_CHECK_VALUE(CUDA_SUCCESS);
SORUN_CHECK_VALUE(CUDA_ERROR_INVALID_VALUE);
SORUN_CHECK_VALUE(CUDA_ERROR_OUT_OF_MEMORY);
SORUN_CHECK_VALUE(CUDA_ERROR_NOT_INITIALIZED);
SORUN_CHECK_VALUE(CUDA_ERROR_DEINITIALIZED);
SORUN_CHECK_VALUE(CUDA_ERROR_STUB_LIBRARY);
SORUN_CHECK_VALUE(CUDA_ERROR_DEVICE_UNAVAILABLE);
SORUN_CHECK_VALUE(CUDA_ERROR_NO_DEVICE);
SORUN_CHECK_VALUE(CUDA_ERROR_INVALID_DEVICE);
SORUN_CHECK_VALUE(CUDA_ERROR_INVALID_IMAGE);
SORUN_CHECK_VALUE(CUDA_ERROR_NO_BINARY_FOR_GPU);
SORUN_CHECK_VALUE(CUDA_ERROR_INVALID_PTX);
SORUN_CHECK_VALUE(CUDA_ERROR_JIT_COMPILER_NOT_FOUND);
SORUN_CHECK_VALUE(CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
SORUN_CHECK_VALUE(CUDA_ERROR_JIT_COMPILATION_DISABLED);
SORUN_CHECK_VALUE(CUDA_ERROR_NOT_FOUND);
SORUN_CHECK_VALUE(CUDA_ERROR_ILLEGAL_ADDRESS);
SORUN_CHECK_VALUE(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
SORUN_CHECK_VALUE(CUDA_ERROR_LAUNCH_TIMEOUT);
SORUN_CHECK_VALUE(CUDA_ERROR_ASSERT);
SORUN_CHECK_VALUE(CUDA_ERROR_HARDWARE_STACK_ERROR);
SORUN_CHECK_VALUE(CUDA_ERROR_ILLEGAL_INSTRUCTION);
SORUN_CHECK_VALUE(CUDA_ERROR_MISALIGNED_ADDRESS);
SORUN_CHECK_VALUE(CUDA_ERROR_INVALID_ADDRESS_SPACE);
SORUN_CHECK_VALUE(CUDA_ERROR_INVALID_PC);
SORUN_CHECK_VALUE(CUDA_ERROR_LAUNCH_FAILED);
SORUN_CHECK_VALUE(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH);
SORUN_CHECK_VALUE(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE);
SORUN_CHECK_VALUE(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
SORUN_CHECK_VALUE(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
SORUN_CHECK_VALUE(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
SORUN_CHECK_VALUE(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
SORUN_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
SORUN_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
SORUN_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
SORUN_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
SORUN_CHECK_VALUE(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
SORUN_CHECK_VALUE(CU_JIT_WALL_TIME);
SORUN_CHECK_VALUE(CU_JIT_ERROR_LOG_BUFFER);
SORUN_CHECK_VALUE(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
#undef SORUN_CHECK_VALUE
static_assert(sc::CU_STREAM_DEFAULT == static_cast<unsigned>(::CU_STREAM_DEFAULT));
static_assert(sc::CU_STREAM_NON_BLOCKING == static_cast<unsigned>(::CU_STREAM_NON_BLOCKING));

// The checks above are compile-time; this records which header they ran against.
TEST(CudaDriverAbiTest, DeclarationsMatchCudaH) {
  EXPECT_GE(CUDA_VERSION, 4000);
  RecordProperty("cuda_h_version", CUDA_VERSION);
}

}  // namespace
