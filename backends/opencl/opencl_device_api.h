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
// Texture memory (TVM's "global.texture*" scopes, opencl_texture.cc): AllocTexture creates an RGBA
// image2d of the element type (float32 -> CL_FLOAT, float16 -> CL_HALF_FLOAT, [u]int8/16/32 -> the
// [UN]SIGNED_INT channel types) and returns its cl_mem; FreeTexture hands it back to a per-device
// pool from which later requests of the same scope and dtype that fit are served (best fit by area;
// TVM's texture workspace), released when the OpenclDeviceApi dies. These are what the global
// functions "device_api.opencl.alloc_nd" / "device_api.opencl.free_nd" call (kernels' host code and the
// graph executor). Copy recognises images it allocated: a tensor whose data is such an image covers
// the top-left region TextureShapeFor(scope, shape) of it (byte_offset must be 0, the last dimension 4,
// the dtype the image's); buffer <-> image and image <-> image copies use clEnqueue{Read,Write,Copy}
// Image / CopyBufferToImage / CopyImageToBuffer.
//
// Errors name the OpenCL call and its error (CL_MEM_OBJECT_ALLOCATION_FAILURE ...). Thread-safe.
#ifndef SORUN_BACKENDS_OPENCL_OPENCL_DEVICE_API_H_
#define SORUN_BACKENDS_OPENCL_OPENCL_DEVICE_API_H_

#include <CL/cl.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
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

  // An image2d of at least `width` x `height` RGBA texels of `dtype` for memory scope `scope` (one of
  // TextureShapeFor's scopes) on `device`. Errors: no image support, sizes beyond the device's
  // CL_DEVICE_IMAGE2D_MAX_WIDTH/HEIGHT, an unsupported dtype, an unknown scope.
  StatusOr<void*> AllocTexture(DLDevice device, std::string_view scope, int64_t width, int64_t height,
                               DLDataType dtype);
  // Returns a texture to the pool; InvalidArgument if `ptr` is not a texture in use on `device`.
  Status FreeTexture(DLDevice device, void* ptr);
  // Images the texture pool holds on `device_id` (in use + cached), and how many of them are in use.
  size_t texture_count(int device_id);
  size_t textures_in_use(int device_id);

 private:
  struct WorkspacePool {
    std::mutex mutex;
    std::vector<std::pair<size_t, cl_mem>> free;  // cached buffers, ascending size
    std::unordered_map<cl_mem, size_t> in_use;
    size_t reserved_bytes = 0;
  };
  StatusOr<WorkspacePool*> Pool(DLDevice device);
  StatusOr<OpenclQueue> QueueFor(DLDevice device, const char* what);

  // One image AllocTexture created.
  struct Texture {
    int device_id = 0;
    std::string scope;
    DLDataType dtype{};
    size_t width = 0;
    size_t height = 0;
    bool in_use = false;
  };
  // The part of an image (or buffer) a copy reads or writes.
  struct CopySide {
    cl_mem mem = nullptr;
    bool image = false;
    uint64_t offset = 0;    // buffers: byte offset
    size_t region[3] = {};  // images: width, height, 1
  };
  // The region a tensor over `image` covers (see the file comment), or why it cannot cover it.
  static Status ImageRegion(const Texture& image, const DLTensor& t, uint64_t nbytes, const char* side,
                            size_t region[3]);
  StatusOr<CopySide> SideOf(const DLTensor& t, uint64_t nbytes, const char* side);
  Status ReadToHost(cl_command_queue queue, const CopySide& from, uint64_t nbytes, char* dst, const std::string& what);
  Status WriteFromHost(cl_command_queue queue, const CopySide& to, uint64_t nbytes, const char* src,
                       const std::string& what);
  Status CopyOnDevice(cl_command_queue queue, const CopySide& from, const CopySide& to, uint64_t nbytes,
                      const std::string& what);

  OpenclDevices* devices_;
  std::mutex pools_mutex_;
  std::unordered_map<int, std::unique_ptr<WorkspacePool>> pools_;
  std::mutex textures_mutex_;
  std::unordered_map<cl_mem, Texture> textures_;
};

// Registers TVM's texture allocation functions over `api` in the global FunctionRegistry:
//   "device_api.opencl.alloc_nd"(device_type, device_id, dtype_code, dtype_bits, scope, ndim = 2,
//                                shape = int64_t[2] {width, height}) -> the image (opaque handle)
//   "device_api.opencl.free_nd"(device_type, device_id, scope, image) -> 0
// (TVM 0.16's signature; the 0.20+ form with ndim 3 and a channel size is refused as Unimplemented.)
// `api` must outlive the registry entries (the registered backend does). Idempotent.
Status RegisterOpenclTextureFunctions(OpenclDeviceApi* api);

}  // namespace sorun

#endif  // SORUN_BACKENDS_OPENCL_OPENCL_DEVICE_API_H_
