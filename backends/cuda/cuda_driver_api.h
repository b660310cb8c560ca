// The part of the CUDA driver API (libcuda.so.1) sorun uses, declared here instead of taken from
// the toolkit's cuda.h, so the CUDA backend builds identically on machines without the CUDA Toolkit
// and binaries built anywhere run on machines without a driver.
//
// The driver ABI is stable: NVIDIA never renumbers CUresult values or attributes and keeps every
// versioned entry point (`cuMemAlloc_v2`, ...) exported. The handle types reuse cuda.h's own opaque
// struct tags (CUctx_st, ...), so a CUcontext here *is* cuda.h's CUcontext. When the toolkit is
// installed, //tests/cuda:cuda_driver_abi_test checks every declaration below against cuda.h at
// compile time (values, sizes and each function's parameter list).
//
// Pure declarations (no code, no state); the function pointers live in CudaDriver (cuda_driver.h).
#ifndef SORUN_BACKENDS_CUDA_CUDA_DRIVER_API_H_
#define SORUN_BACKENDS_CUDA_CUDA_DRIVER_API_H_

#include <cstddef>

// cuda.h's opaque handle tags (never defined by anyone; only pointers to them exist).
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUgraph_st;
struct CUgraphExec_st;
struct CUgraphNode_st;

