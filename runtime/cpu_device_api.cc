#include "runtime/cpu_device_api.h"

#include <cstdlib>
#include <cstring>
#include <thread>

#include "runtime/data_type.h"
#include "runtime/workspace_pool.h"

namespace sorun {
namespace {

class CpuDeviceApi final : public DeviceApi {
 public:
  DLDeviceType device_type() const override { return kDLCPU; }
  int DeviceCount() override { return 1; }

  StatusOr<std::string> Describe(int device_id) override {
    if (device_id != 0) return Unavailable("cpu:" + std::to_string(device_id) + " does not exist");
    return "host CPU (" + std::to_string(std::thread::hardware_concurrency()) + " hardware threads)";
  }

  Status SetDevice(int device_id) override {
    if (device_id != 0) return Unavailable("cpu:" + std::to_string(device_id) + " does not exist");
    return Status::Ok();
  }

  StatusOr<void*> Alloc(DLDevice device, size_t nbytes, size_t alignment) override {
    if (device.device_id != 0) return Unavailable("cpu:" + std::to_string(device.device_id) + " does not exist");
    if (alignment < kAllocAlignment) alignment = kAllocAlignment;
    void* ptr = nullptr;
    // posix_memalign with size 0 may return NULL; keep one byte so every tensor has an address.
    if (posix_memalign(&ptr, alignment, nbytes == 0 ? 1 : nbytes) != 0 || ptr == nullptr) {
      return ResourceExhausted("cannot allocate " + std::to_string(nbytes) + " bytes of host memory");
    }
    return ptr;
  }

  void Free(DLDevice device, void* ptr) override { std::free(ptr); }

  Status Copy(const DLTensor& from, const DLTensor& to, TVMStreamHandle stream) override {
    // Only reached for cpu -> cpu; sizes were checked by the caller (CopyTensor).
    SORUN_ASSIGN_OR_RETURN(uint64_t nbytes, ShapeByteSize(from.shape, from.ndim, from.dtype));
    const char* src = static_cast<const char*>(from.data) + from.byte_offset;
    char* dst = static_cast<char*>(to.data) + to.byte_offset;
    if (nbytes) std::memmove(dst, src, nbytes);
    return Status::Ok();
  }

  Status Sync(DLDevice device, TVMStreamHandle stream) override { return Status::Ok(); }

  StatusOr<void*> AllocWorkspace(DLDevice device, size_t nbytes) override {
    void* ptr = WorkspacePool::ThreadLocal().Alloc(nbytes);
    if (!ptr) return ResourceExhausted("cannot allocate " + std::to_string(nbytes) + " bytes of workspace");
    return ptr;
  }

  Status FreeWorkspace(DLDevice device, void* ptr) override {
    if (!WorkspacePool::ThreadLocal().Free(ptr)) {
      return InvalidArgument("TVMBackendFreeWorkspace: pointer was not allocated by this thread's workspace pool");
    }
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<DeviceApi> CreateCpuDeviceApi() { return std::make_unique<CpuDeviceApi>(); }

}  // namespace sorun
