#include "backends/opencl/opencl_device_api.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>

#include "backends/opencl/opencl_status.h"
#include "runtime/data_type.h"
#include "runtime/tensor.h"

namespace sorun {
namespace {

// Workspace buffers are rounded up to this many bytes so that similar requests share buffers.
constexpr size_t kWorkspacePage = 4096;

std::string Where(DLDevice device) { return DeviceToString(device); }

// InvalidArgument unless [offset, offset + nbytes) lies inside `mem`.
Status CheckRange(cl_mem mem, uint64_t offset, uint64_t nbytes, const DLTensor& t, const char* side) {
  if (mem == nullptr) return InvalidArgument(std::string("copy ") + side + " " + DescribeDLTensor(t) + ": null cl_mem");
  size_t size = 0;
  SORUN_RETURN_IF_ERROR(opencl::ClStatus(clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof(size), &size, nullptr),
                                         "clGetMemObjectInfo(CL_MEM_SIZE)",
                                         std::string("copy ") + side + " " + DescribeDLTensor(t)));
  if (offset > size || nbytes > size - offset) {
    return InvalidArgument(std::string("copy ") + side + " " + DescribeDLTensor(t) + ": bytes [" +
                           std::to_string(offset) + ", " + std::to_string(offset + nbytes) +
                           ") are outside its cl_mem of " + std::to_string(size) + " bytes");
  }
  return Status::Ok();
}

// Host staging memory that reports exhaustion instead of throwing.
std::unique_ptr<char[]> NewStaging(uint64_t nbytes) {
  return std::unique_ptr<char[]>(new (std::nothrow) char[static_cast<size_t>(nbytes)]);
}

}  // namespace

OpenclDeviceApi::~OpenclDeviceApi() {
  for (auto& kv : textures_) clReleaseMemObject(kv.first);
  for (auto& kv : pools_) {
    for (auto& block : kv.second->free) clReleaseMemObject(block.second);
    for (auto& block : kv.second->in_use) clReleaseMemObject(block.first);
  }
}

StatusOr<OpenclQueue> OpenclDeviceApi::QueueFor(DLDevice device, const char* what) {
  if (device.device_type != kDLOpenCL) {
    return InvalidArgument(std::string(what) + ": device " + DeviceToString(device) + " is not an OpenCL device");
  }
  return devices_->Queue(device.device_id);
}

StatusOr<void*> OpenclDeviceApi::Alloc(DLDevice device, size_t nbytes, size_t alignment) {
  SORUN_ASSIGN_OR_RETURN(OpenclQueue q, QueueFor(device, "Alloc"));
  SORUN_ASSIGN_OR_RETURN(const OpenclDeviceInfo* info, devices_->Info(device.device_id));
  if (info->max_alloc_bytes != 0 && nbytes > info->max_alloc_bytes) {
    return ResourceExhausted("cannot allocate " + std::to_string(nbytes) + " bytes on " + Where(device) +
                             ": the device's largest buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE) is " +
                             std::to_string(info->max_alloc_bytes) + " bytes");
  }
  cl_int err = CL_SUCCESS;
  // A zero-sized cl_mem is invalid in OpenCL; keep one byte so every tensor has a buffer.
  cl_mem mem = clCreateBuffer(q.context, CL_MEM_READ_WRITE, std::max<size_t>(nbytes, 1), nullptr, &err);
  if (err != CL_SUCCESS || mem == nullptr) {
    return opencl::ClStatus(err != CL_SUCCESS ? err : CL_MEM_OBJECT_ALLOCATION_FAILURE, "clCreateBuffer",
                            "allocating " + std::to_string(nbytes) + " bytes on " + Where(device));
  }
  return static_cast<void*>(mem);
}

void OpenclDeviceApi::Free(DLDevice device, void* ptr) {
  if (ptr != nullptr) clReleaseMemObject(static_cast<cl_mem>(ptr));
}

