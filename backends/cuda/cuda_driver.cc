#include "backends/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <chrono>

#include <utility>

#include "runtime/startup_timings.h"

namespace sorun {
namespace cuda {
namespace {

// Resolves `name` into `*slot`; false when the library does not export it.
template <typename Fn>
bool Resolve(void* handle, const char* name, Fn* slot) {
  *slot = reinterpret_cast<Fn>(dlsym(handle, name));
  return *slot != nullptr;
}

// Resolves every entry point of CudaDriverApi; returns the first missing name or nullptr.
const char* ResolveAll(void* handle, CudaDriverApi* api) {
#define SORUN_CUDA_RESOLVE(fn) \
  if (!Resolve(handle, #fn, &api->fn)) return #fn
  SORUN_CUDA_RESOLVE(cuGetErrorName);
  SORUN_CUDA_RESOLVE(cuGetErrorString);
  SORUN_CUDA_RESOLVE(cuInit);
  SORUN_CUDA_RESOLVE(cuDriverGetVersion);
  SORUN_CUDA_RESOLVE(cuDeviceGetCount);
  SORUN_CUDA_RESOLVE(cuDeviceGet);
  SORUN_CUDA_RESOLVE(cuDeviceGetName);
  SORUN_CUDA_RESOLVE(cuDeviceGetAttribute);
  SORUN_CUDA_RESOLVE(cuDeviceTotalMem_v2);
  SORUN_CUDA_RESOLVE(cuDevicePrimaryCtxRetain);
  SORUN_CUDA_RESOLVE(cuCtxSetCurrent);
  SORUN_CUDA_RESOLVE(cuCtxPushCurrent_v2);
  SORUN_CUDA_RESOLVE(cuCtxPopCurrent_v2);
  SORUN_CUDA_RESOLVE(cuCtxSynchronize);
  SORUN_CUDA_RESOLVE(cuMemAlloc_v2);
  SORUN_CUDA_RESOLVE(cuMemFree_v2);
  SORUN_CUDA_RESOLVE(cuMemcpyHtoD_v2);
  SORUN_CUDA_RESOLVE(cuMemcpyDtoH_v2);
  SORUN_CUDA_RESOLVE(cuMemcpyDtoD_v2);
  SORUN_CUDA_RESOLVE(cuMemcpyPeer);
  SORUN_CUDA_RESOLVE(cuMemcpyHtoDAsync_v2);
  SORUN_CUDA_RESOLVE(cuMemcpyDtoHAsync_v2);
  SORUN_CUDA_RESOLVE(cuMemcpyDtoDAsync_v2);
  SORUN_CUDA_RESOLVE(cuMemcpyPeerAsync);
  SORUN_CUDA_RESOLVE(cuMemsetD32Async);
  SORUN_CUDA_RESOLVE(cuStreamCreate);
  SORUN_CUDA_RESOLVE(cuStreamDestroy_v2);
  SORUN_CUDA_RESOLVE(cuStreamSynchronize);
  SORUN_CUDA_RESOLVE(cuModuleLoadDataEx);
  SORUN_CUDA_RESOLVE(cuModuleUnload);
  SORUN_CUDA_RESOLVE(cuModuleGetFunction);
  SORUN_CUDA_RESOLVE(cuModuleGetGlobal_v2);
  SORUN_CUDA_RESOLVE(cuFuncSetAttribute);
  SORUN_CUDA_RESOLVE(cuLaunchKernel);
#undef SORUN_CUDA_RESOLVE
  return nullptr;
}

// Resolves the optional entry points (CUDA graphs); those the driver lacks stay null.
void ResolveOptional(void* handle, CudaDriverApi* api) {
  Resolve(handle, "cuStreamBeginCapture_v2", &api->cuStreamBeginCapture_v2);
  Resolve(handle, "cuStreamEndCapture", &api->cuStreamEndCapture);
  Resolve(handle, "cuGraphInstantiateWithFlags", &api->cuGraphInstantiateWithFlags);
  Resolve(handle, "cuGraphLaunch", &api->cuGraphLaunch);
  Resolve(handle, "cuGraphExecDestroy", &api->cuGraphExecDestroy);
  Resolve(handle, "cuGraphDestroy", &api->cuGraphDestroy);
  Resolve(handle, "cuGraphGetNodes", &api->cuGraphGetNodes);
}

std::string DlError() {
  const char* err = dlerror();
  return err ? err : "no dlerror text";
}

}  // namespace

StatusCode CudaResultStatusCode(CUresult result) {
  switch (result) {
    case CUDA_SUCCESS: return StatusCode::kOk;
    case CUDA_ERROR_OUT_OF_MEMORY:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: return StatusCode::kResourceExhausted;
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: return StatusCode::kUnavailable;
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX: return StatusCode::kDataLoss;
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_JIT_COMPILATION_DISABLED:
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
    case CUDA_ERROR_STREAM_CAPTURE_IMPLICIT: return StatusCode::kFailedPrecondition;
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED: return StatusCode::kAborted;
    case CUDA_ERROR_INVALID_VALUE: return StatusCode::kInvalidArgument;
    case CUDA_ERROR_NOT_FOUND: return StatusCode::kNotFound;
    default: return StatusCode::kInternal;
  }
}

StatusOr<const CudaDriver*> CudaDriver::Get() {
  // Opened on first use, never closed: device memory and modules may be released during exit.
  static const StatusOr<const CudaDriver*>* driver = [] {
    const auto start = std::chrono::steady_clock::now();
    auto opened = Open(kCudaDriverLibrary);
    AddStartupTime(StartupPhase::kDriverOpen,
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    if (!opened.ok()) return new StatusOr<const CudaDriver*>(std::move(opened).status());
    return new StatusOr<const CudaDriver*>(static_cast<const CudaDriver*>(opened->release()));
  }();
  return *driver;
}

StatusOr<std::unique_ptr<CudaDriver>> CudaDriver::Open(const std::string& library) {
  dlerror();
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return Unavailable("no CUDA driver: " + library + " not found (" + DlError() + ")");
  std::unique_ptr<CudaDriver> driver(new CudaDriver());
  driver->handle_ = handle;
  driver->library_ = library;
  if (const char* missing = ResolveAll(handle, &driver->api_)) {
    return Unavailable("no CUDA driver: " + library + " has no symbol " + missing +
                       " (not an NVIDIA driver library, or one older than CUDA 4.0)");
  }
  ResolveOptional(handle, &driver->api_);
  const CudaDriverApi& api = driver->api_;
  CUresult init = api.cuInit(0);
  if (init == CUDA_ERROR_STUB_LIBRARY) {
    return Unavailable("no CUDA driver: " + library + " is the CUDA Toolkit's stub library, not an NVIDIA driver (" +
                       driver->ErrorText(init) + ")");
  }
  if (init != CUDA_SUCCESS) {
    return Status(
        CudaResultStatusCode(init) == StatusCode::kInternal ? StatusCode::kUnavailable : CudaResultStatusCode(init),
        "CUDA driver unusable: cuInit failed: " + driver->ErrorText(init));
  }
  SORUN_RETURN_IF_ERROR(driver->Check(api.cuDriverGetVersion(&driver->version_), "cuDriverGetVersion"));
  int count = 0;
  SORUN_RETURN_IF_ERROR(driver->Check(api.cuDeviceGetCount(&count), "cuDeviceGetCount"));
  driver->device_count_ = count < 0 ? 0 : count;
  return driver;
}

CudaDriver::~CudaDriver() {
  if (handle_) dlclose(handle_);
}

std::string CudaDriver::ErrorText(CUresult result) const {
  const char* name = nullptr;
  const char* description = nullptr;
  if (api_.cuGetErrorName == nullptr || api_.cuGetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr) {
    return "CUDA error " + std::to_string(result);
  }
  std::string text = name;
  if (api_.cuGetErrorString(result, &description) == CUDA_SUCCESS && description != nullptr) {
    text += std::string(": ") + description;
  }
  return text;
}

Status CudaDriver::Check(CUresult result, std::string_view what) const {
  if (result == CUDA_SUCCESS) return Status::Ok();
  return Status(CudaResultStatusCode(result), std::string(what) + ": " + ErrorText(result));
}

}  // namespace cuda
}  // namespace sorun
