#include "backends/cuda/cuda_device_api.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "backends/cuda/cuda_devices.h"
#include "backends/cuda/cuda_graph.h"
#include "runtime/data_type.h"
#include "runtime/tensor.h"

namespace sorun {
namespace {

using cuda::CudaDriver;
using cuda::CUdeviceptr;
using cuda::CUstream;

// cuMemAlloc returns memory aligned to at least this many bytes.
constexpr size_t kCudaAllocAlignment = 256;
// Workspace blocks are rounded up to this size so blocks of similar requests are interchangeable.
constexpr size_t kWorkspacePageBytes = 4096;

std::string DeviceName(int device_id) { return "cuda:" + std::to_string(device_id); }

CUdeviceptr DevicePointer(const DLTensor& t) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(t.data)) + t.byte_offset;
}

// The calling thread's cache of device workspace blocks. A freed block is reused only on the same
// device and for the same current stream it was freed on, so a block still read by queued work is
// never handed to a kernel that could run concurrently with it. Blocks are returned to the driver
// when the thread exits (or when an allocation fails for lack of memory).
class CudaWorkspaceCache {
 public:
  static CudaWorkspaceCache& ThreadLocal() {
    thread_local CudaWorkspaceCache cache;
    return cache;
  }
  CudaWorkspaceCache() = default;
  CudaWorkspaceCache(const CudaWorkspaceCache&) = delete;
  CudaWorkspaceCache& operator=(const CudaWorkspaceCache&) = delete;
  ~CudaWorkspaceCache() {
    for (const Block& b : free_) Release(b);
    for (const Block& b : in_use_) Release(b);
  }

