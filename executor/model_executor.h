// ModelExecutor: the one executor contract of every executor kind (the graph executor, the Relax VM).
// It owns what the kinds share — the model's signature (names, index rules), the devices, the thread
// pool its kernels use, the busy guard, index and capability checks, output copies, page-in — and
// calls the kind for the rest through the protected Do* hooks. Callers (api/, the CLI, the Triton
// backend, tests) use only the public methods and never branch on the kind; what a kind lacks is
// declared in capabilities(), and such a call fails with Unimplemented before the kind is reached.
//
// Threading (docs/threading.md), kept by construction:
//   - any thread, any time (also while another thread runs the executor): kind(), inputs(), outputs(),
//     num_inputs(), num_outputs(), devices(), num_threads(), thread_pool(), capabilities(),
//     GetInputIndex(), GetOutputIndex(), Memory(). They read what is fixed at creation, or atomics;
//     a kind's DescribeMemory() must do the same.
//   - one thread at a time: every other method. An overlapping call fails with FailedPrecondition
//     ("... being used by another thread") instead of racing: the hooks run under the busy guard, so a
//     kind's hook never runs concurrently with another hook of the same executor.
// Run, Warmup and Profile enter the executor's thread pool (ThreadPool::Scope) for the kernels'
// parallel loops. Many executors (e.g. one per thread, all of one model) run concurrently.
// Device work of every call is queued on the executor's streams (executor/executor_streams.h: its own
// per non-CPU device, or the host's after SetStream), made current for the call; work queued by Run
// is finished after Synchronize (or a copy out of the executor: CopyOutputTo waits for it).
// With device graphs (EnableDeviceGraphs: ExecutorOptions::cuda_graph), Run replays its kernels as one
// captured graph (executor/captured_runs.h); the streams are then independent of the default stream.
//
// Ownership: an executor keeps its model alive (the kind holds the model's shared parts); tensors it
// hands out view its memory and stay valid while they live, with the values of the last run.
#ifndef SORUN_EXECUTOR_MODEL_EXECUTOR_H_
#define SORUN_EXECUTOR_MODEL_EXECUTOR_H_

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/executor_types.h"
#include "base/object.h"
#include "base/status.h"
#include "executor/captured_runs.h"
#include "executor/executor_kind.h"
#include "executor/executor_streams.h"
#include "executor/model_signature.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"

namespace sorun {

class ModelExecutor {
 public:
  virtual ~ModelExecutor();
  ModelExecutor(const ModelExecutor&) = delete;
  ModelExecutor& operator=(const ModelExecutor&) = delete;

  // ---- Any thread ----
  ExecutorKind kind() const { return kind_; }
  const ModelSignature& signature() const { return *signature_; }
  // Inputs (parameters bound from the weights flagged is_param) and the static description of the
  // outputs: a dimension known only at run time is -1, and a model whose outputs are known only by
  // running has none listed (the last run's outputs are read with GetOutput).
  const std::vector<TensorInfo>& inputs() const { return signature_->inputs(); }
  const std::vector<TensorInfo>& outputs() const { return signature_->outputs(); }
  int num_inputs() const { return signature_->num_inputs(); }
  // Outputs of the last completed run; before the first run, outputs().size().
  int num_outputs() const { return num_outputs_.load(std::memory_order_acquire); }
  const std::vector<DLDevice>& devices() const { return devices_; }
  // The executor's own pool, or null when its kernels use ThreadPool::Global().
  const std::shared_ptr<ThreadPool>& thread_pool() const { return thread_pool_; }
  int num_threads() const;
  const ExecutorCapabilities& capabilities() const { return capabilities_; }
  StatusOr<int> GetInputIndex(std::string_view name) const { return signature_->InputIndex(name); }
  StatusOr<int> GetOutputIndex(std::string_view name) const { return signature_->OutputIndex(name); }
  // Bytes per device: weights (shared by the model's executors), this executor's activations, the
  // kernel workspace reserved so far.
  std::vector<DeviceMemory> Memory() const { return DescribeMemory(); }

  // ---- One thread at a time ----
  // Copies `value` (the input's shape and dtype, any device, compact) into input `index`.
  Status SetInput(int index, const DLTensor& value);
  Status SetInput(std::string_view name, const DLTensor& value);
  // Makes the kernels read input `index` from `value` (same shape, dtype and device as the input;
  // compact; 64-byte aligned on the CPU). `value` must stay alive while bound; `owner` is kept here.
  Status SetInputZeroCopy(int index, const DLTensor& value, ObjectPtr<Object> owner = nullptr);
  Status SetInputZeroCopy(std::string_view name, const DLTensor& value, ObjectPtr<Object> owner = nullptr);
  // capabilities().output_zero_copy: makes the kernels write output `index` into `value` (same checks).
  Status SetOutputZeroCopy(int index, const DLTensor& value, ObjectPtr<Object> owner = nullptr);
  // The executor's own tensor for input / output `index` (a view; the next run overwrites an output).
  StatusOr<Tensor> GetInput(int index) const;
  StatusOr<Tensor> GetOutput(int index) const;
  // Copies output `index` into `out` (the output's shape and dtype, any device).
  Status CopyOutputTo(int index, const DLTensor& out) const;

  // The stream the executor queues the work of `device` on (null: the device's default queue);
  // InvalidArgument for a device that is not one of its non-CPU devices.
  StatusOr<TVMStreamHandle> GetStream(DLDevice device) const;
  // Queues the work of `device` on `stream` from now on: a stream of that device the host owns and
  // keeps alive while the executor uses it (e.g. Triton's instance stream); null goes back to the
  // executor's own. Work already queued on the previous stream is waited for first.
  Status SetStream(DLDevice device, TVMStreamHandle stream);
  // Waits until the device work this executor queued has finished (the CPU is idle after Run).
  Status Synchronize();

