#include "backends/cuda/cuda_graph.h"

#include <string>
#include <utility>

#include "backends/cuda/cuda_devices.h"

namespace sorun {
namespace cuda {
namespace {

thread_local std::unique_ptr<ThreadCapture> tls_capture;

std::string DeviceName(int device_id) { return "cuda:" + std::to_string(device_id); }

// An instantiated graph and the workspace it was recorded with.
class CudaGraph final : public DeviceGraph {
 public:
  CudaGraph(int device_id, CUgraph graph, CUgraphExec exec, size_t operations, std::vector<WorkspaceBlock> pinned)
      : device_id_(device_id), graph_(graph), exec_(exec), operations_(operations), pinned_(std::move(pinned)) {}
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  ~CudaGraph() override {
    auto driver = ActivateDevice(device_id_);
    if (!driver.ok()) return;  // the driver is gone (exit): the context took everything with it
    const CudaDriverApi& api = (*driver)->api();
    // The owner waited for the last replay (DeviceGraph's contract), so the workspace is free to go.
    api.cuGraphExecDestroy(exec_);
    api.cuGraphDestroy(graph_);
    for (const WorkspaceBlock& b : pinned_) api.cuMemFree_v2(b.ptr);
  }

  Status Launch(TVMStreamHandle stream) override {
    SORUN_ASSIGN_OR_RETURN(const CudaDriver* driver, ActivateDevice(device_id_));
    return driver->Check(driver->api().cuGraphLaunch(exec_, static_cast<CUstream>(stream)),
                         "launching a CUDA graph on " + DeviceName(device_id_));
  }

  size_t num_operations() const override { return operations_; }

 private:
  const int device_id_;
  const CUgraph graph_;
  const CUgraphExec exec_;
  const size_t operations_;
  const std::vector<WorkspaceBlock> pinned_;
};

}  // namespace

ThreadCapture* CaptureInProgress(int device_id, CUstream stream) {
  ThreadCapture* c = tls_capture.get();
  return c != nullptr && c->device == device_id && c->stream == stream ? c : nullptr;
}

Status BeginCapture(int device_id, CUstream stream) {
  const std::string what = "CUDA-graph capture on " + DeviceName(device_id);
  if (tls_capture) return FailedPrecondition(what + ": this thread is already capturing");
  if (stream == nullptr) return FailedPrecondition(what + ": the legacy default stream cannot be captured");
  SORUN_ASSIGN_OR_RETURN(const CudaDriver* driver, ActivateDevice(device_id));
  if (!driver->has_graphs()) {
    return FailedPrecondition(what + ": the CUDA driver (version " + std::to_string(driver->version()) +
                              ") has no CUDA graphs (cuStreamBeginCapture_v2 etc., CUDA 11.4 and later)");
  }
  SORUN_RETURN_IF_ERROR(
      driver->Check(driver->api().cuStreamBeginCapture_v2(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), what));
  tls_capture = std::make_unique<ThreadCapture>();
  tls_capture->device = device_id;
  tls_capture->stream = stream;
  return Status::Ok();
}

StatusOr<std::unique_ptr<DeviceGraph>> EndCapture(int device_id, CUstream stream,
                                                  std::vector<WorkspaceBlock>* unpinned) {
  const std::string what = "CUDA-graph capture on " + DeviceName(device_id);
  std::unique_ptr<ThreadCapture> capture = std::move(tls_capture);
  if (!capture || capture->device != device_id || capture->stream != stream) {
    tls_capture = std::move(capture);
    return FailedPrecondition(what + ": no capture of this stream is in progress on this thread");
  }
  auto give_back = [&](Status s) {
    for (WorkspaceBlock& b : capture->pinned) unpinned->push_back(b);
    return s;
  };
  auto driver = ActivateDevice(device_id);
  if (!driver.ok()) return give_back(std::move(driver).status().Annotate(what));
  const CudaDriverApi& api = (*driver)->api();
  CUgraph graph = nullptr;
  const CUresult ended = api.cuStreamEndCapture(stream, &graph);
  if (ended != CUDA_SUCCESS || graph == nullptr) {
    if (graph != nullptr) api.cuGraphDestroy(graph);
    return give_back((*driver)->Check(ended == CUDA_SUCCESS ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : ended,
                                      what + ": the capture was spoiled"));
  }
  CUgraphExec exec = nullptr;
  const CUresult made = api.cuGraphInstantiateWithFlags(&exec, graph, 0);
  if (made != CUDA_SUCCESS) {
    api.cuGraphDestroy(graph);
    return give_back((*driver)->Check(made, what + ": cuGraphInstantiate"));
  }
  size_t operations = 0;
  if (api.cuGraphGetNodes != nullptr) api.cuGraphGetNodes(graph, nullptr, &operations);
  return std::unique_ptr<DeviceGraph>(new CudaGraph(device_id, graph, exec, operations, std::move(capture->pinned)));
}

}  // namespace cuda
}  // namespace sorun
