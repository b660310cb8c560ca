#include "graph_executor/graph_executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <unordered_map>

#include "executor/kernel_timer.h"
#include "format/binary_reader.h"
#include "runtime/data_type.h"
#include "runtime/device_api.h"
#include "runtime/function_registry.h"
#include "runtime/last_error.h"
#include "runtime/registry_keys.h"
#include "runtime/tensor_io.h"
#include "runtime/thread_pool.h"
#include "runtime/workspace_pool.h"

namespace sorun {

struct GraphExecutor::Step {
  enum Kind : uint8_t { kCall, kCopy };
  TVMBackendPackedCFunc fn = nullptr;  // fast path: a compiled C function
  PackedFunc func;                     // anything else
  uint32_t first_arg = 0;
  uint32_t num_args = 0;
  uint32_t node_id = 0;
  Kind kind = kCall;
};

GraphExecutor::GraphExecutor(Setup setup) : ModelExecutor(std::move(setup)) {}
GraphExecutor::~GraphExecutor() = default;

std::shared_ptr<const ModelSignature> GraphSignature(const GraphSpec& graph, const SharedWeights* weights) {
  return ModelSignature::Make(DescribeGraphInputs(graph, weights), DescribeGraphOutputs(graph));
}

StatusOr<std::unique_ptr<GraphExecutor>> GraphExecutor::Create(std::shared_ptr<const GraphSpec> graph,
                                                               Module kernel_lib, std::vector<DLDevice> devices,
                                                               ObjectPtr<SharedWeights> weights,
                                                               std::shared_ptr<ThreadPool> thread_pool,
                                                               std::shared_ptr<const ModelSignature> signature) {
  if (!graph) return InvalidArgument("GraphExecutor::Create: null graph");
  if (!kernel_lib.defined()) return InvalidArgument("GraphExecutor::Create: null kernel library module");
  if (devices.empty()) return InvalidArgument("GraphExecutor::Create: no device given");
  for (const DLDevice& d : devices) SORUN_RETURN_IF_ERROR(CheckDeviceExists(d));
  Setup setup;
  setup.kind = ExecutorKind::kGraph;
  setup.signature = signature ? std::move(signature) : GraphSignature(*graph, weights.get());
  setup.devices = std::move(devices);
  setup.thread_pool = std::move(thread_pool);
  setup.capabilities.output_zero_copy = true;
  setup.capabilities.params_files = true;
  std::unique_ptr<GraphExecutor> e(new GraphExecutor(std::move(setup)));
  e->graph_ = std::move(graph);
  e->lib_ = std::move(kernel_lib);
  e->weights_ = std::move(weights);
  SORUN_RETURN_IF_ERROR(e->Init());
  SORUN_RETURN_IF_ERROR(e->OpenStreams());
  return e;
}

Status GraphExecutor::Init() {
  const GraphSpec& g = *graph_;
  const uint32_t n = g.num_entries();
  input_entries_.reserve(g.arg_nodes.size());
  for (uint32_t nid : g.arg_nodes) input_entries_.push_back(g.entry_id(nid, 0));
  loaded_param_.reset(new std::atomic<bool>[input_entries_.size()]());
  output_entries_.reserve(g.heads.size());
  for (const GraphEntryRef& h : g.heads) output_entries_.push_back(g.entry_id(h));
  // Alias groups: __nop outputs share memory with their inputs.
  alias_root_.resize(n);
  for (uint32_t e = 0; e < n; ++e) alias_root_[e] = e;
  auto find = [&](uint32_t x) {
    while (alias_root_[x] != x) x = alias_root_[x] = alias_root_[alias_root_[x]];
    return x;
  };
  for (uint32_t nid = 0; nid < g.nodes.size(); ++nid) {
    const GraphNode& node = g.nodes[nid];
    if (node.is_input() || node.func_name != "__nop") continue;
    for (const GraphEntryRef& in : node.inputs) {
      for (uint32_t k = 0; k < node.num_outputs; ++k) {
        uint32_t a = find(g.entry_id(in)), b = find(g.entry_id(nid, k));
        if (a != b) alias_root_[b] = a;
      }
    }
  }
  alias_members_.assign(n, {});
  for (uint32_t e = 0; e < n; ++e) {
    alias_root_[e] = find(e);
    alias_members_[alias_root_[e]].push_back(e);
  }
  SORUN_RETURN_IF_ERROR(SetupStorage());
  SORUN_RETURN_IF_ERROR(SetupSteps());
  // Start the worker threads now rather than inside the first run (kernels launch parallel loops); an
  // own pool started its workers when it was made.
  if (!thread_pool()) ThreadPool::Global();
  return Status::Ok();
}

namespace {

// Owns one image from "device_api.opencl.alloc_nd"; hands it back through "free_nd" when the last
// tensor over it goes.
class TextureStorage final : public Object {
 public:
  TextureStorage(PackedFunc free_nd, DLDevice device, std::string scope, void* image)
      : free_nd_(std::move(free_nd)), device_(device), scope_(std::move(scope)), image_(image) {}
  ~TextureStorage() override {
    // Cannot fail for an image alloc_nd returned; nothing to report to from a destructor.
    (void)free_nd_(static_cast<int64_t>(device_.device_type), static_cast<int64_t>(device_.device_id), scope_, image_);
  }

