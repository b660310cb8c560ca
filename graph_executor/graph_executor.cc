#include "graph_executor/graph_executor.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <unordered_map>

#include "base/busy_guard.h"
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

namespace {
constexpr char kBusyRefusal[] =
    "graph executor is being used by another thread; an executor is single-threaded (create one per thread from "
    "the factory)";
}  // namespace

// Rejects concurrent use of this executor (it is single-threaded by contract).
#define SORUN_EXCLUSIVE()                     \
  BusyGuard busy_guard_(busy_, kBusyRefusal); \
  SORUN_RETURN_IF_ERROR(busy_guard_.status())

GraphExecutor::~GraphExecutor() = default;

StatusOr<std::unique_ptr<GraphExecutor>> GraphExecutor::Create(std::shared_ptr<const GraphSpec> graph,
                                                               Module kernel_lib, std::vector<DLDevice> devices,
                                                               ObjectPtr<SharedWeights> weights,
                                                               std::shared_ptr<ThreadPool> thread_pool) {
  if (!graph) return InvalidArgument("GraphExecutor::Create: null graph");
  if (!kernel_lib.defined()) return InvalidArgument("GraphExecutor::Create: null kernel library module");
  if (devices.empty()) return InvalidArgument("GraphExecutor::Create: no device given");
  for (const DLDevice& d : devices) SORUN_RETURN_IF_ERROR(CheckDeviceExists(d));
  std::unique_ptr<GraphExecutor> e(new GraphExecutor());
  e->graph_ = std::move(graph);
  e->lib_ = std::move(kernel_lib);
  e->devices_ = std::move(devices);
  e->weights_ = std::move(weights);
  e->thread_pool_ = std::move(thread_pool);
  SORUN_RETURN_IF_ERROR(e->Init());
  return e;
}