Status OpenclDeviceApi::Copy(const DLTensor& from, const DLTensor& to, TVMStreamHandle stream) {
  SORUN_ASSIGN_OR_RETURN(uint64_t nbytes, ShapeByteSize(from.shape, from.ndim, from.dtype));
  SORUN_ASSIGN_OR_RETURN(uint64_t to_bytes, ShapeByteSize(to.shape, to.ndim, to.dtype));
  if (nbytes != to_bytes) {
    return InvalidArgument("cannot copy " + DescribeDLTensor(from) + " (" + std::to_string(nbytes) + " bytes) into " +
                           DescribeDLTensor(to) + " (" + std::to_string(to_bytes) + " bytes)");
  }
  const bool from_cl = from.device.device_type == kDLOpenCL;
  const bool to_cl = to.device.device_type == kDLOpenCL;
  if ((!from_cl && from.device.device_type != kDLCPU) || (!to_cl && to.device.device_type != kDLCPU) ||
      (!from_cl && !to_cl)) {
    return InvalidArgument("the OpenCL backend cannot copy " + DescribeDLTensor(from) + " -> " + DescribeDLTensor(to) +
                           " (it copies between OpenCL devices and the CPU)");
  }
  // Each OpenCL side's device must exist before its handle is read: the ICD loader calls through the
  // dispatch table a cl_mem's first word points to, so a host pointer claiming an absent device (no
  // platform, or a device id past the last) would be called as code.
  if (from_cl) SORUN_RETURN_IF_ERROR(devices_->Info(from.device.device_id).status());
  if (to_cl) SORUN_RETURN_IF_ERROR(devices_->Info(to.device.device_id).status());
  if (nbytes == 0) return Status::Ok();
  const std::string what = "copy " + DescribeDLTensor(from) + " -> " + DescribeDLTensor(to);

  if (!from_cl) {  // host -> device
    if (from.data == nullptr) return InvalidArgument(what + ": null source");
    SORUN_ASSIGN_OR_RETURN(CopySide dst, SideOf(to, nbytes, "to"));
    SORUN_ASSIGN_OR_RETURN(OpenclQueue q, devices_->Queue(to.device.device_id));
    return WriteFromHost(q.queue, dst, nbytes, static_cast<const char*>(from.data) + from.byte_offset, what);
  }
  SORUN_ASSIGN_OR_RETURN(CopySide src, SideOf(from, nbytes, "from"));
  SORUN_ASSIGN_OR_RETURN(OpenclQueue src_q, devices_->Queue(from.device.device_id));
  if (!to_cl) {  // device -> host
    if (to.data == nullptr) return InvalidArgument(what + ": null destination");
    return ReadToHost(src_q.queue, src, nbytes, static_cast<char*>(to.data) + to.byte_offset, what);
  }

  // device -> device
  SORUN_ASSIGN_OR_RETURN(CopySide dst, SideOf(to, nbytes, "to"));
  if (src.image && src.mem == dst.mem) return Status::Ok();  // both cover the same top-left region
  const bool overlapping = src.mem == dst.mem && src.offset < dst.offset + nbytes && dst.offset < src.offset + nbytes;
  if (from.device.device_id == to.device.device_id && !overlapping) {
    // Same device, hence the same context: copy on the device and wait for it.
    return CopyOnDevice(src_q.queue, src, dst, nbytes, what);
  }
  // Different devices (separate contexts) or overlapping ranges of one buffer: stage through the host.
  SORUN_ASSIGN_OR_RETURN(OpenclQueue dst_q, devices_->Queue(to.device.device_id));
  std::unique_ptr<char[]> staging = NewStaging(nbytes);
  if (!staging)
    return ResourceExhausted(what + ": cannot allocate " + std::to_string(nbytes) + " bytes of host staging");
  SORUN_RETURN_IF_ERROR(ReadToHost(src_q.queue, src, nbytes, staging.get(), what));
  return WriteFromHost(dst_q.queue, dst, nbytes, staging.get(), what);
}

StatusOr<OpenclDeviceApi::CopySide> OpenclDeviceApi::SideOf(const DLTensor& t, uint64_t nbytes, const char* side) {
  CopySide s;
  s.mem = static_cast<cl_mem>(t.data);
  {
    std::lock_guard<std::mutex> lock(textures_mutex_);
    auto it = textures_.find(s.mem);
    if (it != textures_.end()) {
      s.image = true;
      SORUN_RETURN_IF_ERROR(ImageRegion(it->second, t, nbytes, side, s.region));
      return s;
    }
  }
  s.offset = t.byte_offset;
  SORUN_RETURN_IF_ERROR(CheckRange(s.mem, t.byte_offset, nbytes, t, side));
  return s;
}

Status OpenclDeviceApi::ReadToHost(cl_command_queue queue, const CopySide& from, uint64_t nbytes, char* dst,
                                   const std::string& what) {
  if (from.image) {
    const size_t origin[3] = {0, 0, 0};
    return opencl::ClStatus(
        clEnqueueReadImage(queue, from.mem, CL_TRUE, origin, from.region, 0, 0, dst, 0, nullptr, nullptr),
        "clEnqueueReadImage", what);
  }
  return opencl::ClStatus(clEnqueueReadBuffer(queue, from.mem, CL_TRUE, from.offset, nbytes, dst, 0, nullptr, nullptr),
                          "clEnqueueReadBuffer", what);
}

Status OpenclDeviceApi::WriteFromHost(cl_command_queue queue, const CopySide& to, uint64_t nbytes, const char* src,
                                      const std::string& what) {
  if (to.image) {
    const size_t origin[3] = {0, 0, 0};
    return opencl::ClStatus(
        clEnqueueWriteImage(queue, to.mem, CL_TRUE, origin, to.region, 0, 0, src, 0, nullptr, nullptr),
        "clEnqueueWriteImage", what);
  }
  return opencl::ClStatus(clEnqueueWriteBuffer(queue, to.mem, CL_TRUE, to.offset, nbytes, src, 0, nullptr, nullptr),
                          "clEnqueueWriteBuffer", what);
}