namespace sorun {
namespace cuda {

static_assert(sizeof(void*) == 8, "the CUDA backend supports 64-bit hosts only");

// Result of every driver call (cuda.h: enum cudaError_enum, 32 bits).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // NOLINT(runtime/int): cuda.h's spelling on 64-bit hosts
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUgraph = CUgraph_st*;
using CUgraphExec = CUgraphExec_st*;
using CUgraphNode = CUgraphNode_st*;
// cuda.h enums passed by value: 32-bit integers in the C ABI.
using CUdevice_attribute = int;
using CUfunction_attribute = int;
using CUjit_option = int;
using CUstreamCaptureMode = int;

// CUresult values sorun names (the driver's cuGetErrorName/String describes any value).
inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
inline constexpr CUresult CUDA_ERROR_DEINITIALIZED = 4;
inline constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
inline constexpr CUresult CUDA_ERROR_DEVICE_UNAVAILABLE = 46;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
inline constexpr CUresult CUDA_ERROR_INVALID_IMAGE = 200;
inline constexpr CUresult CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
inline constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
inline constexpr CUresult CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221;
inline constexpr CUresult CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
inline constexpr CUresult CUDA_ERROR_JIT_COMPILATION_DISABLED = 223;
inline constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
inline constexpr CUresult CUDA_ERROR_ILLEGAL_ADDRESS = 700;
inline constexpr CUresult CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701;
inline constexpr CUresult CUDA_ERROR_LAUNCH_TIMEOUT = 702;
inline constexpr CUresult CUDA_ERROR_ASSERT = 710;
inline constexpr CUresult CUDA_ERROR_HARDWARE_STACK_ERROR = 714;
inline constexpr CUresult CUDA_ERROR_ILLEGAL_INSTRUCTION = 715;
inline constexpr CUresult CUDA_ERROR_MISALIGNED_ADDRESS = 716;
inline constexpr CUresult CUDA_ERROR_INVALID_ADDRESS_SPACE = 717;
inline constexpr CUresult CUDA_ERROR_INVALID_PC = 718;
inline constexpr CUresult CUDA_ERROR_LAUNCH_FAILED = 719;
inline constexpr CUresult CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803;
inline constexpr CUresult CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804;
inline constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900;
inline constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901;
inline constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906;

// CUdevice_attribute values.
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

// CUfunction_attribute values.
inline constexpr CUfunction_attribute CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

// CUjit_option values (cuModuleLoadDataEx).
inline constexpr CUjit_option CU_JIT_WALL_TIME = 2;
inline constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER = 5;
inline constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

// cuStreamCreate flags: a stream that synchronizes with the legacy default stream (stream 0).
inline constexpr unsigned int CU_STREAM_DEFAULT = 0;
// cuStreamCreate flags: a stream independent of the legacy default stream.
inline constexpr unsigned int CU_STREAM_NON_BLOCKING = 1;

// CUstreamCaptureMode values: THREAD_LOCAL refuses unsafe calls (cuMemAlloc, synchronous copies) of
// the capturing thread only, so other threads' executors are not disturbed by a capture.
inline constexpr CUstreamCaptureMode CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;

// Entry points, by the exact symbol name resolved with dlsym (cuda.h maps the unversioned names to
// these `_v2` symbols with macros). Filled by CudaDriver; every pointer is non-null once loaded,
// except the CUDA-graph entry points at the end (CUDA 11.4+), which are null on an older driver.
struct CudaDriverApi {
  CUresult (*cuGetErrorName)(CUresult error, const char** str);
  CUresult (*cuGetErrorString)(CUresult error, const char** str);
  CUresult (*cuInit)(unsigned int flags);
  CUresult (*cuDriverGetVersion)(int* version);
  CUresult (*cuDeviceGetCount)(int* count);
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal);
  CUresult (*cuDeviceGetName)(char* name, int len, CUdevice device);
  CUresult (*cuDeviceGetAttribute)(int* value, CUdevice_attribute attribute, CUdevice device);
  CUresult (*cuDeviceTotalMem_v2)(size_t* bytes, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device);
  CUresult (*cuCtxSetCurrent)(CUcontext context);
  CUresult (*cuCtxPushCurrent_v2)(CUcontext context);
  CUresult (*cuCtxPopCurrent_v2)(CUcontext* context);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuMemAlloc_v2)(CUdeviceptr* ptr, size_t bytes);
  CUresult (*cuMemFree_v2)(CUdeviceptr ptr);
  CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr dst, const void* src, size_t bytes);
  CUresult (*cuMemcpyDtoH_v2)(void* dst, CUdeviceptr src, size_t bytes);
  CUresult (*cuMemcpyDtoD_v2)(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
  CUresult (*cuMemcpyPeer)(CUdeviceptr dst, CUcontext dst_context, CUdeviceptr src, CUcontext src_context,
                           size_t bytes);
  CUresult (*cuMemcpyHtoDAsync_v2)(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream);
  CUresult (*cuMemcpyDtoHAsync_v2)(void* dst, CUdeviceptr src, size_t bytes, CUstream stream);
  CUresult (*cuMemcpyDtoDAsync_v2)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
  CUresult (*cuMemcpyPeerAsync)(CUdeviceptr dst, CUcontext dst_context, CUdeviceptr src, CUcontext src_context,
                                size_t bytes, CUstream stream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr dst, unsigned int value, size_t count, CUstream stream);
  CUresult (*cuStreamCreate)(CUstream* stream, unsigned int flags);
  CUresult (*cuStreamDestroy_v2)(CUstream stream);
  CUresult (*cuStreamSynchronize)(CUstream stream);
  CUresult (*cuModuleLoadDataEx)(CUmodule* module, const void* image, unsigned int num_options, CUjit_option* options,
                                 void** option_values);
  CUresult (*cuModuleUnload)(CUmodule module);
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);
  CUresult (*cuModuleGetGlobal_v2)(CUdeviceptr* ptr, size_t* bytes, CUmodule module, const char* name);
  CUresult (*cuFuncSetAttribute)(CUfunction function, CUfunction_attribute attribute, int value);
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
                             unsigned int block_x, unsigned int block_y, unsigned int block_z,
                             unsigned int shared_bytes, CUstream stream, void** params, void** extra);
  // CUDA graphs (optional: null when the driver lacks them; CudaDriver::has_graphs()).
  CUresult (*cuStreamBeginCapture_v2)(CUstream stream, CUstreamCaptureMode mode);
  CUresult (*cuStreamEndCapture)(CUstream stream, CUgraph* graph);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec* exec, CUgraph graph, unsigned long long flags);  // NOLINT
  CUresult (*cuGraphLaunch)(CUgraphExec exec, CUstream stream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec exec);
  CUresult (*cuGraphDestroy)(CUgraph graph);
  CUresult (*cuGraphGetNodes)(CUgraph graph, CUgraphNode* nodes, size_t* count);
};

}  // namespace cuda
}  // namespace sorun

#endif  // SORUN_BACKENDS_CUDA_CUDA_DRIVER_API_H_
