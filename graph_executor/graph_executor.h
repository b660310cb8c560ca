// GraphExecutor: runs one validated graph (GraphSpec) with the kernels of a kernel-library module.
//
// Creation does all the work: the memory plan, one allocation per storage pool, parameters bound to
// the factory's shared read-only weights (uploaded once per device), one prebuilt argument array per
// operator and every kernel resolved (a missing kernel is an error naming node and function). Run()
// is then a tight loop over compiled C entry points: no allocation, lookup or locking.
//
// Semantics follow TVM's graph executor (docs/spec/FORMAT.md section 6) with stricter checks: an unknown
// input name is an error, set_input checks shape and dtype, and writing a shared parameter copies it
// into executor-private memory first (copy-on-write) so other executors never see the change.
//
// Threading: an executor is single-threaded; a call that reads or writes its tensors or bindings
// (SetInput*, SetOutputZeroCopy, GetInput, GetOutput, CopyOutputTo, Run, Profile, LoadParams,
// ShareParams) made while another thread is inside the same executor fails with FailedPrecondition
// ("being used by another thread") instead of racing. Metadata (graph, devices, indices by name,
// InputInfo, OutputInfo, memory_plan) is fixed at Create or atomic and may be read from any thread.
// Many executors (e.g. one per thread, all from one factory) run concurrently. Tensors passed to the zero-copy calls
// must stay alive and unchanged in shape while bound.
//
// Parallel kernels (TVMBackendParallelLaunch) run on the executor's own thread pool when it was
// created with one (Run, Profile and Warmup enter it with a ThreadPool::Scope), else on the
// process-wide ThreadPool::Global().
#ifndef SORUN_GRAPH_EXECUTOR_GRAPH_EXECUTOR_H_
#define SORUN_GRAPH_EXECUTOR_GRAPH_EXECUTOR_H_

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/executor_types.h"
#include "base/status.h"
#include "graph_executor/graph_json.h"
#include "graph_executor/memory_plan.h"
#include "graph_executor/shared_weights.h"
#include "runtime/module.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"

namespace sorun {

// Inputs (the graph's arg_nodes, parameters included: is_param when `weights` has the name) and
// outputs of `graph`, read without an executor. `weights` may be null. An output is named after its
// node, with ":<index>" for a node's outputs after the first.
std::vector<TensorInfo> DescribeGraphInputs(const GraphSpec& graph, const SharedWeights* weights);
std::vector<TensorInfo> DescribeGraphOutputs(const GraphSpec& graph);

class GraphExecutor {
 public:
  // `weights` may be null (no parameters bound; e.g. the three-file path before load_params).
  // `thread_pool`: the pool this executor's parallel kernels use (shared with the caller, kept alive
  // here); null: ThreadPool::Global().
  static StatusOr<std::unique_ptr<GraphExecutor>> Create(std::shared_ptr<const GraphSpec> graph, Module kernel_lib,
                                                         std::vector<DLDevice> devices,
                                                         ObjectPtr<SharedWeights> weights,
                                                         std::shared_ptr<ThreadPool> thread_pool = nullptr);
  ~GraphExecutor();
  GraphExecutor(const GraphExecutor&) = delete;
  GraphExecutor& operator=(const GraphExecutor&) = delete;

  const GraphSpec& graph() const { return *graph_; }
  const std::vector<DLDevice>& devices() const { return devices_; }
  const Module& kernel_library() const { return lib_; }
  // The executor's own pool, or null when it uses ThreadPool::Global().
  const std::shared_ptr<ThreadPool>& thread_pool() const { return thread_pool_; }
  // Threads of the pool its parallel kernels use.
  int num_threads() const { return thread_pool_ ? thread_pool_->num_threads() : ThreadPool::Global().num_threads(); }
  // The memory plan (a copy); CPU workspace is the largest workspace a run has reserved so far.
  // Safe to call while another thread runs the executor (the plan itself never changes).
  MemoryPlan memory_plan() const;

  // Inputs are the graph's arg_nodes (parameters included), as in TVM.
  int num_inputs() const { return static_cast<int>(input_entries_.size()); }
  int num_outputs() const { return static_cast<int>(output_entries_.size()); }
  // Index of input `name`; NotFound (listing inputs) if there is none.
  StatusOr<int> GetInputIndex(std::string_view name) const;
  // Index of output `name` ("node" or "node:k"); NotFound if none.
  StatusOr<int> GetOutputIndex(std::string_view name) const;

