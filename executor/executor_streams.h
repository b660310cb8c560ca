// ExecutorStreams: the streams one executor queues its device work on (kernels, and the copies of
// SetInput / GetOutput / CopyOutputTo), one per non-CPU device of the executor:
//   - by default the executor's own, made by the device's backend (DeviceApi::CreateStream; a CUDA
//     executor gets a stream of its own, so executors of one GPU overlap instead of serializing on
//     the default stream; it is ordered with stream 0, so a stream-0 copy by the host still waits
//     for the kernels that wrote what it reads) and freed with the executor; a backend without streams (OpenCL) gives
//     null;
//   - or one the host hands over (Set: Triton's instance stream, a PyTorch stream), which the host
//     owns and must keep alive while the executor may use it; Set with null goes back to the own one.
// Scope makes them the calling thread's current streams for one call of the executor and restores
// the previous ones after, so the kernels, the backends' copies and the workspace cache all see them.
// Owned by ModelExecutor, which serializes every use with its busy guard: not thread-safe by itself.
#ifndef SORUN_EXECUTOR_EXECUTOR_STREAMS_H_
#define SORUN_EXECUTOR_EXECUTOR_STREAMS_H_

#include <dlpack/dlpack.h>

#include <vector>

#include "base/status.h"
#include "runtime/c_runtime_api.h"
#include "runtime/device_api.h"

namespace sorun {

class ExecutorStreams {
 public:
  ExecutorStreams() = default;
  ExecutorStreams(ExecutorStreams&& other) noexcept;
  ExecutorStreams& operator=(ExecutorStreams&& other) noexcept;
  ExecutorStreams(const ExecutorStreams&) = delete;
  ExecutorStreams& operator=(const ExecutorStreams&) = delete;
  ~ExecutorStreams();  // frees the streams it made

  // Makes one stream per non-CPU device in `devices`, ordered with the device's default queue as
  // `order` says. Nothing is waited for: with kWithDefaultQueue (CUDA: CU_STREAM_DEFAULT) the weights
  // and buffers an executor uploaded there before are in place for its first kernel; kIndependent
  // (CUDA: CU_STREAM_NON_BLOCKING, what CUDA-graph capture needs so that other threads' stream-0 work
  // cannot join the capture) relies on the uploads being synchronous (they are: Tensor::CopyFrom
  // without a current stream waits). Other executors' work does not stall the creation either way.
  static StatusOr<ExecutorStreams> Create(const std::vector<DLDevice>& devices,
                                          StreamOrder order = StreamOrder::kWithDefaultQueue);

  // The stream of `device` in use now (null: the device's default queue). InvalidArgument when
  // `device` is not a non-CPU device of the executor.
  StatusOr<TVMStreamHandle> Get(DLDevice device) const;
  // Uses `stream` (the host's; null: the executor's own again) for `device` from the next call on.
  Status Set(DLDevice device, TVMStreamHandle stream);
  // Waits for the work queued on every stream in use.
  Status Synchronize() const;

  // The streams current on the calling thread for the life of the scope (LIFO with other scopes).
  class Scope {
   public:
    explicit Scope(const ExecutorStreams& streams);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    const ExecutorStreams& streams_;
    std::vector<TVMStreamHandle> previous_;
  };

 private:
  struct Entry {
    DLDevice device{};
    DeviceApi* api = nullptr;
    TVMStreamHandle own = nullptr;   // made here, freed here
    TVMStreamHandle host = nullptr;  // handed over by Set, not owned
    TVMStreamHandle in_use() const { return host != nullptr ? host : own; }
  };
  StatusOr<const Entry*> Find(DLDevice device) const;
  void FreeOwn();

  std::vector<Entry> entries_;
};

}  // namespace sorun

#endif  // SORUN_EXECUTOR_EXECUTOR_STREAMS_H_
