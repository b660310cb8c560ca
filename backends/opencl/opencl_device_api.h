// OpenclDeviceApi: sorun's DeviceApi for kDLOpenCL devices, over OpenclDevices.
//
// Memory: a device tensor's DLTensor::data is the cl_mem itself (TVM's convention for buffers passed
// to kernels); Alloc creates a read-write buffer (0 bytes still yields a valid 1-byte buffer), Free
// releases it. Copies honour byte_offset on both sides and are complete when Copy returns (host <->
// device transfers are blocking; device -> device copies wait for their event); kernels launched
// earlier on the same device are ordered before them by the in-order queue. Every device has one
// queue, so the `stream` arguments are ignored. Workspace (TVMBackendAllocWorkspace with
// device_type 4) comes from a per-device pool of buffers that are reused, never released before the
// OpenclDeviceApi dies; any thread may free a workspace buffer another thread allocated.
//
// Errors name the OpenCL call and its error (CL_MEM_OBJECT_ALLOCATION_FAILURE ...). Thread-safe.
#ifndef SORUN_BACKENDS_OPENCL_OPENCL_DEVICE_API_H_
#define SORUN_BACKENDS_OPENCL_OPENCL_DEVICE_API_H_

#include <CL/cl.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/opencl/opencl_devices.h"
#include "runtime/device_api.h"

namespace sorun {

class OpenclDeviceApi final : public DeviceApi {
 public:
  // `devices` is borrowed and must outlive this object (OpenclDevices::Global() does).
  explicit OpenclDeviceApi(OpenclDevices* devices) : devices_(devices) {}
  // Releases the workspace buffers held in the pools.
  ~OpenclDeviceApi() override;

  DLDeviceType device_type() const override { return kDLOpenCL; }
  int DeviceCount() override { return devices_->DeviceCount(); }
  StatusOr<std::string> Describe(int device_id) override { return devices_->Describe(device_id); }
  Status SetDevice(int device_id) override { return devices_->SetCurrentDevice(device_id); }

  StatusOr<void*> Alloc(DLDevice device, size_t nbytes, size_t alignment) override;
  void Free(DLDevice device, void* ptr) override;
  Status Copy(const DLTensor& from, const DLTensor& to, TVMStreamHandle stream) override;
  Status Sync(DLDevice device, TVMStreamHandle stream) override;

  StatusOr<void*> AllocWorkspace(DLDevice device, size_t nbytes) override;
  Status FreeWorkspace(DLDevice device, void* ptr) override;

  // Bytes of buffers the workspace pool of `device_id` holds (in use + cached); 0 if never used.
  size_t workspace_reserved_bytes(int device_id);

 private:
  struct WorkspacePool {
    std::mutex mutex;
    std::vector<std::pair<size_t, cl_mem>> free;  // cached buffers, ascending size
    std::unordered_map<cl_mem, size_t> in_use;
    size_t reserved_bytes = 0;
  };
  StatusOr<WorkspacePool*> Pool(DLDevice device);
  StatusOr<OpenclQueue> QueueFor(DLDevice device, const char* what);

  OpenclDevices* devices_;
  std::mutex pools_mutex_;
  std::unordered_map<int, std::unique_ptr<WorkspacePool>> pools_;
};

}  // namespace sorun

#endif  // SORUN_BACKENDS_OPENCL_OPENCL_DEVICE_API_H_