  // Copies `value` (same shape and dtype, any device) into input `index`.
  Status SetInput(int index, const DLTensor& value);
  Status SetInput(std::string_view name, const DLTensor& value);
  // Makes the kernels read input `index` directly from `value` (same shape, dtype and device; 64-byte
  // aligned on the CPU). `value` must stay alive while bound; `owner` (optional) is kept alive here.
  Status SetInputZeroCopy(int index, const DLTensor& value, ObjectPtr<Object> owner = nullptr);
  // Makes the kernels write output `index` directly into `value` (same checks).
  Status SetOutputZeroCopy(int index, const DLTensor& value, ObjectPtr<Object> owner = nullptr);

  // The executor's own tensor for input/output `index` (a view; valid until the next run).
  StatusOr<Tensor> GetInput(int index) const;
  StatusOr<Tensor> GetOutput(int index) const;
  // Copies output `index` into `out` (same shape and dtype, any device).
  Status CopyOutputTo(int index, const DLTensor& out) const;

  // Runs every operator once, in order.
  Status Run();
  // Optional, before the first Run: maps the pages the first run would otherwise fault in one by one,
  // without running a kernel or changing any value (inputs already set stay set): the executor's CPU
  // activation pools and the CPU weights it reads in place from the mapped library. Costs the RSS
  // the first run would take anyway. Kernel workspace (sized by the kernels at run time) is not
  // covered. Same threading rule as Run.
  Status Warmup();
  // Times each operator: runs the graph once, then each operator `repeat` times on its own.
  StatusOr<std::vector<NodeProfile>> Profile(int repeat);

  // load_params: params-file bytes (docs/spec/FORMAT.md section 5.2); each tensor is copied into its
  // input. A name that is not an input of this graph is an error (alignment pads excepted).
  Status LoadParams(std::string_view params_bytes);
  // share_params: inputs named in `params_bytes` alias `other`'s tensors for them (no copy).
  Status ShareParams(const GraphExecutor& other, std::string_view params_bytes);

  // Inputs (optionally without bound parameters and loaded params) and outputs.
  std::vector<TensorInfo> InputInfo(bool include_params) const;
  std::vector<TensorInfo> OutputInfo() const;

 private:
  struct Step;
  GraphExecutor() = default;
  Status Init();
  Status SetupStorage();
  // The image of texture storage `pool` (through "device_api.opencl.alloc_nd"), as a byte tensor that
  // gives the image back when its last view goes.
  StatusOr<Tensor> AllocTextureStorage(const StoragePool& pool);
  Status SetupSteps();
  Status CheckBinding(uint32_t eid, const DLTensor& value, const char* what) const;
  // Device, compactness and alignment of a tensor the kernels will use directly.
  Status CheckZeroCopyTarget(uint32_t eid, const DLTensor& value, const std::string& what) const;
  // Points every operator argument of `eid`'s alias group at `data` and records the new tensors.
  void Rebind(uint32_t eid, void* data, uint64_t byte_offset, ObjectPtr<Object> owner);
  // Gives `eid` executor-private storage (copy-on-write of shared memory).
  Status MakePrivate(uint32_t eid);
  Status CheckIndex(int index, int count, const char* what) const;
  // SetInput's body; the caller holds the busy guard.
  Status SetInputLocked(int index, const DLTensor& value);

  std::shared_ptr<const GraphSpec> graph_;
  Module lib_;
  std::vector<DLDevice> devices_;
  ObjectPtr<SharedWeights> weights_;
  std::shared_ptr<ThreadPool> thread_pool_;  // null: ThreadPool::Global()
  MemoryPlan plan_;

  std::vector<Tensor> pools_;                         // per plan pool; undefined for weights-only pools
  std::vector<Tensor> entries_;                       // per entry
  std::vector<uint8_t> shared_;                       // per entry: memory not owned by this executor
  std::vector<uint8_t> bound_param_;                  // per entry: bound to the factory's weights
  std::vector<uint32_t> alias_root_;                  // per entry: union-find root over __nop edges
  std::vector<std::vector<uint32_t>> alias_members_;  // per root

  std::vector<DLTensor> arg_tensors_;
  std::vector<int64_t> flat_dims_;
  std::vector<TVMValue> arg_values_;
  std::vector<int> arg_codes_;
  std::vector<std::vector<DLTensor*>> entry_args_;
  std::vector<Step> steps_;

  std::vector<uint32_t> input_entries_;
  std::vector<uint32_t> output_entries_;
  std::unordered_map<std::string, int> input_by_name_;
  std::unordered_map<std::string, int> output_by_name_;
  std::unique_ptr<std::atomic<bool>[]> loaded_param_;  // per input index: set via LoadParams (read unguarded)
  std::atomic<uint64_t> cpu_workspace_bytes_{0};       // largest workspace a run reserved
  mutable std::atomic<bool> busy_{false};
};

}  // namespace sorun

#endif  // SORUN_GRAPH_EXECUTOR_GRAPH_EXECUTOR_H_