  Status Run();
  // Called once by the front door after creation, before the executor is handed out: Run records its
  // kernels on the executor's stream of its one non-CPU device and replays them (CapturedRuns). Makes
  // the executor's own streams independent of the default stream (what capture needs). An executor
  // that cannot capture at all keeps running kernel by kernel; GraphReport says why.
  Status EnableDeviceGraphs();
  // How Run used device graphs (requested false when EnableDeviceGraphs was not called).
  StatusOr<DeviceGraphReport> GraphReport() const;
  // Maps the pages the first run would fault in (the kind names them: activation memory, weights read
  // in place) without running a kernel or changing a value.
  Status Warmup();
  // Per-kernel times over `repeat` (>= 1) repetitions, one entry per kernel call site (the kind's
  // KernelTimer: device work waited for, mean and min per call).
  StatusOr<std::vector<NodeProfile>> Profile(int repeat);
  // Runs once and returns every kernel call on a timeline (KernelTimer; start_us from the start).
  StatusOr<std::vector<KernelEvent>> Trace();
  // capabilities().params_files: TVM's load_params (params-file bytes copied into their inputs) and
  // share_params (inputs named in the bytes alias `other`'s tensors; `other` is of the same kind).
  Status LoadParams(std::string_view params_bytes);
  Status ShareParams(const ModelExecutor& other, std::string_view params_bytes);

 protected:
  // What a kind hands the base at creation.
  struct Setup {
    ExecutorKind kind = ExecutorKind::kGraph;
    std::shared_ptr<const ModelSignature> signature;  // non-null
    std::vector<DLDevice> devices;                    // non-empty
    std::shared_ptr<ThreadPool> thread_pool;          // null: ThreadPool::Global()
    ExecutorCapabilities capabilities;
  };
  // Pages Warmup maps: [data, data + bytes) read (weights in place) or written (activation memory).
  struct PageRange {
    void* data = nullptr;
    uint64_t bytes = 0;
    bool write = false;
  };

  explicit ModelExecutor(Setup setup);
  // Called by the kind once at the end of its creation, after its device memory and uploads: makes
  // the executor's streams (ExecutorStreams::Create).
  Status OpenStreams();

  // The rule for a tensor the kernels will use directly (zero-copy bindings): on `device`, with data,
  // compact, 64-byte aligned on the CPU (TVM's kernels use aligned loads), byte_offset 0 elsewhere.
  static Status CheckZeroCopyTarget(const DLTensor& value, DLDevice device, const std::string& what);

  // A kind whose outputs are known only by running records each run's count here.
  void set_num_outputs(int count) { num_outputs_.store(count, std::memory_order_release); }

  // The hooks. Each runs under the busy guard with its index checked against num_inputs() /
  // num_outputs() and its capability present; Run/Warmup/Profile inside the thread-pool scope.
  virtual Status DoSetInput(int index, const DLTensor& value) = 0;
  virtual Status DoSetInputZeroCopy(int index, const DLTensor& value, ObjectPtr<Object> owner) = 0;
  virtual Status DoSetOutputZeroCopy(int index, const DLTensor& value, ObjectPtr<Object> owner);
  virtual StatusOr<Tensor> DoGetInput(int index) const = 0;
  virtual StatusOr<Tensor> DoGetOutput(int index) const = 0;
  virtual Status DoRun() = 0;
  virtual void PagesToWarm(std::vector<PageRange>* pages) const = 0;
  virtual StatusOr<std::vector<NodeProfile>> DoProfile(int repeat) = 0;
  virtual StatusOr<std::vector<KernelEvent>> DoTrace() = 0;
  virtual Status DoLoadParams(std::string_view params_bytes);
  // `other` is of this kind and held by its own busy guard.
  virtual Status DoShareParams(const ModelExecutor& other, std::string_view params_bytes);
  // Any thread (see the top): only what is fixed at creation, or atomics.
  virtual std::vector<DeviceMemory> DescribeMemory() const = 0;
  // Why this kind lacks a capability ("a Relax VM export ..."), for the refusal message.
  virtual std::string MissingCapabilityReason(std::string_view capability) const;
  // Device graphs: why no run of this executor can be recorded ("" when runs may be: the default), e.g.
  // a graph node that runs on the CPU; and, asked after a recorded run, why that run may not be
  // replayed (e.g. it called a kernel on host memory; "" when it may: the default).
  virtual std::string CaptureRefusal() const;
  virtual std::string RecordedRunRefusal();
  // True while DoRun is being recorded into a device graph (kernels are queued, not run).
  bool recording() const { return recording_; }

 private:
  class Exclusive;
  Status Missing(std::string_view call, std::string_view capability) const;

  const ExecutorKind kind_;
  const std::shared_ptr<const ModelSignature> signature_;
  const std::vector<DLDevice> devices_;
  const std::shared_ptr<ThreadPool> thread_pool_;
  const ExecutorCapabilities capabilities_;
  std::atomic<int> num_outputs_;
  mutable std::atomic<bool> busy_{false};
  ExecutorStreams streams_;                      // set by OpenStreams before the executor is handed out
  std::unique_ptr<CapturedRuns> captured_runs_;  // set by EnableDeviceGraphs
  DLDevice graph_device_{kDLCPU, 0};
  bool recording_ = false;
};

}  // namespace sorun

#endif  // SORUN_EXECUTOR_MODEL_EXECUTOR_H_
