#include "executor/model_executor.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "base/busy_guard.h"
#include "base/mapped_pages.h"
#include "runtime/data_type.h"
#include "runtime/device_api.h"

namespace sorun {

namespace {
constexpr char kBusyRefusal[] =
    "the executor is being used by another thread; an executor is single-threaded (create one executor per thread "
    "from the model)";
}  // namespace

// The busy guard of one public call, and (once it holds) the executor's streams made current:
// `SORUN_RETURN_IF_ERROR(exclusive.status())` first.
class ModelExecutor::Exclusive {
 public:
  explicit Exclusive(const ModelExecutor& e) : guard_(e.busy_, kBusyRefusal) {
    if (guard_.status().ok()) streams_.emplace(e.streams_);
  }
  Status status() const { return guard_.status(); }

 private:
  BusyGuard guard_;
  std::optional<ExecutorStreams::Scope> streams_;
};

#define SORUN_EXECUTOR_EXCLUSIVE()  \
  Exclusive exclusive_call_(*this); \
  SORUN_RETURN_IF_ERROR(exclusive_call_.status())

ModelExecutor::ModelExecutor(Setup setup)
    : kind_(setup.kind),
      signature_(std::move(setup.signature)),
      devices_(std::move(setup.devices)),
      thread_pool_(std::move(setup.thread_pool)),
      capabilities_(setup.capabilities),
      num_outputs_(static_cast<int>(signature_->outputs().size())) {}

ModelExecutor::~ModelExecutor() = default;

Status ModelExecutor::OpenStreams() {
  SORUN_ASSIGN_OR_RETURN(streams_, ExecutorStreams::Create(devices_));
  return Status::Ok();
}

int ModelExecutor::num_threads() const {
  return thread_pool_ ? thread_pool_->num_threads() : ThreadPool::Global().num_threads();
}

Status ModelExecutor::Missing(std::string_view call, std::string_view capability) const {
  return Unimplemented(std::string(call) + ": the " + ExecutorKindName(kind_) + " does not offer " +
                       std::string(capability) + " (ExecutorCapabilities::" + std::string(capability) +
                       " is false): " + MissingCapabilityReason(capability));
}

std::string ModelExecutor::MissingCapabilityReason(std::string_view) const { return "not implemented by this kind"; }

Status ModelExecutor::CheckZeroCopyTarget(const DLTensor& value, DLDevice device, const std::string& what) {
  SORUN_RETURN_IF_ERROR(CheckDLTensorFields(value, what));
  if (value.device != device) {
    return InvalidArgument(what + ": zero-copy binding needs the tensor on " + DeviceToString(device) + ", it is on " +
                           DeviceToString(value.device));
  }
  if (value.data == nullptr) return InvalidArgument(what + ": the tensor has no data");
  if (!IsCompact(value)) return InvalidArgument(what + ": zero-copy binding needs a compact tensor");
  if (device.device_type == kDLCPU) {
    const uintptr_t address = reinterpret_cast<uintptr_t>(value.data) + value.byte_offset;
    if (address % kAllocAlignment != 0) {
      return InvalidArgument(what + ": data is not " + std::to_string(kAllocAlignment) +
                             "-byte aligned (TVM's kernels use aligned loads; zero-copy binding needs aligned data, "
                             "SetInput copies)");
    }
  } else if (value.byte_offset != 0) {
    return InvalidArgument(what + ": zero-copy binding needs byte_offset 0 for a device tensor");
  }
  return Status::Ok();
}

Status ModelExecutor::SetInput(int index, const DLTensor& value) {
  SORUN_RETURN_IF_ERROR(ModelSignature::CheckIndex(index, num_inputs(), "input"));
  SORUN_EXECUTOR_EXCLUSIVE();
  return DoSetInput(index, value);
}

Status ModelExecutor::SetInput(std::string_view name, const DLTensor& value) {
  SORUN_ASSIGN_OR_RETURN(int index, GetInputIndex(name));
  return SetInput(index, value);
}

Status ModelExecutor::SetInputZeroCopy(int index, const DLTensor& value, ObjectPtr<Object> owner) {
  SORUN_RETURN_IF_ERROR(ModelSignature::CheckIndex(index, num_inputs(), "input"));
  SORUN_EXECUTOR_EXCLUSIVE();
  return DoSetInputZeroCopy(index, value, std::move(owner));
}

Status ModelExecutor::SetInputZeroCopy(std::string_view name, const DLTensor& value, ObjectPtr<Object> owner) {
  SORUN_ASSIGN_OR_RETURN(int index, GetInputIndex(name));
  return SetInputZeroCopy(index, value, std::move(owner));
}

Status ModelExecutor::SetOutputZeroCopy(int index, const DLTensor& value, ObjectPtr<Object> owner) {
  if (!capabilities_.output_zero_copy) return Missing("SetOutputZeroCopy", "output_zero_copy");
  SORUN_RETURN_IF_ERROR(ModelSignature::CheckIndex(index, num_outputs(), "output"));
  SORUN_EXECUTOR_EXCLUSIVE();
  return DoSetOutputZeroCopy(index, value, std::move(owner));
}

Status ModelExecutor::DoSetOutputZeroCopy(int, const DLTensor&, ObjectPtr<Object>) {
  return Internal("SetOutputZeroCopy reached a kind without output_zero_copy");
}

StatusOr<Tensor> ModelExecutor::GetInput(int index) const {
  SORUN_RETURN_IF_ERROR(ModelSignature::CheckIndex(index, num_inputs(), "input"));
  SORUN_EXECUTOR_EXCLUSIVE();
  return DoGetInput(index);
}

StatusOr<Tensor> ModelExecutor::GetOutput(int index) const {
  SORUN_EXECUTOR_EXCLUSIVE();
  SORUN_RETURN_IF_ERROR(ModelSignature::CheckIndex(index, num_outputs(), "output"));
  return DoGetOutput(index);
}

Status ModelExecutor::CopyOutputTo(int index, const DLTensor& out) const {
  SORUN_EXECUTOR_EXCLUSIVE();
  SORUN_RETURN_IF_ERROR(ModelSignature::CheckIndex(index, num_outputs(), "output"));
  SORUN_ASSIGN_OR_RETURN(Tensor output, DoGetOutput(index));
  const std::string what = "CopyOutputTo output " + std::to_string(index);
  SORUN_RETURN_IF_ERROR(CheckDLTensorFields(out, what));
  const bool same_shape =
      out.ndim == output.ndim() && std::equal(output.shape().begin(), output.shape().end(), out.shape);
  if (!same_shape || !DTypeAccepts(output.dtype(), out.dtype)) {
    return InvalidArgument(what + ": the output is " + DTypeToString(output.dtype()) +
                           ShapeToString(output.shape().data(), output.ndim()) + ", the target is " +
                           DTypeToString(out.dtype) + ShapeToString(out.shape, out.ndim));
  }
  return CopyTensor(*output.dl(), out).Annotate(what);
}

StatusOr<TVMStreamHandle> ModelExecutor::GetStream(DLDevice device) const {
  SORUN_EXECUTOR_EXCLUSIVE();
  return streams_.Get(device);
}

Status ModelExecutor::SetStream(DLDevice device, TVMStreamHandle stream) {
  SORUN_EXECUTOR_EXCLUSIVE();
  SORUN_RETURN_IF_ERROR(streams_.Set(device, stream));  // waits for the previous stream first
  if (captured_runs_) captured_runs_->StreamsSynchronized();
  return Status::Ok();
}

Status ModelExecutor::Synchronize() {
  SORUN_EXECUTOR_EXCLUSIVE();
  SORUN_RETURN_IF_ERROR(streams_.Synchronize());
  if (captured_runs_) captured_runs_->StreamsSynchronized();
  return Status::Ok();
}

Status ModelExecutor::Run() {
  SORUN_EXECUTOR_EXCLUSIVE();
  ThreadPool::Scope pool_scope(thread_pool_.get());
  if (!captured_runs_) return DoRun();
  // The bindings a recorded run depends on: every input's and output's address, device and shape.
  std::vector<uint64_t> key;
  std::string key_refusal;
  auto add = [&](const StatusOr<Tensor>& t, const char* what, int index) {
    if (!t.ok() || !t->defined()) {
      key.push_back(~uint64_t{0});
      return;
    }
    const DLTensor& dl = *t->dl();
    key.push_back(reinterpret_cast<uintptr_t>(dl.data));
    key.push_back(dl.byte_offset);
    key.push_back((static_cast<uint64_t>(dl.device.device_type) << 32) | static_cast<uint32_t>(dl.device.device_id));
    for (int d = 0; d < dl.ndim; ++d) key.push_back(static_cast<uint64_t>(dl.shape[d]));
    if (key_refusal.empty() && dl.device.device_type == kDLCPU) {
      key_refusal = std::string(what) + " " + std::to_string(index) + " is in host memory, which the host reads " +
                    "each run (a replay would not)";
    }
  };
  for (int i = 0; i < num_inputs(); ++i) add(DoGetInput(i), "input", i);
  for (int i = 0; i < num_outputs(); ++i) add(DoGetOutput(i), "output", i);
  TVMStreamHandle stream = nullptr;  // none to record on when refused at creation (graph_device_ is the CPU)
  if (graph_device_.device_type != kDLCPU) {
    SORUN_ASSIGN_OR_RETURN(stream, streams_.Get(graph_device_));
  }
  return captured_runs_->Run(
      std::move(key), key_refusal, stream,
      [this](bool capturing) {
        recording_ = capturing;
        Status s = DoRun();
        recording_ = false;
        return s;
      },
      [this] { return RecordedRunRefusal(); });
}

Status ModelExecutor::EnableDeviceGraphs() {
  if (captured_runs_) return Status::Ok();
  std::string refusal;
  std::vector<DLDevice> accelerators;
  for (const DLDevice& d : devices_) {
    if (d.device_type == kDLCPU) continue;
    bool seen = false;
    for (const DLDevice& a : accelerators) seen = seen || a == d;
    if (!seen) accelerators.push_back(d);
  }
  if (accelerators.empty()) {
    refusal = "the executor runs on the CPU only (device graphs record the work of a CUDA device)";
  } else if (accelerators.size() > 1) {
    refusal = "the executor spans " + std::to_string(accelerators.size()) +
              " devices; a device graph records the work of one";
  } else {
    graph_device_ = accelerators[0];
    refusal = CaptureRefusal();
  }
  if (refusal.empty()) {
    // Streams independent of stream 0: other threads' stream-0 work must not join a capture.
    SORUN_ASSIGN_OR_RETURN(streams_, ExecutorStreams::Create(devices_, StreamOrder::kIndependent));
  }
  captured_runs_ = std::make_unique<CapturedRuns>(graph_device_, refusal);
  return Status::Ok();
}

StatusOr<DeviceGraphReport> ModelExecutor::GraphReport() const {
  SORUN_EXECUTOR_EXCLUSIVE();
  return captured_runs_ ? captured_runs_->report() : DeviceGraphReport{};
}

std::string ModelExecutor::CaptureRefusal() const { return std::string(); }

std::string ModelExecutor::RecordedRunRefusal() { return std::string(); }

Status ModelExecutor::Warmup() {
  SORUN_EXECUTOR_EXCLUSIVE();
  ThreadPool::Scope pool_scope(thread_pool_.get());
  std::vector<PageRange> pages;
  PagesToWarm(&pages);
  for (const PageRange& range : pages) PopulatePages(range.data, range.bytes, range.write);
  return Status::Ok();
}

StatusOr<std::vector<NodeProfile>> ModelExecutor::Profile(int repeat) {
  if (repeat < 1) return InvalidArgument("Profile: repeat must be at least 1, got " + std::to_string(repeat));
  SORUN_EXECUTOR_EXCLUSIVE();
  ThreadPool::Scope pool_scope(thread_pool_.get());
  return DoProfile(repeat);
}

StatusOr<std::vector<KernelEvent>> ModelExecutor::Trace() {
  SORUN_EXECUTOR_EXCLUSIVE();
  ThreadPool::Scope pool_scope(thread_pool_.get());
  return DoTrace();
}

Status ModelExecutor::LoadParams(std::string_view params_bytes) {
  if (!capabilities_.params_files) return Missing("LoadParams", "params_files");
  SORUN_EXECUTOR_EXCLUSIVE();
  return DoLoadParams(params_bytes);
}

Status ModelExecutor::ShareParams(const ModelExecutor& other, std::string_view params_bytes) {
  if (!capabilities_.params_files) return Missing("ShareParams", "params_files");
  if (&other == this) return InvalidArgument("ShareParams: an executor cannot share params with itself");
  if (other.kind_ != kind_) {
    return InvalidArgument(std::string("ShareParams: the other executor is a ") + ExecutorKindName(other.kind_) +
                           ", this one a " + ExecutorKindName(kind_));
  }
  SORUN_EXECUTOR_EXCLUSIVE();
  // `other`'s tensors are read too: it must not be rebinding them meanwhile.
  Exclusive other_exclusive(other);
  SORUN_RETURN_IF_ERROR(other_exclusive.status().Annotate("ShareParams: the other executor"));
  return DoShareParams(other, params_bytes);
}

Status ModelExecutor::DoLoadParams(std::string_view) {
  return Internal("LoadParams reached a kind without params_files");
}

Status ModelExecutor::DoShareParams(const ModelExecutor&, std::string_view) {
  return Internal("ShareParams reached a kind without params_files");
}

#undef SORUN_EXECUTOR_EXCLUSIVE

}  // namespace sorun