 private:
  PackedFunc free_nd_;
  DLDevice device_;
  std::string scope_;
  void* image_;
};

}  // namespace

StatusOr<Tensor> GraphExecutor::AllocTextureStorage(const StoragePool& pool) {
  const std::string what = "allocating storage " + std::to_string(pool.storage_id) + " (" +
                           std::to_string(pool.texture_width) + " x " + std::to_string(pool.texture_height) +
                           " texture, scope '" + pool.texture_scope + "', on " + DeviceToString(pool.device) + ")";
  PackedFunc alloc_nd = FunctionRegistry::Global().Get(keys::kOpenclAllocNd);
  PackedFunc free_nd = FunctionRegistry::Global().Get(keys::kOpenclFreeNd);
  if (!alloc_nd.defined() || !free_nd.defined()) {
    return Unavailable(what + ": texture memory needs the OpenCL backend (" + keys::kOpenclAllocNd +
                       " is not registered)");
  }
  int64_t extent[2] = {pool.texture_width, pool.texture_height};
  auto image = alloc_nd(static_cast<int64_t>(pool.device.device_type), static_cast<int64_t>(pool.device.device_id),
                        static_cast<int64_t>(pool.texture_dtype.code), static_cast<int64_t>(pool.texture_dtype.bits),
                        pool.texture_scope, static_cast<int64_t>(2), static_cast<void*>(extent));
  if (!image.ok()) return std::move(image).status().Annotate(what);
  void* handle = image->raw().v_handle;
  ObjectPtr<Object> owner = MakeObject<TextureStorage>(free_nd, pool.device, pool.texture_scope, handle);
  return Tensor::Wrap(handle, pool.bytes, {static_cast<int64_t>(pool.bytes)}, UInt8(), pool.device, std::move(owner));
}

Status GraphExecutor::SetupStorage() {
  const GraphSpec& g = *graph_;
  const uint32_t n = g.num_entries();
  // Which entries can be bound to the shared weights: an input whose name has a weight of the same
  // shape and dtype.
  bound_param_.assign(n, 0);
  std::vector<int32_t> param_node(n, -1);
  if (weights_) {
    SORUN_RETURN_IF_ERROR(weights_->CheckAgainstGraph(g));
    for (uint32_t nid : g.arg_nodes) {
      if (weights_->Find(g.nodes[nid].name) == nullptr) continue;
      uint32_t eid = g.entry_id(nid, 0);
      bound_param_[eid] = 1;
      param_node[eid] = static_cast<int32_t>(nid);
    }
  }
  std::vector<bool> bound(bound_param_.begin(), bound_param_.end());
  SORUN_ASSIGN_OR_RETURN(plan_, PlanMemory(g, devices(), bound));

  // Linked parameters (TVM link-params): the library may provide storage for some pools.
  PackedFunc lookup_linked = lib_.GetFunction(keys::kSymbolLookupLinkedParam, /*query_imports=*/false);

  pools_.assign(plan_.pools.size(), Tensor());
  for (size_t p = 0; p < plan_.pools.size(); ++p) {
    const StoragePool& pool = plan_.pools[p];
    if (pool.weights_only) continue;
    if (lookup_linked.defined()) {
      auto linked = lookup_linked(static_cast<int64_t>(pool.storage_id));
      if (linked.ok() && linked->type_code() == kTVMOpaqueHandle && linked->raw().v_handle) {
        SORUN_ASSIGN_OR_RETURN(
            pools_[p], Tensor::Wrap(linked->raw().v_handle, pool.bytes, {static_cast<int64_t>(pool.bytes)}, UInt8(),
                                    pool.device, ObjectPtr<Object>(lib_.node())));
        continue;
      }
    }
    if (!pool.texture_scope.empty()) {
      SORUN_ASSIGN_OR_RETURN(pools_[p], AllocTextureStorage(pool));
      continue;
    }
    // Exactly the planned bytes: the plan is the memory report (memory_plan()).
    auto t = Tensor::Empty({static_cast<int64_t>(pool.bytes)}, UInt8(), pool.device);
    if (!t.ok()) {
      return std::move(t).status().Annotate("allocating storage " + std::to_string(pool.storage_id) + " (" +
                                            FormatBytes(pool.bytes) + " on " + DeviceToString(pool.device) + ")");
    }
    pools_[p] = *t;
  }
  entries_.assign(n, Tensor());
  shared_.assign(n, 0);
  for (uint32_t eid = 0; eid < n; ++eid) {
    const StoragePool& pool = plan_.pools[static_cast<size_t>(plan_.entry_pool[eid])];
    if (bound_param_[eid]) {
      const std::string& name = g.nodes[static_cast<size_t>(param_node[eid])].name;
      SORUN_ASSIGN_OR_RETURN(Tensor w, weights_->OnDevice(name, pool.device));
      if (pool.weights_only) {
        entries_[eid] = w;
        shared_[eid] = 1;
        continue;
      }
      // The pool also holds other entries: the weight is copied in (TVM's behaviour).
      SORUN_ASSIGN_OR_RETURN(entries_[eid],
                             pools_[static_cast<size_t>(plan_.entry_pool[eid])].View(g.shape[eid], g.dltype[eid]));
      SORUN_RETURN_IF_ERROR_CTX(CopyTensor(*w.dl(), *entries_[eid].dl()), "param '" + name + "'");
      continue;
    }
    auto view = pools_[static_cast<size_t>(plan_.entry_pool[eid])].View(g.shape[eid], g.dltype[eid]);
    if (!view.ok()) return std::move(view).status().Annotate("entry " + std::to_string(eid));
    entries_[eid] = *view;
  }
  return Status::Ok();
}

Status GraphExecutor::SetupSteps() {
  const GraphSpec& g = *graph_;
  size_t total_args = 0;
  size_t flat = 0;
  for (const GraphNode& node : g.nodes) {
    if (node.is_input() || node.func_name == "__nop") continue;
    total_args += node.inputs.size() + node.num_outputs;
    if (node.flatten_data) flat += node.inputs.size() + node.num_outputs;
  }
  arg_tensors_.resize(total_args);  // sized once: op argument addresses never move
  arg_values_.resize(total_args);
  arg_codes_.assign(total_args, kTVMDLTensorHandle);
  flat_dims_.resize(flat);
  entry_args_.assign(g.num_entries(), {});
  size_t next_arg = 0;
  size_t next_flat = 0;
  std::unordered_map<std::string, PackedFunc> kernels;  // func_name -> resolved kernel
  for (uint32_t nid = 0; nid < g.nodes.size(); ++nid) {
    const GraphNode& node = g.nodes[nid];
    if (node.is_input() || node.func_name == "__nop") continue;
    Step step;
    step.node_id = nid;
    step.first_arg = static_cast<uint32_t>(next_arg);
    std::vector<uint32_t> arg_entries;
    for (const GraphEntryRef& in : node.inputs) arg_entries.push_back(g.entry_id(in));
    for (uint32_t k = 0; k < node.num_outputs; ++k) arg_entries.push_back(g.entry_id(nid, k));
    for (uint32_t eid : arg_entries) {
      DLTensor& t = arg_tensors_[next_arg];
      t = *entries_[eid].dl();
      // Shapes come from the immutable graph: entry tensors are replaced when memory is rebound.
      t.ndim = static_cast<int32_t>(g.shape[eid].size());
      t.shape = const_cast<int64_t*>(g.shape[eid].data());
      t.strides = nullptr;
      if (node.flatten_data) {
        flat_dims_[next_flat] = entries_[eid].num_elements();
        t.ndim = 1;
        t.shape = &flat_dims_[next_flat++];
      }
      arg_values_[next_arg].v_handle = &t;
      entry_args_[eid].push_back(&t);
      ++next_arg;
    }
    step.num_args = static_cast<uint32_t>(arg_entries.size());
    if (node.func_name == "__copy") {
      step.kind = Step::kCopy;
    } else {
      // func_name comes from the file: only a kernel may be called (runtime/module.h, "Kernels"). Each
      // name is resolved once per executor (the rule costs dlsym + dladdr + a segment walk); nodes
      // calling the same kernel share its handle.
      auto cached = kernels.find(node.func_name);
      if (cached == kernels.end()) {
        StatusOr<PackedFunc> f = lib_.GetKernel(node.func_name);
        if (!f.ok()) return std::move(f).status().Annotate(g.DescribeNode(nid));
        cached = kernels.emplace(node.func_name, std::move(*f)).first;
      }
      step.fn = cached->second.get()->c_function();
      step.func = cached->second;
    }
    steps_.push_back(std::move(step));
  }
  return Status::Ok();
}

namespace {}  // namespace

void GraphExecutor::PagesToWarm(std::vector<PageRange>* pages) const {
  for (size_t p = 0; p < pools_.size(); ++p) {
    const Tensor& pool = pools_[p];
    if (!pool.defined() || pool.device().device_type != kDLCPU) continue;
    pages->push_back(PageRange{pool.data(), plan_.pools[p].bytes, /*write=*/true});
  }
  for (uint32_t eid = 0; eid < entries_.size(); ++eid) {
    // Weights used in place (shared, on the CPU): the first run would fault them in.
    if (!bound_param_[eid] || !shared_[eid] || !entries_[eid].defined()) continue;
    if (entries_[eid].device().device_type != kDLCPU) continue;
    pages->push_back(PageRange{static_cast<uint8_t*>(entries_[eid].data()) + entries_[eid].dl()->byte_offset,
                               entries_[eid].nbytes(), /*write=*/false});
  }
}

Status GraphExecutor::DoRun() {
  TVMValue* values = arg_values_.data();
  int* codes = arg_codes_.data();
  for (const Step& s : steps_) {
    if (s.fn != nullptr) {
      TVMValue rv;
      int rcode;
      int rc = s.fn(values + s.first_arg, codes + s.first_arg, static_cast<int>(s.num_args), &rv, &rcode, nullptr);
      if (rc != 0) return KernelError(s.func.name(), rc).Annotate(graph_->DescribeNode(s.node_id));
    } else if (s.kind == Step::kCall) {
      Status st = s.func.CallPacked(PackedArgs(values + s.first_arg, codes + s.first_arg, static_cast<int>(s.num_args)),
                                    nullptr);
      if (!st.ok()) return std::move(st).Annotate(graph_->DescribeNode(s.node_id));
    } else {
      Status st = CopyTensor(arg_tensors_[s.first_arg], arg_tensors_[s.first_arg + 1]);
      if (!st.ok()) return std::move(st).Annotate(graph_->DescribeNode(s.node_id));
    }
  }
  const uint64_t ws = WorkspacePool::ThreadLocal().reserved_bytes();
  if (ws > cpu_workspace_bytes_.load(std::memory_order_relaxed))
    cpu_workspace_bytes_.store(ws, std::memory_order_relaxed);
  return Status::Ok();
}

MemoryPlan GraphExecutor::memory_plan() const {
  MemoryPlan plan = plan_;  // immutable after Create
  const uint64_t ws = cpu_workspace_bytes_.load(std::memory_order_relaxed);
  for (DeviceMemory& d : plan.devices) {
    if (d.device.device_type == kDLCPU) d.workspace_bytes = ws;
  }
  return plan;
}

std::vector<DeviceMemory> GraphExecutor::DescribeMemory() const { return memory_plan().devices; }

Status GraphExecutor::RunStep(const Step& s) {
  Status st;
  if (s.kind == Step::kCopy) {
    st = CopyTensor(arg_tensors_[s.first_arg], arg_tensors_[s.first_arg + 1]);
  } else {
    st = s.func.CallPacked(
        PackedArgs(arg_values_.data() + s.first_arg, arg_codes_.data() + s.first_arg, static_cast<int>(s.num_args)),
        nullptr);
  }
  if (!st.ok()) return std::move(st).Annotate(graph_->DescribeNode(s.node_id));
  return Status::Ok();
}

Status GraphExecutor::TimeSteps(KernelTimer& timer, int repeat) {
  for (const Step& s : steps_) {
    const GraphNode& node = graph_->nodes[s.node_id];
    for (int r = 0; r < repeat; ++r) {
      SORUN_RETURN_IF_ERROR(timer.Time(s.node_id, node.name, node.func_name, [&] { return RunStep(s); }));
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<NodeProfile>> GraphExecutor::DoProfile(int repeat) {
  SORUN_RETURN_IF_ERROR(DoRun());  // every operator's inputs hold a run's values
  KernelTimer timer(devices(), /*record_events=*/false);
  SORUN_RETURN_IF_ERROR(TimeSteps(timer, repeat));
  return timer.Profile();
}

StatusOr<std::vector<KernelEvent>> GraphExecutor::DoTrace() {
  KernelTimer timer(devices(), /*record_events=*/true);
  SORUN_RETURN_IF_ERROR(TimeSteps(timer, 1));
  return timer.Events();
}

Status GraphExecutor::CheckBinding(uint32_t eid, const DLTensor& v, const char* what) const {
  SORUN_RETURN_IF_ERROR(CheckDLTensorFields(v, what));
  const GraphSpec& g = *graph_;
  const auto& shape = g.shape[eid];
  bool same_shape =
      v.ndim == static_cast<int>(shape.size()) && (v.ndim == 0 || std::equal(shape.begin(), shape.end(), v.shape));
  // Kernels keep seeing the graph's dtype (entries and kernel arguments carry it).
  if (!DTypeAccepts(g.dltype[eid], v.dtype) || !same_shape) {
    return InvalidArgument(std::string(what) + ": expected " + DTypeToString(g.dltype[eid]) +
                           ShapeToString(shape.data(), static_cast<int>(shape.size())) + ", got " +
                           DTypeToString(v.dtype) + ShapeToString(v.shape, v.ndim));
  }
  return Status::Ok();
}

Status GraphExecutor::CheckEntryZeroCopyTarget(uint32_t eid, const DLTensor& v, const std::string& what) const {
  SORUN_RETURN_IF_ERROR(CheckZeroCopyTarget(v, plan_.entry_device[eid], what));
  const std::string& texture_scope = plan_.pools[static_cast<size_t>(plan_.entry_pool[eid])].texture_scope;
  if (!texture_scope.empty()) {
    return InvalidArgument(what + ": the graph keeps this entry in texture memory ('" + texture_scope +
                           "'); kernels read it as an image, so it takes a copy (SetInput / CopyOutputTo)");
  }
  return Status::Ok();
}

Status GraphExecutor::DoSetInput(int index, const DLTensor& value) {
  uint32_t eid = input_entries_[static_cast<size_t>(index)];
  const std::string what = "set_input '" + graph_->nodes[graph_->arg_nodes[static_cast<size_t>(index)]].name + "'";
  SORUN_RETURN_IF_ERROR(CheckBinding(eid, value, what.c_str()));
  if (shared_[eid]) SORUN_RETURN_IF_ERROR(MakePrivate(eid));
  return CopyTensor(value, *entries_[eid].dl()).Annotate(what);
}

Status GraphExecutor::MakePrivate(uint32_t eid) {
  const GraphSpec& g = *graph_;
  const DLDevice device = plan_.entry_device[eid];
  uint64_t bytes = 0;
  for (uint32_t m : alias_members_[alias_root_[eid]]) bytes = std::max(bytes, g.EntryBytes(m));
  SORUN_ASSIGN_OR_RETURN(Tensor storage, Tensor::Empty({static_cast<int64_t>(bytes)}, UInt8(), device));
  // Keep the current content (the shared weight) so a partial overwrite is still correct.
  DLTensor src = *entries_[eid].dl();
  DLTensor dst = *storage.dl();
  dst.ndim = src.ndim;
  dst.shape = src.shape;
  dst.dtype = src.dtype;
  SORUN_RETURN_IF_ERROR(CopyTensor(src, dst));
  Rebind(eid, storage.data(), 0, storage.node());
  for (uint32_t m : alias_members_[alias_root_[eid]]) shared_[m] = 0;
  return Status::Ok();
}

void GraphExecutor::Rebind(uint32_t eid, void* data, uint64_t byte_offset, ObjectPtr<Object> owner) {
  const GraphSpec& g = *graph_;
  for (uint32_t m : alias_members_[alias_root_[eid]]) {
    for (DLTensor* a : entry_args_[m]) {
      a->data = data;
      a->byte_offset = byte_offset;
    }
    auto t = Tensor::Wrap(data, g.EntryBytes(m) + byte_offset, g.shape[m], g.dltype[m], plan_.entry_device[m], owner);
    if (t.ok()) {
      t->dl()->byte_offset = byte_offset;
      entries_[m] = *t;
    }
  }
}

Status GraphExecutor::DoSetInputZeroCopy(int index, const DLTensor& value, ObjectPtr<Object> owner) {
  uint32_t eid = input_entries_[static_cast<size_t>(index)];
  const std::string what =
      "set_input_zero_copy '" + graph_->nodes[graph_->arg_nodes[static_cast<size_t>(index)]].name + "'";
  SORUN_RETURN_IF_ERROR(CheckBinding(eid, value, what.c_str()));
  SORUN_RETURN_IF_ERROR(CheckEntryZeroCopyTarget(eid, value, what));
  Rebind(eid, value.data, value.byte_offset, std::move(owner));
  for (uint32_t m : alias_members_[alias_root_[eid]]) shared_[m] = 1;  // not ours: never written by set_input
  return Status::Ok();
}

Status GraphExecutor::DoSetOutputZeroCopy(int index, const DLTensor& value, ObjectPtr<Object> owner) {
  uint32_t eid = output_entries_[static_cast<size_t>(index)];
  const std::string what = "set_output_zero_copy " + std::to_string(index);
  SORUN_RETURN_IF_ERROR(CheckBinding(eid, value, what.c_str()));
  SORUN_RETURN_IF_ERROR(CheckEntryZeroCopyTarget(eid, value, what));
  if (bound_param_[eid]) return InvalidArgument(what + ": the output is a bound parameter");
  Rebind(eid, value.data, value.byte_offset, std::move(owner));
  return Status::Ok();
}

StatusOr<Tensor> GraphExecutor::DoGetInput(int index) const {
  return entries_[input_entries_[static_cast<size_t>(index)]];
}

StatusOr<Tensor> GraphExecutor::DoGetOutput(int index) const {
  return entries_[output_entries_[static_cast<size_t>(index)]];
}

namespace {

// The params bytes given to load_params / share_params (`fn`), read whole and checked against `graph`
// (named `graph_name`) before anything is written. Every error names the call and the offset in the
// bytes, as a params file's name its path: "load_params: params byte 96: param 'w' ...".
StatusOr<NamedTensors> ReadParamsBytes(std::string_view bytes, const std::string& fn, const GraphSpec& graph,
                                       const std::string& graph_name, const GraphSpec* other_graph = nullptr,
                                       const std::string& other_graph_name = {}) {
  const std::string source = fn + ": params";
  BinaryReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), source);
  std::vector<uint64_t> offsets;
  SORUN_ASSIGN_OR_RETURN(NamedTensors params, ReadParamsDict(reader, /*allow_zero_copy=*/false, &offsets));
  if (!reader.at_end()) return reader.Error(std::to_string(reader.remaining()) + " trailing bytes after the params");
  SORUN_RETURN_IF_ERROR(
      CheckParamsAgainstGraph(graph, params, ParamsOutsideGraph::kRefused, source, graph_name, offsets));
  if (other_graph != nullptr) {
    SORUN_RETURN_IF_ERROR(
        CheckParamsAgainstGraph(*other_graph, params, ParamsOutsideGraph::kRefused, source, other_graph_name, offsets));
  }
  return params;
}

}  // namespace

Status GraphExecutor::DoLoadParams(std::string_view params_bytes) {
  SORUN_ASSIGN_OR_RETURN(NamedTensors params, ReadParamsBytes(params_bytes, "load_params", *graph_, "this graph"));
  std::vector<int> indices;
  for (const auto& kv : params) indices.push_back(*GetInputIndex(kv.first));  // found: checked
  for (size_t i = 0; i < params.size(); ++i) {
    SORUN_RETURN_IF_ERROR(DoSetInput(indices[i], *params[i].second.dl()));
    loaded_param_[static_cast<size_t>(indices[i])].store(true, std::memory_order_relaxed);
  }
  return Status::Ok();
}

Status GraphExecutor::DoShareParams(const ModelExecutor& other_executor, std::string_view params_bytes) {
  // The base checked the kind: `other_executor` is a GraphExecutor, held by its own busy guard.
  const auto& other = static_cast<const GraphExecutor&>(other_executor);
  // Every param is an input of both graphs, with the same dtype and shape in each.
  SORUN_ASSIGN_OR_RETURN(NamedTensors params, ReadParamsBytes(params_bytes, "share_params", *graph_, "this graph",
                                                              other.graph_.get(), "the other executor's graph"));
  for (const auto& kv : params) {  // every name is found: checked above
    uint32_t eid = input_entries_[static_cast<size_t>(*GetInputIndex(kv.first))];
    const Tensor& src = other.entries_[other.input_entries_[static_cast<size_t>(*other.GetInputIndex(kv.first))]];
    if (src.device() != plan_.entry_device[eid]) {
      return InvalidArgument("share_params '" + kv.first + "': the other executor holds it on " +
                             DeviceToString(src.device()));
    }
    Rebind(eid, src.data(), src.dl()->byte_offset, src.node());
    for (uint32_t m : alias_members_[alias_root_[eid]]) shared_[m] = 1;
  }
  return Status::Ok();
}

std::vector<TensorInfo> DescribeGraphInputs(const GraphSpec& graph, const SharedWeights* weights) {
  std::vector<TensorInfo> out;
  out.reserve(graph.arg_nodes.size());
  for (uint32_t nid : graph.arg_nodes) {
    const std::string& name = graph.nodes[nid].name;
    const uint32_t eid = graph.entry_id(nid, 0);
    out.push_back(
        TensorInfo{name, graph.shape[eid], graph.dltype[eid], weights != nullptr && weights->Find(name) != nullptr});
  }
  return out;
}

std::vector<TensorInfo> DescribeGraphOutputs(const GraphSpec& graph) {
  std::vector<TensorInfo> out;
  out.reserve(graph.heads.size());
  for (const GraphEntryRef& h : graph.heads) {
    const uint32_t eid = graph.entry_id(h);
    // The node's name for its output 0, "name:<index>" for the others (a topk node's values and indices):
    // the keys GetOutputIndex finds, unique per entry (plan validation checks it).
    const std::string& node = graph.nodes[h.node_id].name;
    out.push_back(TensorInfo{h.index == 0 ? node : node + ":" + std::to_string(h.index), graph.shape[eid],
                             graph.dltype[eid], false});
  }
  return out;
}

std::vector<TensorInfo> GraphExecutor::InputInfo(bool include_params) const {
  // is_param is the executor's binding rule (SetupStorage binds exactly the inputs the weights name).
  std::vector<TensorInfo> all = DescribeGraphInputs(*graph_, weights_.get());
  if (include_params) return all;
  std::vector<TensorInfo> out;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].is_param || loaded_param_[i].load(std::memory_order_relaxed)) continue;
    out.push_back(std::move(all[i]));
  }
  return out;
}

std::vector<TensorInfo> GraphExecutor::OutputInfo() const { return DescribeGraphOutputs(*graph_); }

std::string GraphExecutor::CaptureRefusal() const {
  for (const Step& step : steps_) {
    for (uint32_t a = step.first_arg; a < step.first_arg + step.num_args; ++a) {
      if (arg_tensors_[a].device.device_type != kDLCPU) continue;
      const GraphNode& node = graph_->nodes[step.node_id];
      return "node " + std::to_string(step.node_id) + " '" + node.name + "' (" + node.func_name +
             ") works on host memory (a CPU kernel or a copy to or from the host), which a device graph cannot replay";
    }
  }
  return std::string();
}

}  // namespace sorun
