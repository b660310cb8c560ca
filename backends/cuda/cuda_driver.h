// CudaDriver: libcuda.so.1 opened with dlopen on first use, its entry points resolved with dlsym, and
// CUresult codes turned into sorun Status values.
//
// Nothing links against libcuda: binaries built with the CUDA backend start and run their CPU work on
// machines without an NVIDIA driver. The first call that needs the driver opens it (once per
// process, cuInit included); when it is absent every such call gets the same Unavailable status,
// "no CUDA driver: libcuda.so.1 not found (<dlerror text>)".
//
// Ownership: the process-wide driver (Get()) is never closed or destroyed (the driver must outlive
// every device allocation, module and stream, including those released at exit). Instances from
// Open() are owned by the caller. All methods are const and thread-safe.
#ifndef SORUN_BACKENDS_CUDA_CUDA_DRIVER_H_
#define SORUN_BACKENDS_CUDA_CUDA_DRIVER_H_

#include <memory>
#include <string>
#include <string_view>

#include "backends/cuda/cuda_driver_api.h"
#include "base/status.h"

namespace sorun {
namespace cuda {

// The soname of NVIDIA's driver library.
inline constexpr char kCudaDriverLibrary[] = "libcuda.so.1";

class CudaDriver {
 public:
  // The process-wide driver, opened (and cuInit'ed) by the first call; later calls return the same
  // pointer or the same error without retrying.
  static StatusOr<const CudaDriver*> Get();

  // Opens `library` (a soname or path), resolves every entry point and runs cuInit(0). Errors are
  // Unavailable: "no CUDA driver: <library> not found (...)", "... has no symbol cuX (...)", "...
  // is the CUDA Toolkit's stub library", or "CUDA driver unusable: cuInit failed: CUDA_ERROR_...".
  // The library is dlclose'd again when the returned object is destroyed.
  static StatusOr<std::unique_ptr<CudaDriver>> Open(const std::string& library);

  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;
  ~CudaDriver();

  // The resolved entry points (all non-null).
  const CudaDriverApi& api() const { return api_; }
  // Number of CUDA devices the driver reports (cuDeviceGetCount after cuInit).
  int device_count() const { return device_count_; }
  // The driver's CUDA version as 1000 * major + 10 * minor (13000 = CUDA 13.0).
  int version() const { return version_; }
  const std::string& library() const { return library_; }
  // Whether the driver has the CUDA-graph entry points (stream capture, instantiate, launch).
  bool has_graphs() const {
    return api_.cuStreamBeginCapture_v2 && api_.cuStreamEndCapture && api_.cuGraphInstantiateWithFlags &&
           api_.cuGraphLaunch && api_.cuGraphExecDestroy && api_.cuGraphDestroy;
  }

  // "CUDA_ERROR_OUT_OF_MEMORY: out of memory" (the driver's own name and description).
  std::string ErrorText(CUresult result) const;
  // OK for CUDA_SUCCESS; otherwise "<what>: <ErrorText>" with a code matching the failure class:
  // ResourceExhausted (out of memory/resources), Unavailable (device or driver gone), DataLoss
  // (invalid image/PTX), FailedPrecondition (no code for this GPU, PTX too new, JIT unavailable),
  // Aborted (a kernel faulted), InvalidArgument (invalid value), NotFound, else Internal.
  Status Check(CUresult result, std::string_view what) const;

 private:
  CudaDriver() = default;

  void* handle_ = nullptr;
  std::string library_;
  CudaDriverApi api_{};
  int device_count_ = 0;
  int version_ = 0;
};

// The StatusCode sorun uses for `result` (see CudaDriver::Check). Pure function.
StatusCode CudaResultStatusCode(CUresult result);

}  // namespace cuda
}  // namespace sorun

#endif  // SORUN_BACKENDS_CUDA_CUDA_DRIVER_H_
