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
  if (nbytes == 0) return Status::Ok();
  const std::string what = "copy " + DescribeDLTensor(from) + " -> " + DescribeDLTensor(to);

  if (!from_cl) {  // host -> device
    if (from.data == nullptr) return InvalidArgument(what + ": null source");
    cl_mem dst = static_cast<cl_mem>(to.data);
    SORUN_RETURN_IF_ERROR(CheckRange(dst, to.byte_offset, nbytes, to, "to"));
    SORUN_ASSIGN_OR_RETURN(OpenclQueue q, devices_->Queue(to.device.device_id));
    const char* src = static_cast<const char*>(from.data) + from.byte_offset;
    return opencl::ClStatus(
        clEnqueueWriteBuffer(q.queue, dst, CL_TRUE, to.byte_offset, nbytes, src, 0, nullptr, nullptr),
        "clEnqueueWriteBuffer", what);
  }
  cl_mem src = static_cast<cl_mem>(from.data);
  SORUN_RETURN_IF_ERROR(CheckRange(src, from.byte_offset, nbytes, from, "from"));
  SORUN_ASSIGN_OR_RETURN(OpenclQueue src_q, devices_->Queue(from.device.device_id));
  if (!to_cl) {  // device -> host
    if (to.data == nullptr) return InvalidArgument(what + ": null destination");
    char* dst = static_cast<char*>(to.data) + to.byte_offset;
    return opencl::ClStatus(
        clEnqueueReadBuffer(src_q.queue, src, CL_TRUE, from.byte_offset, nbytes, dst, 0, nullptr, nullptr),
        "clEnqueueReadBuffer", what);
  }

  // device -> device
  cl_mem dst = static_cast<cl_mem>(to.data);
  SORUN_RETURN_IF_ERROR(CheckRange(dst, to.byte_offset, nbytes, to, "to"));
  const bool overlapping =
      src == dst && from.byte_offset < to.byte_offset + nbytes && to.byte_offset < from.byte_offset + nbytes;
  if (from.device.device_id == to.device.device_id && !overlapping) {
    // Same device, hence the same context: copy on the device and wait for it.
    cl_event done = nullptr;
    SORUN_RETURN_IF_ERROR(opencl::ClStatus(
        clEnqueueCopyBuffer(src_q.queue, src, dst, from.byte_offset, to.byte_offset, nbytes, 0, nullptr, &done),
        "clEnqueueCopyBuffer", what));
    cl_int err = clWaitForEvents(1, &done);
    clReleaseEvent(done);
    return opencl::ClStatus(err, "clWaitForEvents", what);
  }
  // Different devices (separate contexts) or overlapping ranges of one buffer: stage through the host.
  SORUN_ASSIGN_OR_RETURN(OpenclQueue dst_q, devices_->Queue(to.device.device_id));
  std::unique_ptr<char[]> staging = NewStaging(nbytes);
  if (!staging)
    return ResourceExhausted(what + ": cannot allocate " + std::to_string(nbytes) + " bytes of host staging");
  SORUN_RETURN_IF_ERROR(opencl::ClStatus(
      clEnqueueReadBuffer(src_q.queue, src, CL_TRUE, from.byte_offset, nbytes, staging.get(), 0, nullptr, nullptr),
      "clEnqueueReadBuffer", what));
  return opencl::ClStatus(
      clEnqueueWriteBuffer(dst_q.queue, dst, CL_TRUE, to.byte_offset, nbytes, staging.get(), 0, nullptr, nullptr),
      "clEnqueueWriteBuffer", what);
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
