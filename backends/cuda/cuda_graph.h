// CUDA graphs by stream capture (the kDLCUDA DeviceApi's BeginCapture / EndCapture): the work a
// thread queues on one stream between BeginCapture and EndCapture is recorded by the driver
// (cuStreamBeginCapture, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL: only the capturing thread's unsafe
// calls are refused, so other threads' executors go on undisturbed), instantiated, and replayed by
// CudaGraph::Launch (cuGraphLaunch).
//
// Workspace: a kernel's TVMBackendAllocWorkspace during capture is served from the blocks pinned to
// the capture so far that recorded kernels have freed again (reuse in stream order, as an uncaptured
// run would), else from the thread's cached blocks (backends/cuda/cuda_device_api.cc), which are then
// pinned: the graph owns them and frees them when destroyed, so a replay never writes memory that was
// freed or given to someone else. A capture that needs a block the cache does not have fails (an allocation
// cannot be recorded); executors run once uncaptured first, which fills the cache.
//
// Threads: ThreadCapture is the calling thread's; a CudaGraph is used by one thread at a time.
#ifndef SORUN_BACKENDS_CUDA_CUDA_GRAPH_H_
#define SORUN_BACKENDS_CUDA_CUDA_GRAPH_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "backends/cuda/cuda_driver_api.h"
#include "base/status.h"
#include "runtime/device_api.h"

namespace sorun {
namespace cuda {

// A device workspace block (cuMemAlloc'd) of `size` bytes.
struct WorkspaceBlock {
  int device = 0;
  CUdeviceptr ptr = 0;
  size_t size = 0;
  bool in_use = false;  // during a capture: handed to a kernel and not yet freed by it
};

// The capture the calling thread has in progress.
struct ThreadCapture {
  int device = 0;
  CUstream stream = nullptr;
  std::vector<WorkspaceBlock> pinned;  // workspace handed to captured kernels
};

// The calling thread's capture in progress on (device_id, stream), or null.
ThreadCapture* CaptureInProgress(int device_id, CUstream stream);

// Starts recording the calling thread's work on `stream` of `device_id`. FailedPrecondition when the
// thread already captures, when `stream` is null (the legacy stream cannot be captured), or when the
// driver has no CUDA graphs (older than CUDA 11.4).
Status BeginCapture(int device_id, CUstream stream);

// Ends the capture begun by BeginCapture on this thread. On success the graph owns the pinned
// workspace; on failure (the capture was spoiled: the driver's reason) the pinned blocks are moved
// to `*unpinned` for the caller's cache.
StatusOr<std::unique_ptr<DeviceGraph>> EndCapture(int device_id, CUstream stream,
                                                  std::vector<WorkspaceBlock>* unpinned);

}  // namespace cuda
}  // namespace sorun

#endif  // SORUN_BACKENDS_CUDA_CUDA_GRAPH_H_