Status OpenclDeviceApi::CopyOnDevice(cl_command_queue queue, const CopySide& from, const CopySide& to, uint64_t nbytes,
                                     const std::string& what) {
  const size_t origin[3] = {0, 0, 0};
  cl_event done = nullptr;
  const char* call = nullptr;
  cl_int err = CL_SUCCESS;
  if (!from.image && !to.image) {
    call = "clEnqueueCopyBuffer";
    err = clEnqueueCopyBuffer(queue, from.mem, to.mem, from.offset, to.offset, nbytes, 0, nullptr, &done);
  } else if (!from.image) {
    call = "clEnqueueCopyBufferToImage";
    err = clEnqueueCopyBufferToImage(queue, from.mem, to.mem, from.offset, origin, to.region, 0, nullptr, &done);
  } else if (!to.image) {
    call = "clEnqueueCopyImageToBuffer";
    err = clEnqueueCopyImageToBuffer(queue, from.mem, to.mem, origin, from.region, to.offset, 0, nullptr, &done);
  } else {
    call = "clEnqueueCopyImage";
    err = clEnqueueCopyImage(queue, from.mem, to.mem, origin, origin, to.region, 0, nullptr, &done);
  }
  SORUN_RETURN_IF_ERROR(opencl::ClStatus(err, call, what));
  err = clWaitForEvents(1, &done);
  clReleaseEvent(done);
  return opencl::ClStatus(err, "clWaitForEvents", what);
}

Status OpenclDeviceApi::Sync(DLDevice device, TVMStreamHandle stream) {
  SORUN_ASSIGN_OR_RETURN(OpenclQueue q, QueueFor(device, "Sync"));
  return opencl::ClStatus(clFinish(q.queue), "clFinish", "Sync " + Where(device));
}

StatusOr<OpenclDeviceApi::WorkspacePool*> OpenclDeviceApi::Pool(DLDevice device) {
  SORUN_RETURN_IF_ERROR(QueueFor(device, "workspace").status());
  std::lock_guard<std::mutex> lock(pools_mutex_);
  std::unique_ptr<WorkspacePool>& pool = pools_[device.device_id];
  if (!pool) pool = std::make_unique<WorkspacePool>();
  return pool.get();
}

StatusOr<void*> OpenclDeviceApi::AllocWorkspace(DLDevice device, size_t nbytes) {
  SORUN_ASSIGN_OR_RETURN(WorkspacePool * pool, Pool(device));
  if (nbytes > SIZE_MAX - kWorkspacePage) {
    return ResourceExhausted("workspace of " + std::to_string(nbytes) + " bytes on " + Where(device) + " is too large");
  }
  const size_t rounded =
      std::max<size_t>(kWorkspacePage, (nbytes + kWorkspacePage - 1) / kWorkspacePage * kWorkspacePage);
  {
    std::lock_guard<std::mutex> lock(pool->mutex);
    auto it = std::lower_bound(pool->free.begin(), pool->free.end(), rounded,
                               [](const std::pair<size_t, cl_mem>& block, size_t n) { return block.first < n; });
    if (it != pool->free.end()) {  // best fit: the smallest cached buffer that is large enough
      cl_mem mem = it->second;
      pool->in_use.emplace(mem, it->first);
      pool->free.erase(it);
      return static_cast<void*>(mem);
    }
  }
  SORUN_ASSIGN_OR_RETURN(void* ptr, Alloc(device, rounded, kAllocAlignment));
  std::lock_guard<std::mutex> lock(pool->mutex);
  pool->in_use.emplace(static_cast<cl_mem>(ptr), rounded);
  pool->reserved_bytes += rounded;
  return ptr;
}

Status OpenclDeviceApi::FreeWorkspace(DLDevice device, void* ptr) {
  SORUN_ASSIGN_OR_RETURN(WorkspacePool * pool, Pool(device));
  std::lock_guard<std::mutex> lock(pool->mutex);
  auto it = pool->in_use.find(static_cast<cl_mem>(ptr));
  if (it == pool->in_use.end()) {
    return InvalidArgument("TVMBackendFreeWorkspace: pointer was not allocated as workspace on " + Where(device) +
                           " (or was already freed)");
  }
  std::pair<size_t, cl_mem> block(it->second, it->first);
  pool->in_use.erase(it);
  pool->free.insert(std::upper_bound(pool->free.begin(), pool->free.end(), block,
                                     [](const auto& a, const auto& b) { return a.first < b.first; }),
                    block);
  return Status::Ok();
}

size_t OpenclDeviceApi::workspace_reserved_bytes(int device_id) {
  WorkspacePool* pool = nullptr;
  {
    std::lock_guard<std::mutex> lock(pools_mutex_);
    auto it = pools_.find(device_id);
    if (it == pools_.end()) return 0;
    pool = it->second.get();
  }
  std::lock_guard<std::mutex> lock(pool->mutex);
  return pool->reserved_bytes;
}

}  // namespace sorun
