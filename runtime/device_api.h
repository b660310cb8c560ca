// DeviceApi: the one interface every device backend implements (memory, copies, streams, attributes),
// and the process-wide table of backends keyed by DLDeviceType.
//
// The CPU backend is always present. OpenCL and CUDA register themselves when an application calls
// their explicit Register*Backend() function (see backends/opencl, backends/cuda); nothing relies on
// static initializers. Registered backends live until process exit. All methods are thread-safe.
#ifndef SORUN_RUNTIME_DEVICE_API_H_
#define SORUN_RUNTIME_DEVICE_API_H_

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "runtime/c_runtime_api.h"

namespace sorun {

// Alignment of every tensor allocation and workspace (TVM's kAllocAlignment / kTempAllocaAlignment).
inline constexpr size_t kAllocAlignment = 64;

// How a created stream orders with the device's default queue (CUDA's legacy stream 0).
enum class StreamOrder {
  kWithDefaultQueue,  // waits for / is waited for by default-queue work (CUDA: CU_STREAM_DEFAULT)
  kIndependent,       // no implicit ordering with the default queue (CUDA: CU_STREAM_NON_BLOCKING)
};

// Device work recorded once by stream capture (DeviceApi::BeginCapture/EndCapture: a CUDA graph) and
// replayed by Launch with the same arguments and addresses. Owns the recorded graph and the workspace
// memory its kernels were given while recording (freed with it: the owner destroys it only after its
// last replay finished, e.g. after synchronizing the stream). Launch: one thread at a time.
class DeviceGraph {
 public:
  virtual ~DeviceGraph() = default;
  // Queues one replay on `stream` (a stream of the device the graph was recorded on).
  virtual Status Launch(TVMStreamHandle stream) = 0;
  // Operations recorded (kernel launches, copies, memsets).
  virtual size_t num_operations() const = 0;
};

class DeviceApi {
 public:
  virtual ~DeviceApi() = default;

  virtual DLDeviceType device_type() const = 0;
  // Number of devices of this type on this machine; 0 (not an error) when there are none.
  virtual int DeviceCount() = 0;
  // Human-readable description of device `id` ("PoCL pthread-skylake ..."), or why it is absent.
  virtual StatusOr<std::string> Describe(int device_id) = 0;
  // Makes `device_id` current for the calling thread (TVM's __tvm_set_device).
  virtual Status SetDevice(int device_id) = 0;

  // Allocates `nbytes` (0 allowed) on `device`. For the CPU the result is a host pointer; for OpenCL a
  // cl_mem; for CUDA a device pointer. The DLTensor data of a device tensor is this value.
  virtual StatusOr<void*> Alloc(DLDevice device, size_t nbytes, size_t alignment) = 0;
  virtual void Free(DLDevice device, void* ptr) = 0;

  // Copies `from` to `to`: both compact, equal byte sizes, one of them on this backend's device type
  // and the other on the CPU or the same device type. byte_offset of both is honoured.
  virtual Status Copy(const DLTensor& from, const DLTensor& to, TVMStreamHandle stream) = 0;
  // Waits until all work queued on `stream` (nullptr = default) of `device` has finished.
  virtual Status Sync(DLDevice device, TVMStreamHandle stream) = 0;

  // Temporary memory for kernels (TVMBackendAllocWorkspace). Default: Alloc/Free.
  virtual StatusOr<void*> AllocWorkspace(DLDevice device, size_t nbytes);
  virtual Status FreeWorkspace(DLDevice device, void* ptr);

  // Streams (TVM's CreateStream / FreeStream / SetStream / GetCurrentStream). A backend without
  // streams (the CPU, OpenCL: one queue per device) has only the null stream; these defaults say so.
  // A new queue of `device` whose work runs independently of the device's other created queues (CUDA:
  // a stream; `order` says how it orders with stream 0); the caller owns it and releases it with
  // FreeStream. Null: none.
  virtual StatusOr<TVMStreamHandle> CreateStream(DLDevice device, StreamOrder order);
  virtual Status FreeStream(DLDevice device, TVMStreamHandle stream);
  // The calling thread's current stream of `device`: where kernels launch and stream-less copies run
  // (null = the device's default queue).
  virtual TVMStreamHandle CurrentStream(DLDevice device);
  // Sets it (thread-local). Default: only null is accepted.
  virtual Status SetCurrentStream(DLDevice device, TVMStreamHandle stream);

  // Stream capture: from BeginCapture to EndCapture, the work the calling thread queues on `stream`
  // is recorded instead of run, and EndCapture returns it as a DeviceGraph. While capturing, an
  // operation that cannot be recorded (a synchronization, a synchronous copy, a device allocation)
  // fails and spoils the capture; EndCapture then fails with the reason, and nothing was run.
  // EndCapture must follow every successful BeginCapture on the same thread. Default: Unimplemented.
  virtual Status BeginCapture(DLDevice device, TVMStreamHandle stream);
  virtual StatusOr<std::unique_ptr<DeviceGraph>> EndCapture(DLDevice device, TVMStreamHandle stream);
};

// Registers `api` for its device type, replacing nothing: a second registration for the same type is
// AlreadyExists. Thread-safe.
Status RegisterDeviceApi(std::unique_ptr<DeviceApi> api);
// The backend for `device_type`, or Unavailable naming the type and how to enable it.
StatusOr<DeviceApi*> GetDeviceApi(int device_type);
// Unavailable unless `device` names a registered backend with device_id < DeviceCount().
Status CheckDeviceExists(DLDevice device);

}  // namespace sorun

#endif  // SORUN_RUNTIME_DEVICE_API_H_