  StatusOr<void*> Alloc(int device_id, size_t nbytes) {
    const CUstream stream = cuda::CurrentStream(device_id);
    cuda::ThreadCapture* capture = cuda::CaptureInProgress(device_id, stream);
    if (capture != nullptr) {
      // A block the recording already owns and a recorded kernel freed: reused in stream order.
      cuda::WorkspaceBlock* fit = nullptr;
      for (cuda::WorkspaceBlock& b : capture->pinned) {
        if (!b.in_use && b.size >= nbytes && (fit == nullptr || b.size < fit->size)) fit = &b;
      }
      if (fit != nullptr) {
        fit->in_use = true;
        return reinterpret_cast<void*>(static_cast<uintptr_t>(fit->ptr));
      }
    }
    size_t best = free_.size();
    for (size_t i = 0; i < free_.size(); ++i) {
      const Block& b = free_[i];
      if (b.device == device_id && b.stream == stream && b.size >= nbytes &&
          (best == free_.size() || b.size < free_[best].size)) {
        best = i;
      }
    }
    if (best != free_.size()) {
      Block block = free_[best];
      free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(best));
      // A captured kernel's block belongs to the graph from now on (cuda_graph.h).
      if (capture != nullptr) {
        capture->pinned.push_back(cuda::WorkspaceBlock{block.device, block.ptr, block.size, true});
      } else {
        in_use_.push_back(block);
      }
      return reinterpret_cast<void*>(static_cast<uintptr_t>(block.ptr));
    }
    if (capture != nullptr) {
      return FailedPrecondition("a kernel asked for " + std::to_string(nbytes) + " bytes of workspace on " +
                                DeviceName(device_id) +
                                " during CUDA-graph capture and none was cached (an allocation cannot be recorded)");
    }
    if (nbytes > SIZE_MAX - kWorkspacePageBytes) {
      return ResourceExhausted("cannot allocate " + std::to_string(nbytes) + " bytes of workspace on " +
                               DeviceName(device_id));
    }
    const size_t pages = nbytes == 0 ? 1 : (nbytes + kWorkspacePageBytes - 1) / kWorkspacePageBytes;
    const size_t size = pages * kWorkspacePageBytes;
    SORUN_ASSIGN_OR_RETURN(const CudaDriver* driver, cuda::ActivateDevice(device_id));
    CUdeviceptr ptr = 0;
    cuda::CUresult result = driver->api().cuMemAlloc_v2(&ptr, size);
    if (result == cuda::CUDA_ERROR_OUT_OF_MEMORY && ReleaseFree(device_id)) {
      result = driver->api().cuMemAlloc_v2(&ptr, size);
    }
    SORUN_RETURN_IF_ERROR(driver->Check(
        result, "cannot allocate " + std::to_string(nbytes) + " bytes of workspace on " + DeviceName(device_id)));
    in_use_.push_back(Block{device_id, stream, ptr, size});
    return reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
  }

  Status Free(int device_id, void* ptr) {
    const CUdeviceptr p = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(ptr));
    if (cuda::ThreadCapture* capture = cuda::CaptureInProgress(device_id, cuda::CurrentStream(device_id))) {
      for (cuda::WorkspaceBlock& b : capture->pinned) {
        if (b.ptr == p && b.device == device_id && b.in_use) {
          b.in_use = false;  // the recording keeps it; later recorded kernels may reuse it
          return Status::Ok();
        }
      }
    }
    for (size_t i = in_use_.size(); i-- > 0;) {  // LIFO in practice: search from the back
      if (in_use_[i].ptr == p && in_use_[i].device == device_id) {
        Block block = in_use_[i];
        in_use_.erase(in_use_.begin() + static_cast<std::ptrdiff_t>(i));
        block.stream = cuda::CurrentStream(device_id);
        free_.push_back(block);
        return Status::Ok();
      }
    }
    return InvalidArgument("TVMBackendFreeWorkspace: pointer was not allocated by this thread's workspace pool on " +
                           DeviceName(device_id));
  }

  // Takes back blocks a spoiled capture had pinned, as freed on `stream`.
  void Unpin(const std::vector<cuda::WorkspaceBlock>& blocks, CUstream stream) {
    for (const cuda::WorkspaceBlock& b : blocks) free_.push_back(Block{b.device, stream, b.ptr, b.size});
  }

 private:
  struct Block {
    int device;
    CUstream stream;
    CUdeviceptr ptr;
    size_t size;
  };

  static void Release(const Block& b) {
    auto driver = cuda::ActivateDevice(b.device);
    if (driver.ok()) (*driver)->api().cuMemFree_v2(b.ptr);  // errors at exit are of no use to anyone
  }

  // Frees the cached blocks of `device_id`; true if there were any.
  bool ReleaseFree(int device_id) {
    bool any = false;
    for (size_t i = free_.size(); i-- > 0;) {
      if (free_[i].device != device_id) continue;
      Release(free_[i]);
      free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
      any = true;
    }
    return any;
  }

  std::vector<Block> free_;
  std::vector<Block> in_use_;
};

class CudaDeviceApi final : public DeviceApi {
 public:
  DLDeviceType device_type() const override { return kDLCUDA; }
  int DeviceCount() override { return cuda::DeviceCount(); }

  StatusOr<std::string> Describe(int device_id) override {
    SORUN_ASSIGN_OR_RETURN(cuda::CudaDeviceInfo info, cuda::DeviceInfo(device_id));
    char memory[32];
    std::snprintf(memory, sizeof(memory), "%.1f GiB", static_cast<double>(info.total_memory) / (1024.0 * 1024 * 1024));
    return info.name + " (" + info.sm() + ", " + std::to_string(info.multiprocessors) + " multiprocessors, " + memory +
           ")";
  }

  Status SetDevice(int device_id) override { return cuda::SetCurrentDevice(device_id); }

