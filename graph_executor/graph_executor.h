// GraphExecutor: the graph-executor kind of ModelExecutor (executor/model_executor.h): runs one
// validated graph (GraphSpec) with the kernels of a kernel-library module.
//
// Creation does all the work: the memory plan, one allocation per storage pool, parameters bound to
// the model's shared read-only weights (uploaded once per device), one prebuilt argument array per
// operator and every kernel resolved (a missing kernel is an error naming node and function). Run()
// is then a tight loop over compiled C entry points: no allocation, lookup or locking.
//
// Semantics follow TVM's graph executor (docs/spec/FORMAT.md section 6) with stricter checks: an
// unknown input name is an error, set_input checks shape and dtype, and writing a shared parameter
// copies it into executor-private memory first (copy-on-write) so other executors never see the change.
// Capabilities: output zero-copy and params files (load_params / share_params), both.
//
// Threading: ModelExecutor's contract (one thread at a time, checked; metadata from any thread). The
// graph-specific accessors below (graph, kernel_library, memory_plan, InputInfo, OutputInfo) are fixed
// at Create or atomic and may be read from any thread. Tensors passed to the zero-copy calls must stay
// alive and unchanged in shape while bound.
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
#include "executor/kernel_timer.h"
#include "executor/model_executor.h"
#include "executor/model_signature.h"
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

// The signature every executor of `graph` shares: DescribeGraphInputs / DescribeGraphOutputs.
std::shared_ptr<const ModelSignature> GraphSignature(const GraphSpec& graph, const SharedWeights* weights);

class GraphExecutor final : public ModelExecutor {
 public:
  // `weights` may be null (no parameters bound; e.g. the three-file path before load_params).
  // `thread_pool`: the pool this executor's parallel kernels use (shared with the caller, kept alive
  // here); null: ThreadPool::Global(). `signature`: the model's, shared by its executors (null: made
  // here from the graph and weights).
  static StatusOr<std::unique_ptr<GraphExecutor>> Create(std::shared_ptr<const GraphSpec> graph, Module kernel_lib,
                                                         std::vector<DLDevice> devices,
                                                         ObjectPtr<SharedWeights> weights,
                                                         std::shared_ptr<ThreadPool> thread_pool = nullptr,
                                                         std::shared_ptr<const ModelSignature> signature = nullptr);
  ~GraphExecutor() override;

  const GraphSpec& graph() const { return *graph_; }
  const Module& kernel_library() const { return lib_; }
  // The memory plan (a copy); CPU workspace is the largest workspace a run has reserved so far.
  // Safe to call while another thread runs the executor (the plan itself never changes).
  MemoryPlan memory_plan() const;
  // Inputs (optionally without bound parameters and loaded params) and outputs.
  std::vector<TensorInfo> InputInfo(bool include_params) const;
  std::vector<TensorInfo> OutputInfo() const;

 protected:
  Status DoSetInput(int index, const DLTensor& value) override;
  Status DoSetInputZeroCopy(int index, const DLTensor& value, ObjectPtr<Object> owner) override;
  Status DoSetOutputZeroCopy(int index, const DLTensor& value, ObjectPtr<Object> owner) override;
  StatusOr<Tensor> DoGetInput(int index) const override;
  StatusOr<Tensor> DoGetOutput(int index) const override;
  // Runs every operator once, in order.
  Status DoRun() override;
  // The CPU activation pools (written) and the CPU weights read in place from the mapped library.
  // Kernel workspace (sized by the kernels at run time) is not covered.
  void PagesToWarm(std::vector<PageRange>* pages) const override;
  // Runs the graph once, then each operator `repeat` times on its own (KernelTimer).
  StatusOr<std::vector<NodeProfile>> DoProfile(int repeat) override;
  // Every operator once, in order, each timed (KernelTimer).
  StatusOr<std::vector<KernelEvent>> DoTrace() override;
  // load_params: params-file bytes (docs/spec/FORMAT.md section 5.2); each tensor is copied into its
  // input. A name that is not an input of this graph is an error (alignment pads excepted).
  Status DoLoadParams(std::string_view params_bytes) override;
  // share_params: inputs named in `params_bytes` alias `other`'s tensors for them (no copy).
  Status DoShareParams(const ModelExecutor& other, std::string_view params_bytes) override;
  std::vector<DeviceMemory> DescribeMemory() const override;
  // The first operator that works on host memory (a CPU kernel, a copy to or from the host): a
  // device graph would skip it on replay.
  std::string CaptureRefusal() const override;

 private:
  struct Step;
  explicit GraphExecutor(Setup setup);
  Status Init();
  Status SetupStorage();
  // The image of texture storage `pool` (through "device_api.opencl.alloc_nd"), as a byte tensor that
  // gives the image back when its last view goes.
  StatusOr<Tensor> AllocTextureStorage(const StoragePool& pool);
  Status SetupSteps();
  Status CheckBinding(uint32_t eid, const DLTensor& value, const char* what) const;
  // ModelExecutor::CheckZeroCopyTarget on the entry's device, and not an entry kept in texture memory.
  Status CheckEntryZeroCopyTarget(uint32_t eid, const DLTensor& value, const std::string& what) const;
  // Points every operator argument of `eid`'s alias group at `data` and records the new tensors.
  void Rebind(uint32_t eid, void* data, uint64_t byte_offset, ObjectPtr<Object> owner);
  // Gives `eid` executor-private storage (copy-on-write of shared memory).
  Status MakePrivate(uint32_t eid);
  // One operator through its generic path (Profile, Trace); errors name the node.
  Status RunStep(const Step& s);
  // Every operator `repeat` times in a row, in order, each call timed by `timer`.
  Status TimeSteps(KernelTimer& timer, int repeat);

  std::shared_ptr<const GraphSpec> graph_;
  Module lib_;
  ObjectPtr<SharedWeights> weights_;
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
  std::unique_ptr<std::atomic<bool>[]> loaded_param_;  // per input index: set via LoadParams (read unguarded)
  std::atomic<uint64_t> cpu_workspace_bytes_{0};       // largest workspace a run reserved
};

}  // namespace sorun

#endif  // SORUN_GRAPH_EXECUTOR_GRAPH_EXECUTOR_H_