Status GraphExecutor::Init() {
  const GraphSpec& g = *graph_;
  const uint32_t n = g.num_entries();
  for (uint32_t nid : g.arg_nodes) {
    int index = static_cast<int>(input_entries_.size());
    input_entries_.push_back(g.entry_id(nid, 0));
    input_by_name_.emplace(g.nodes[nid].name, index);
  }
  loaded_param_.reset(new std::atomic<bool>[input_entries_.size()]());
  for (const GraphEntryRef& h : g.heads) {
    int index = static_cast<int>(output_entries_.size());
    output_entries_.push_back(g.entry_id(h));
    const std::string& name = g.nodes[h.node_id].name;
    output_by_name_.emplace(name + ":" + std::to_string(h.index), index);
    if (h.index == 0) output_by_name_.emplace(name, index);
  }
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
  if (!thread_pool_) ThreadPool::Global();
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
  SORUN_ASSIGN_OR_RETURN(plan_, PlanMemory(g, devices_, bound));

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

namespace {

// Maps the pages of [data, data + bytes) into the process without changing their contents:
// MADV_POPULATE_WRITE / _READ (Linux 5.14+) on the whole pages around the range (the same mapping:
// madvise works on pages, and populating never changes a byte). On older kernels each page inside the
// range is touched instead (a volatile read, and for `write` the same value written back: only bytes
// of the range itself, which the caller owns).
void PopulatePages(void* data, uint64_t bytes, bool write) {
  if (data == nullptr || bytes == 0) return;
#ifndef MADV_POPULATE_READ
  constexpr int MADV_POPULATE_READ = 22;  // Linux 5.14 uapi values; older headers lack them
  constexpr int MADV_POPULATE_WRITE = 23;
#endif
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = reinterpret_cast<uintptr_t>(data);
  const uintptr_t begin = first / page * page;
  const uintptr_t end = (first + static_cast<uintptr_t>(bytes) + page - 1) / page * page;
  if (madvise(reinterpret_cast<void*>(begin), end - begin, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) == 0) {
    return;
  }
  auto* p = static_cast<volatile uint8_t*>(data);
  for (uint64_t off = 0; off < bytes; off = (first + off) / page * page + page - first) {
    const uint8_t v = p[off];
    if (write) p[off] = v;
  }
}

}  // namespace

Status GraphExecutor::Warmup() {
  SORUN_EXCLUSIVE();
  ThreadPool::Scope pool_scope(thread_pool_.get());
  for (size_t p = 0; p < pools_.size(); ++p) {
    const Tensor& pool = pools_[p];
    if (!pool.defined() || pool.device().device_type != kDLCPU) continue;
    PopulatePages(pool.data(), plan_.pools[p].bytes, /*write=*/true);
  }
  for (uint32_t eid = 0; eid < entries_.size(); ++eid) {
    // Weights used in place (shared, on the CPU): the first run would fault them in.
    if (!bound_param_[eid] || !shared_[eid] || !entries_[eid].defined()) continue;
    if (entries_[eid].device().device_type != kDLCPU) continue;
    PopulatePages(static_cast<uint8_t*>(entries_[eid].data()) + entries_[eid].dl()->byte_offset, entries_[eid].nbytes(),
                  /*write=*/false);
  }
  return Status::Ok();
}

Status GraphExecutor::Run() {
  SORUN_EXCLUSIVE();
  ThreadPool::Scope pool_scope(thread_pool_.get());
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

StatusOr<std::vector<NodeProfile>> GraphExecutor::Profile(int repeat) {
  if (repeat < 1) return InvalidArgument("Profile: repeat must be at least 1");
  SORUN_RETURN_IF_ERROR(Run());
  SORUN_EXCLUSIVE();
  ThreadPool::Scope pool_scope(thread_pool_.get());
  std::vector<NodeProfile> out;
  for (const Step& s : steps_) {
    NodeProfile p;
    p.node_id = s.node_id;
    p.name = graph_->nodes[s.node_id].name;
    p.func_name = graph_->nodes[s.node_id].func_name;
    double total = 0, best = 1e300;
    for (int r = 0; r < repeat; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      Status st;
      if (s.kind == Step::kCopy) {
        st = CopyTensor(arg_tensors_[s.first_arg], arg_tensors_[s.first_arg + 1]);
      } else {
        st = s.func.CallPacked(
            PackedArgs(arg_values_.data() + s.first_arg, arg_codes_.data() + s.first_arg, static_cast<int>(s.num_args)),
            nullptr);
      }
      // Device work is asynchronous: wait for it so the time is the operator's.
      for (const DLDevice& d : devices_) {
        if (d.device_type != kDLCPU) {
          auto api = GetDeviceApi(d.device_type);
          if (api.ok()) (*api)->Sync(d, nullptr).IgnoreError();
        }
      }
      auto t1 = std::chrono::steady_clock::now();
      if (!st.ok()) return std::move(st).Annotate(graph_->DescribeNode(s.node_id));
      double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
      total += us;
      best = std::min(best, us);
    }
    p.mean_us = total / repeat;
    p.min_us = best;
    out.push_back(std::move(p));
  }
  return out;
}

Status GraphExecutor::CheckIndex(int index, int count, const char* what) const {
  if (index < 0 || index >= count) {
    return OutOfRange(std::string(what) + " index " + std::to_string(index) + " out of range (the graph has " +
                      std::to_string(count) + ")");
  }
  return Status::Ok();
}

StatusOr<int> GraphExecutor::GetInputIndex(std::string_view name) const {
  auto it = input_by_name_.find(std::string(name));
  if (it != input_by_name_.end()) return it->second;
  std::string names;
  for (size_t i = 0; i < input_entries_.size() && i < 16; ++i) {
    uint32_t nid = graph_->arg_nodes[i];
    if (bound_param_[input_entries_[i]]) continue;
    names += (names.empty() ? "" : ", ") + graph_->nodes[nid].name;
  }
  return NotFound("the graph has no input named '" + std::string(name) + "' (inputs: " + names + ")");
}

StatusOr<int> GraphExecutor::GetOutputIndex(std::string_view name) const {
  auto it = output_by_name_.find(std::string(name));
  if (it != output_by_name_.end()) return it->second;
  return NotFound("the graph has no output named '" + std::string(name) + "'");
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

Status GraphExecutor::CheckZeroCopyTarget(uint32_t eid, const DLTensor& v, const std::string& what) const {
  const DLDevice device = plan_.entry_device[eid];
  if (v.device != device) {
    return InvalidArgument(what + ": tensor is on " + DeviceToString(v.device) + " but the graph keeps it on " +
                           DeviceToString(device));
  }
  if (v.data == nullptr) return InvalidArgument(what + ": tensor has no data");
  if (!IsCompact(v)) return InvalidArgument(what + ": tensor is not compact");
  const std::string& texture_scope = plan_.pools[static_cast<size_t>(plan_.entry_pool[eid])].texture_scope;
  if (!texture_scope.empty()) {
    return InvalidArgument(what + ": the graph keeps this entry in texture memory ('" + texture_scope +
                           "'); kernels read it as an image, so it takes a copy (SetInput / CopyOutputTo)");
  }
  if (device.device_type == kDLCPU) {
    uintptr_t address = reinterpret_cast<uintptr_t>(v.data) + v.byte_offset;
    if (address % kAllocAlignment != 0) {
      return InvalidArgument(what + ": data address is not 64-byte aligned (kernels assume it)");
    }
  } else if (v.byte_offset != 0) {
    return InvalidArgument(what + ": device tensors must have byte_offset 0");
  }
  return Status::Ok();
}

Status GraphExecutor::SetInput(int index, const DLTensor& value) {
  SORUN_RETURN_IF_ERROR(CheckIndex(index, num_inputs(), "input"));
  SORUN_EXCLUSIVE();
  return SetInputLocked(index, value);
}

Status GraphExecutor::SetInputLocked(int index, const DLTensor& value) {
  uint32_t eid = input_entries_[static_cast<size_t>(index)];
  const std::string what = "set_input '" + graph_->nodes[graph_->arg_nodes[static_cast<size_t>(index)]].name + "'";
  SORUN_RETURN_IF_ERROR(CheckBinding(eid, value, what.c_str()));
  if (shared_[eid]) SORUN_RETURN_IF_ERROR(MakePrivate(eid));
  return CopyTensor(value, *entries_[eid].dl()).Annotate(what);
}

Status GraphExecutor::SetInput(std::string_view name, const DLTensor& value) {
  SORUN_ASSIGN_OR_RETURN(int index, GetInputIndex(name));
  return SetInput(index, value);
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

Status GraphExecutor::SetInputZeroCopy(int index, const DLTensor& value, ObjectPtr<Object> owner) {
  SORUN_RETURN_IF_ERROR(CheckIndex(index, num_inputs(), "input"));
  SORUN_EXCLUSIVE();
  uint32_t eid = input_entries_[static_cast<size_t>(index)];
  const std::string what =
      "set_input_zero_copy '" + graph_->nodes[graph_->arg_nodes[static_cast<size_t>(index)]].name + "'";
  SORUN_RETURN_IF_ERROR(CheckBinding(eid, value, what.c_str()));
  SORUN_RETURN_IF_ERROR(CheckZeroCopyTarget(eid, value, what));
  Rebind(eid, value.data, value.byte_offset, std::move(owner));
  for (uint32_t m : alias_members_[alias_root_[eid]]) shared_[m] = 1;  // not ours: never written by set_input
  return Status::Ok();
}

Status GraphExecutor::SetOutputZeroCopy(int index, const DLTensor& value, ObjectPtr<Object> owner) {
  SORUN_RETURN_IF_ERROR(CheckIndex(index, num_outputs(), "output"));
  SORUN_EXCLUSIVE();
  uint32_t eid = output_entries_[static_cast<size_t>(index)];
  const std::string what = "set_output_zero_copy " + std::to_string(index);
  SORUN_RETURN_IF_ERROR(CheckBinding(eid, value, what.c_str()));
  SORUN_RETURN_IF_ERROR(CheckZeroCopyTarget(eid, value, what));
  if (bound_param_[eid]) return InvalidArgument(what + ": the output is a bound parameter");
  Rebind(eid, value.data, value.byte_offset, std::move(owner));
  return Status::Ok();
}

StatusOr<Tensor> GraphExecutor::GetInput(int index) const {
  SORUN_RETURN_IF_ERROR(CheckIndex(index, num_inputs(), "input"));
  SORUN_EXCLUSIVE();
  return entries_[input_entries_[static_cast<size_t>(index)]];
}

StatusOr<Tensor> GraphExecutor::GetOutput(int index) const {
  SORUN_RETURN_IF_ERROR(CheckIndex(index, num_outputs(), "output"));
  SORUN_EXCLUSIVE();
  return entries_[output_entries_[static_cast<size_t>(index)]];
}

Status GraphExecutor::CopyOutputTo(int index, const DLTensor& out) const {
  SORUN_RETURN_IF_ERROR(CheckIndex(index, num_outputs(), "output"));
  SORUN_EXCLUSIVE();
  uint32_t eid = output_entries_[static_cast<size_t>(index)];
  const std::string what = "get_output " + std::to_string(index);
  SORUN_RETURN_IF_ERROR(CheckBinding(eid, out, what.c_str()));
  return CopyTensor(*entries_[eid].dl(), out).Annotate(what);
}

Status GraphExecutor::LoadParams(std::string_view params_bytes) {
  BinaryReader reader(reinterpret_cast<const uint8_t*>(params_bytes.data()), params_bytes.size(), "params");
  SORUN_ASSIGN_OR_RETURN(NamedTensors params, ReadParamsDict(reader, /*allow_zero_copy=*/false));
  if (!reader.at_end()) return reader.Error(std::to_string(reader.remaining()) + " trailing bytes after the params");
  SORUN_EXCLUSIVE();
  // Validate every name, dtype and shape before writing anything.
  SORUN_RETURN_IF_ERROR(
      CheckParamsAgainstGraph(*graph_, params, ParamsOutsideGraph::kRefused, "load_params", "this graph"));
  std::vector<int> indices;
  for (const auto& kv : params) indices.push_back(input_by_name_.find(kv.first)->second);  // found: checked
  for (size_t i = 0; i < params.size(); ++i) {
    SORUN_RETURN_IF_ERROR(SetInputLocked(indices[i], *params[i].second.dl()));
    loaded_param_[static_cast<size_t>(indices[i])].store(true, std::memory_order_relaxed);
  }
  return Status::Ok();
}

Status GraphExecutor::ShareParams(const GraphExecutor& other, std::string_view params_bytes) {
  BinaryReader reader(reinterpret_cast<const uint8_t*>(params_bytes.data()), params_bytes.size(), "params");
  SORUN_ASSIGN_OR_RETURN(NamedTensors params, ReadParamsDict(reader, /*allow_zero_copy=*/false));
  SORUN_EXCLUSIVE();
  // `other`'s tensors are read too: it must not be rebinding them meanwhile.
  if (&other == this) return InvalidArgument("share_params: an executor cannot share params with itself");
  BusyGuard other_guard(other.busy_, kBusyRefusal);
  SORUN_RETURN_IF_ERROR(other_guard.status());
  // Every param is an input of both graphs, with the same dtype and shape in each.
  SORUN_RETURN_IF_ERROR(
      CheckParamsAgainstGraph(*graph_, params, ParamsOutsideGraph::kRefused, "share_params", "this graph"));
  SORUN_RETURN_IF_ERROR(CheckParamsAgainstGraph(*other.graph_, params, ParamsOutsideGraph::kRefused, "share_params",
                                                "the other executor's graph"));
  for (const auto& kv : params) {  // every name is found: checked above
    uint32_t eid = input_entries_[static_cast<size_t>(input_by_name_.find(kv.first)->second)];
    const Tensor& src =
        other.entries_[other.input_entries_[static_cast<size_t>(other.input_by_name_.find(kv.first)->second)]];
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

}  // namespace sorun