  StatusOr<void*> Alloc(DLDevice device, size_t nbytes, size_t alignment) override {
    const std::string what = "cannot allocate " + std::to_string(nbytes) + " bytes on " + DeviceName(device.device_id);
    if (alignment > kCudaAllocAlignment || (alignment & (alignment - 1)) != 0) {
      return InvalidArgument(what + ": alignment " + std::to_string(alignment) +
                             " is not a power of two <= " + std::to_string(kCudaAllocAlignment));
    }
    auto driver = cuda::ActivateDevice(device.device_id);
    if (!driver.ok()) return std::move(driver).status().Annotate(what);
    CUdeviceptr ptr = 0;
    // Zero-byte tensors still get an address of their own.
    SORUN_RETURN_IF_ERROR((*driver)->Check((*driver)->api().cuMemAlloc_v2(&ptr, nbytes == 0 ? 1 : nbytes), what));
    return reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
  }

  void Free(DLDevice device, void* ptr) override {
    if (ptr == nullptr) return;
    auto driver = cuda::ActivateDevice(device.device_id);
    // Failure here means the driver is shutting down (exit); the memory goes with the context.
    if (driver.ok()) (*driver)->api().cuMemFree_v2(static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(ptr)));
  }

  // A copy given a stream is queued on it. A copy given none runs on the calling thread's current
  // stream of the CUDA device that runs it (the source's when both are CUDA tensors, as in TVM) and has
  // finished when Copy returns; with no current stream, the driver's synchronous copies on stream 0.
  Status Copy(const DLTensor& from, const DLTensor& to, TVMStreamHandle stream_handle) override {
    if (stream_handle != nullptr) return CopyOn(from, to, static_cast<CUstream>(stream_handle));
    const DLDevice runner = from.device.device_type == kDLCUDA ? from.device : to.device;
    const CUstream current = runner.device_type == kDLCUDA ? cuda::CurrentStream(runner.device_id) : nullptr;
    SORUN_RETURN_IF_ERROR(CopyOn(from, to, current));
    return current == nullptr ? Status::Ok() : Sync(runner, current);
  }

  Status Sync(DLDevice device, TVMStreamHandle stream) override {
    const std::string what = "synchronizing " + DeviceName(device.device_id);
    auto driver = cuda::ActivateDevice(device.device_id);
    if (!driver.ok()) return std::move(driver).status().Annotate(what);
    const cuda::CudaDriverApi& api = (*driver)->api();
    return (*driver)->Check(stream ? api.cuStreamSynchronize(static_cast<CUstream>(stream)) : api.cuCtxSynchronize(),
                            what);
  }

  StatusOr<TVMStreamHandle> CreateStream(DLDevice device, StreamOrder order) override {
    // kWithDefaultQueue (CU_STREAM_DEFAULT): host code that reads an output with a stream-0 copy
    // (cuMemcpyDtoH, NDArray::CopyTo) still waits for the kernels that wrote it. kIndependent
    // (CU_STREAM_NON_BLOCKING): stream-0 work of other threads cannot join a capture on it. Streams of
    // two executors are independent of each other either way, so they overlap.
    SORUN_ASSIGN_OR_RETURN(CUstream stream, cuda::CreateStream(device.device_id, order == StreamOrder::kIndependent));
    return static_cast<TVMStreamHandle>(stream);
  }

  Status FreeStream(DLDevice device, TVMStreamHandle stream) override {
    if (stream == nullptr) return Status::Ok();
    return cuda::DestroyStream(device.device_id, static_cast<CUstream>(stream));
  }

  TVMStreamHandle CurrentStream(DLDevice device) override { return cuda::CurrentStream(device.device_id); }

  Status SetCurrentStream(DLDevice device, TVMStreamHandle stream) override {
    return cuda::SetCurrentStream(device.device_id, static_cast<CUstream>(stream));
  }

  Status BeginCapture(DLDevice device, TVMStreamHandle stream) override {
    return cuda::BeginCapture(device.device_id, static_cast<CUstream>(stream));
  }

  StatusOr<std::unique_ptr<DeviceGraph>> EndCapture(DLDevice device, TVMStreamHandle stream) override {
    std::vector<cuda::WorkspaceBlock> unpinned;
    auto graph = cuda::EndCapture(device.device_id, static_cast<CUstream>(stream), &unpinned);
    CudaWorkspaceCache::ThreadLocal().Unpin(unpinned, static_cast<CUstream>(stream));
    return graph;
  }

  StatusOr<void*> AllocWorkspace(DLDevice device, size_t nbytes) override {
    return CudaWorkspaceCache::ThreadLocal().Alloc(device.device_id, nbytes);
  }

  Status FreeWorkspace(DLDevice device, void* ptr) override {
    return CudaWorkspaceCache::ThreadLocal().Free(device.device_id, ptr);
  }

 private:
  // Queues the copy on `stream` (null: the driver's synchronous copies).
  static Status CopyOn(const DLTensor& from, const DLTensor& to, CUstream stream) {
    SORUN_ASSIGN_OR_RETURN(uint64_t nbytes, ShapeByteSize(from.shape, from.ndim, from.dtype));
    const std::string what = "copying " + DescribeDLTensor(from) + " to " + DescribeDLTensor(to);
    const bool from_cuda = from.device.device_type == kDLCUDA;
    const bool to_cuda = to.device.device_type == kDLCUDA;
    const bool from_cpu = from.device.device_type == kDLCPU;
    const bool to_cpu = to.device.device_type == kDLCPU;
    const size_t n = static_cast<size_t>(nbytes);
    if (from_cuda && to_cuda) {
      // The source device's context runs the copy (and owns `stream`), as in TVM.
      auto driver = cuda::ActivateDevice(from.device.device_id);
      if (!driver.ok()) return std::move(driver).status().Annotate(what);
      const cuda::CudaDriverApi& api = (*driver)->api();
      if (from.device.device_id == to.device.device_id) {
        return (*driver)->Check(stream ? api.cuMemcpyDtoDAsync_v2(DevicePointer(to), DevicePointer(from), n, stream)
                                       : api.cuMemcpyDtoD_v2(DevicePointer(to), DevicePointer(from), n),
                                what);
      }
      auto from_context = cuda::PrimaryContext(from.device.device_id);
      if (!from_context.ok()) return std::move(from_context).status().Annotate(what);
      auto to_context = cuda::PrimaryContext(to.device.device_id);
      if (!to_context.ok()) return std::move(to_context).status().Annotate(what);
      return (*driver)->Check(
          stream ? api.cuMemcpyPeerAsync(DevicePointer(to), *to_context, DevicePointer(from), *from_context, n, stream)
                 : api.cuMemcpyPeer(DevicePointer(to), *to_context, DevicePointer(from), *from_context, n),
          what);
    }
    if (from_cpu && to_cuda) {
      auto driver = cuda::ActivateDevice(to.device.device_id);
      if (!driver.ok()) return std::move(driver).status().Annotate(what);
      const cuda::CudaDriverApi& api = (*driver)->api();
      const void* src = static_cast<const char*>(from.data) + from.byte_offset;
      return (*driver)->Check(stream ? api.cuMemcpyHtoDAsync_v2(DevicePointer(to), src, n, stream)
                                     : api.cuMemcpyHtoD_v2(DevicePointer(to), src, n),
                              what);
    }
    if (from_cuda && to_cpu) {
      auto driver = cuda::ActivateDevice(from.device.device_id);
      if (!driver.ok()) return std::move(driver).status().Annotate(what);
      const cuda::CudaDriverApi& api = (*driver)->api();
      void* dst = static_cast<char*>(to.data) + to.byte_offset;
      return (*driver)->Check(stream ? api.cuMemcpyDtoHAsync_v2(dst, DevicePointer(from), n, stream)
                                     : api.cuMemcpyDtoH_v2(dst, DevicePointer(from), n),
                              what);
    }
    return InvalidArgument(what + ": the CUDA backend copies only between cpu and cuda devices");
  }
};

}  // namespace

std::unique_ptr<DeviceApi> CreateCudaDeviceApi() { return std::make_unique<CudaDeviceApi>(); }

}  // namespace sorun
