#include "relax/vm_executor.h"

#include <cstring>
#include <utility>

#include "executor/kernel_timer.h"
#include "runtime/data_type.h"
#include "runtime/device_api.h"
#include "runtime/last_error.h"

namespace sorun {
namespace relax {

namespace {

const VmValue& NullValue() {
  static const VmValue* v = new VmValue();
  return *v;
}

}  // namespace

VmExecutor::~VmExecutor() = default;

StatusOr<std::unique_ptr<VmExecutor>> VmExecutor::Create(ObjectPtr<VmProgram> program, std::vector<DLDevice> devices,
                                                         std::shared_ptr<ThreadPool> thread_pool) {
  if (!program) return InvalidArgument("VmExecutor::Create: no program");
  if (devices.empty()) devices.push_back(DLDevice{kDLCPU, 0});
  for (const DLDevice& d : devices) SORUN_RETURN_IF_ERROR(CheckDeviceExists(d));
  Setup setup;
  setup.kind = ExecutorKind::kRelaxVm;
  setup.signature = program->signature();
  setup.devices = devices;
  setup.thread_pool = std::move(thread_pool);
  setup.capabilities = program->capabilities();
  std::unique_ptr<VmExecutor> e(new VmExecutor(std::move(setup)));
  e->program_ = std::move(program);
  e->devices_ = std::move(devices);
  if (e->devices_.back().device_type != kDLCPU) e->devices_.push_back(DLDevice{kDLCPU, 0});
  const VmExecutable& exec = e->program_->exec();
  e->sites_.resize(exec.instructions.size());
  e->inputs_.resize(static_cast<size_t>(exec.functions[static_cast<size_t>(e->program_->main_function())].num_args));
  e->owned_input_.assign(e->inputs_.size(), false);
  // Tensor constants live on devices[0] (TVM moves them there at init): on another device than the
  // CPU, the program's one copy there, shared by all its executors (uploaded by the first).
  if (e->devices_[0].device_type != kDLCPU) {
    SORUN_ASSIGN_OR_RETURN(e->device_constants_, e->program_->ConstantsOn(e->devices_[0]));
  }
  SORUN_RETURN_IF_ERROR(e->OpenStreams());
  return e;
}

Status VmExecutor::CheckInput(int index, const DLTensor& value) const {
  const TensorInfo& info = program_->inputs()[static_cast<size_t>(index)];
  const std::string what = "input '" + info.name + "'";
  SORUN_RETURN_IF_ERROR(CheckDLTensorFields(value, what));
  if (!IsCompact(value)) return InvalidArgument(what + ": strided tensors are not supported");
  const bool dtype_ok = !program_->input_dtype_known(index) || DTypeAccepts(info.dtype, value.dtype);
  // A parameter main never checks (params-as-inputs weights) has no dtype or shape to compare.
  const bool checked = !info.shape.empty() || program_->input_dtype_known(index);
  if (!checked) return Status::Ok();
  if (program_->input_is_scalar(index) && (value.ndim != 0 || !dtype_ok)) {
    return InvalidArgument(what + " is an R.Prim scalar: expected a 0-d tensor of " + DTypeToString(info.dtype) +
                           ", got " + DescribeDLTensor(value));
  }
  // The rank main checks (a 0-d tensor's shape is empty too), else that of the static dims, if any.
  const int64_t ndim = program_->input_ndim(index);
  bool shape_ok =
      ndim >= 0 ? value.ndim == ndim : info.shape.empty() || static_cast<size_t>(value.ndim) == info.shape.size();
  for (size_t d = 0; shape_ok && d < info.shape.size(); ++d) {
    if (info.shape[d] >= 0 && value.shape[d] != info.shape[d]) shape_ok = false;
  }
  if (!dtype_ok || !shape_ok) {
    return InvalidArgument(what + ": expected " + DTypeToString(info.dtype) + SignatureShapeToString(info.shape) +
                           ", got " + DescribeDLTensor(value));
  }
  return Status::Ok();
}

DLDataType VmExecutor::ModelDType(int index, DLDataType given) const {
  return program_->input_dtype_known(index) ? program_->input_model_dtype(index) : given;
}

StatusOr<Tensor> VmExecutor::AsApiTensor(const Tensor& t) const {
  const DLDataType api = ApiDType(t.dtype(), program_->dtype_codes());
  if (api == t.dtype()) return t;
  return t.View(t.shape(), api);  // same bytes under sorun's spelling (a TVM 0.23+ bool)
}

Status VmExecutor::DoSetInput(int index, const DLTensor& value) { return CopyInput(index, value); }

Status VmExecutor::CopyInput(int index, const DLTensor& value) {
  SORUN_RETURN_IF_ERROR(CheckInput(index, value));
  const std::string what = "input '" + program_->inputs()[static_cast<size_t>(index)].name + "'";
  VmValue& slot = inputs_[static_cast<size_t>(index)];
  std::vector<int64_t> shape(value.shape, value.shape + value.ndim);
  const DLDataType dtype = ModelDType(index, value.dtype);
  // Reuse the executor's own tensor when it has this shape and dtype (no allocation per request).
  const bool reuse = owned_input_[static_cast<size_t>(index)] && slot.kind() == VmValueKind::kTensor &&
                     slot.tensor().shape() == shape && slot.tensor().dtype() == dtype;
  if (reuse) return slot.tensor().CopyFrom(value).Annotate(what);
  // A scalar's value is read on the host when main is called. The new tensor becomes the input only
  // once the copy succeeded: a failed SetInput leaves the input as it was (unset stays unset).
  auto t = Tensor::Empty(shape, dtype, program_->input_is_scalar(index) ? CpuDevice() : devices_[0]);
  if (!t.ok()) return std::move(t).status().Annotate(what);
  SORUN_RETURN_IF_ERROR_CTX(t->CopyFrom(value), what);
  slot = VmValue::FromTensor(*t);
  owned_input_[static_cast<size_t>(index)] = true;
  return Status::Ok();
}

Status VmExecutor::DoSetInputZeroCopy(int index, const DLTensor& value, ObjectPtr<Object> owner) {
  SORUN_RETURN_IF_ERROR(CheckInput(index, value));
  if (program_->input_is_scalar(index)) return CopyInput(index, value);  // a value, read at Run: nothing to share
  const std::string what = "input '" + program_->inputs()[static_cast<size_t>(index)].name + "'";
  SORUN_RETURN_IF_ERROR(CheckZeroCopyTarget(value, devices_[0], what));
  void* data = static_cast<uint8_t*>(value.data) + value.byte_offset;
  std::vector<int64_t> shape(value.shape, value.shape + value.ndim);
  SORUN_ASSIGN_OR_RETURN(uint64_t nbytes, ShapeByteSize(value.shape, value.ndim, value.dtype));
  SORUN_ASSIGN_OR_RETURN(
      Tensor t, Tensor::Wrap(data, nbytes, shape, ModelDType(index, value.dtype), value.device, std::move(owner)));
  inputs_[static_cast<size_t>(index)] = VmValue::FromTensor(t);
  owned_input_[static_cast<size_t>(index)] = false;
  return Status::Ok();
}

std::string VmExecutor::MissingCapabilityReason(std::string_view capability) const {
  if (capability == "output_zero_copy") {
    return "a Relax VM model writes its outputs into memory its bytecode allocates; copy them with CopyOutputTo";
  }
  return "a Relax VM export keeps its weights as constants of the executable (params-as-inputs models take them as "
         "inputs: SetInput)";
}

StatusOr<Tensor> VmExecutor::DoGetInput(int index) const {
  const VmValue& v = inputs_[static_cast<size_t>(index)];
  if (v.kind() != VmValueKind::kTensor) {
    return FailedPrecondition("input '" + program_->inputs()[static_cast<size_t>(index)].name + "' is not set");
  }
  return AsApiTensor(v.tensor());
}

StatusOr<Tensor> VmExecutor::DoGetOutput(int index) const {
  if (outputs_.empty()) return FailedPrecondition("no outputs yet: Run the executor first");
  if (index >= static_cast<int>(outputs_.size())) {  // the base checked num_outputs(), the last run's count
    return OutOfRange("output index " + std::to_string(index) + " out of range (the last run gave " +
                      std::to_string(outputs_.size()) + " outputs)");
  }
  return outputs_[static_cast<size_t>(index)];
}

Status VmExecutor::DoRun() { return RunMain(); }

Status VmExecutor::RunMain() {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i].kind() != VmValueKind::kTensor) {
      return FailedPrecondition("input '" + program_->inputs()[i].name + "' is not set");
    }
  }
  for (auto& site : sites_) {
    if (site) site->used = 0;
  }
  instructions_left_ = kMaxInstructionsPerRun;
  outputs_.clear();
  const VmValue* args = inputs_.data();
  if (program_->has_scalar_inputs()) {  // R.Prim parameters take the values of their 0-d tensors
    main_args_.assign(inputs_.begin(), inputs_.end());
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (!program_->input_is_scalar(static_cast<int>(i))) continue;
      auto v = ScalarValue(inputs_[i].tensor());
      if (!v.ok()) return std::move(v).status().Annotate("input '" + program_->inputs()[i].name + "'");
      main_args_[i] = *std::move(v);
    }
    args = main_args_.data();
  }
  SORUN_ASSIGN_OR_RETURN(VmValue ret, Invoke(program_->main_function(), args, static_cast<int>(inputs_.size()), 0));
  Status s = FlattenOutputs(ret, 0);
  for (size_t i = 0; s.ok() && i < outputs_.size(); ++i) {
    auto api = AsApiTensor(outputs_[i]);
    if (api.ok())
      outputs_[i] = *std::move(api);
    else
      s = std::move(api).status();
  }
  if (!s.ok()) {
    outputs_.clear();
    return s;
  }
  set_num_outputs(static_cast<int>(outputs_.size()));
  return Status::Ok();
}

StatusOr<VmValue> VmExecutor::ScalarValue(const Tensor& t) {
  const DLDataType d = t.dtype();
  const uint8_t* p = t.data_as<const uint8_t>();
  if (t.device().device_type != kDLCPU || t.ndim() != 0 || d.lanes != 1) {
    return InvalidArgument("an R.Prim scalar needs a 0-d host tensor, got " + t.Describe());
  }
  if (IsBoolDType(d)) return VmValue::Int(*p != 0 ? 1 : 0);
  auto load = [p](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  if (d.code == kDLInt) {
    switch (d.bits) {
      case 8: return VmValue::Int(load(int8_t{}));
      case 16: return VmValue::Int(load(int16_t{}));
      case 32: return VmValue::Int(load(int32_t{}));
      case 64: return VmValue::Int(load(int64_t{}));
      default: break;
    }
  }
  if (d.code == kDLUInt) {
    switch (d.bits) {
      case 8: return VmValue::Int(load(uint8_t{}));
      case 16: return VmValue::Int(load(uint16_t{}));
      case 32: return VmValue::Int(load(uint32_t{}));
      case 64: {
        const uint64_t v = load(uint64_t{});
        if (v > static_cast<uint64_t>(INT64_MAX)) {
          return OutOfRange("the R.Prim scalar " + std::to_string(v) + " does not fit the VM's int64");
        }
        return VmValue::Int(static_cast<int64_t>(v));
      }
      default: break;
    }
  }
  if (d.code == kDLFloat && d.bits == 32) return VmValue::Float(load(float{}));
  if (d.code == kDLFloat && d.bits == 64) return VmValue::Float(load(double{}));
  return Unimplemented("an R.Prim scalar of dtype " + DTypeToString(d) +
                       " (sorun passes int, uint, bool, float32 and "
                       "float64 scalars)");
}

Status VmExecutor::FlattenOutputs(const VmValue& v, int depth) {
  if (depth > kMaxCallDepth)
    return Unimplemented("main returns tuples nested deeper than " + std::to_string(kMaxCallDepth));
  if (v.kind() == VmValueKind::kTensor) {
    outputs_.push_back(v.tensor());
    return Status::Ok();
  }
  if (v.kind() == VmValueKind::kTuple) {
    for (const VmValue& f : v.tuple()->fields) SORUN_RETURN_IF_ERROR(FlattenOutputs(f, depth + 1));
    return Status::Ok();
  }
  return Unimplemented("main returned a " + DescribeVmValue(v) + " as output " + std::to_string(outputs_.size()) +
                       "; sorun returns tensors (and tuples of them)");
}

const VmValue& VmExecutor::Constant(int64_t index) const {
  const auto& pool = device_constants_.empty() ? program_->constants() : device_constants_;
  return pool[static_cast<size_t>(index)];
}

VmValue VmExecutor::ArgValue(const VmArg& arg, const Frame& frame) const {
  switch (arg.kind) {
    case VmArgKind::kRegister:
      if (arg.value == kVoidRegister) return VmValue();
      if (arg.value == kVmContextRegister) return VmValue::Context();
      return frame.regs[static_cast<size_t>(arg.value)];
    case VmArgKind::kImmediate: return VmValue::Int(arg.value);
    case VmArgKind::kConstIdx: return Constant(arg.value);
    case VmArgKind::kFuncIdx: return VmValue::Function(arg.value);
  }
  return VmValue();
}

VmExecutor::SiteCache& VmExecutor::Site(int64_t pc) {
  auto& site = sites_[static_cast<size_t>(pc)];
  if (!site) site = std::make_unique<SiteCache>();
  return *site;
}

StatusOr<VmValue> VmExecutor::Invoke(int function, const VmValue* args, int num_args, int depth) {
  const VmExecutable& exec = program_->exec();
  const VmFunction& fn = exec.functions[static_cast<size_t>(function)];
  if (depth >= kMaxCallDepth) {
    return ResourceExhausted("VM call depth exceeds " + std::to_string(kMaxCallDepth) + " (calling '" + fn.name + "')");
  }
  if (num_args != fn.num_args) {
    return InvalidArgument("'" + fn.name + "' takes " + std::to_string(fn.num_args) + " arguments, got " +
                           std::to_string(num_args));
  }
  if (live_registers_ + fn.register_file_size > kMaxLiveRegisters) {
    return ResourceExhausted("calling '" + fn.name + "' would hold more than " + std::to_string(kMaxLiveRegisters) +
                             " VM registers in live frames");
  }
  if (frames_.size() <= static_cast<size_t>(depth)) frames_.push_back(std::make_unique<Frame>());
  Frame& frame = *frames_[static_cast<size_t>(depth)];
  frame.function = function;
  frame.regs.assign(static_cast<size_t>(fn.register_file_size), VmValue());
  // The frame's registers count as live until this call returns, whichever way.
  struct LiveRegisters {
    int64_t& live;
    Frame& frame;
    int64_t n;
    ~LiveRegisters() {
      live -= n;
      frame.regs.clear();                                            // drop this frame's references (storage, tensors)
      if (frame.regs.capacity() > 4096) frame.regs.shrink_to_fit();  // a huge frame gives its memory back
    }
  } live_guard{live_registers_, frame, fn.register_file_size};
  live_registers_ += fn.register_file_size;
  for (int i = 0; i < num_args; ++i) frame.regs[static_cast<size_t>(i)] = args[i];
  int64_t pc = fn.start_instr;
  while (true) {
    if (pc < fn.start_instr || pc >= fn.end_instr) {
      return Internal("'" + fn.name + "': control left the function at instruction " + std::to_string(pc));
    }
    if (--instructions_left_ < 0) {
      return ResourceExhausted("the run executed more than " + std::to_string(kMaxInstructionsPerRun) +
                               " VM instructions (in '" + fn.name + "')");
    }
    const VmInstruction& in = exec.instructions[static_cast<size_t>(pc)];
    switch (in.op) {
      case VmOpcode::kCall: {
        Status s = ExecCall(function, pc, frame, depth);
        if (!s.ok()) {
          return s.Annotate("'" + fn.name + "' instruction " + std::to_string(pc) + " (call " +
                            program_->callees()[static_cast<size_t>(in.func_index)].name + ")");
        }
        ++pc;
        break;
      }
      case VmOpcode::kRet: {
        VmValue ret = in.reg == kVoidRegister        ? VmValue()
                      : in.reg == kVmContextRegister ? VmValue::Context()
                                                     : frame.regs[static_cast<size_t>(in.reg)];
        return ret;
      }
      case VmOpcode::kGoto: pc += in.pc_offset; break;
      case VmOpcode::kIf: {
        const VmValue& cond = frame.regs[static_cast<size_t>(in.reg)];
        if (cond.kind() != VmValueKind::kInt) {
          return InvalidArgument("'" + fn.name + "' instruction " + std::to_string(pc) + ": if condition is a " +
                                 DescribeVmValue(cond) + ", not an int (vm.builtin.read_if_cond makes one)");
        }
        pc += cond.int_value() != 0 ? 1 : in.pc_offset;
        break;
      }
    }
  }
}

Status VmExecutor::ExecCall(int, int64_t pc, Frame& frame, int depth) {
  const VmInstruction& in = program_->exec().instructions[static_cast<size_t>(pc)];
  const VmCallee& callee = program_->callees()[static_cast<size_t>(in.func_index)];
  VmValue result;
  switch (callee.kind) {
    case VmCallee::Kind::kFfiKernel:
    case VmCallee::Kind::kLegacyKernel: {
      if (recording() && host_kernel_.empty()) NoteHostKernel(callee, in, frame);
      if (timer_ == nullptr) {
        SORUN_RETURN_IF_ERROR(CallKernel(callee, in, frame));
      } else {
        SORUN_RETURN_IF_ERROR(timer_->Time(static_cast<uint32_t>(pc), "instr_" + std::to_string(pc), callee.name,
                                           [&] { return CallKernel(callee, in, frame); }));
      }
      break;
    }
    case VmCallee::Kind::kBuiltin: {
      SORUN_ASSIGN_OR_RETURN(result, CallBuiltin(callee, in, pc, frame));
      break;
    }
    case VmCallee::Kind::kVmFunction: {
      std::vector<VmValue> args;
      args.reserve(in.args.size());
      for (const VmArg& a : in.args) args.push_back(ArgValue(a, frame));
      SORUN_ASSIGN_OR_RETURN(result, Invoke(callee.vm_function, args.data(), static_cast<int>(args.size()), depth + 1));
      break;
    }
  }
  if (in.dst != kVoidRegister && in.dst != kVmContextRegister)
    frame.regs[static_cast<size_t>(in.dst)] = std::move(result);
  return Status::Ok();
}

StatusOr<const VmValue*> VmExecutor::KernelArgument(const VmCallee& callee, const VmArg& a, size_t i,
                                                    const Frame& frame) const {
  const VmValue* v = &NullValue();
  if (a.kind == VmArgKind::kConstIdx) {
    v = &Constant(a.value);
  } else if (a.kind == VmArgKind::kRegister && a.value < kVoidRegister) {
    v = &frame.regs[static_cast<size_t>(a.value)];
  } else if (a.kind != VmArgKind::kRegister || a.value != kVoidRegister) {
    return InvalidArgument("kernel '" + callee.name + "' argument " + std::to_string(i) +
                           " is a function or the VM context (kernels take tensors and scalars)");
  }
  switch (v->kind()) {
    case VmValueKind::kInt:
    case VmValueKind::kFloat:
    case VmValueKind::kTensor:
    case VmValueKind::kDataType: return v;
    case VmValueKind::kNull:
      // TVM's kernels take a null handle for a tensor parameter and then read through it.
      return InvalidArgument("kernel '" + callee.name + "' argument " + std::to_string(i) +
                             " is null (a register never written, or null_value): kernels take tensors and scalars");
    default:
      return InvalidArgument("kernel '" + callee.name + "' argument " + std::to_string(i) + " is a " +
                             DescribeVmValue(*v) + " (kernels take tensors and scalars)");
  }
}

Status VmExecutor::CallKernel(const VmCallee& callee, const VmInstruction& in, Frame& frame) {
  const size_t n = in.args.size();
  if (callee.kind == VmCallee::Kind::kFfiKernel) {
    ffi_args_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const VmArg& a = in.args[i];
      TVMFFIAny& out = ffi_args_[i];
      if (a.kind == VmArgKind::kImmediate) {
        out = FfiInt(a.value);
        continue;
      }
      SORUN_ASSIGN_OR_RETURN(const VmValue* arg, KernelArgument(callee, a, i, frame));
      const VmValue& v = *arg;
      switch (v.kind()) {
        case VmValueKind::kInt: out = FfiInt(v.int_value()); break;
        case VmValueKind::kFloat: out = FfiFloat(v.float_value()); break;
        case VmValueKind::kTensor: out = FfiDLTensor(v.tensor_node()); break;
        case VmValueKind::kDataType:
          out = FfiNone();
          out.type_index = kTVMFFIDataType;
          out.v_dtype = v.dtype();
          break;
        default: return Internal("KernelArgument let a " + DescribeVmValue(v) + " through");
      }
    }
    return callee.ffi.Call(ffi_args_.data(), static_cast<int32_t>(n));
  }
  legacy_values_.resize(n);
  legacy_codes_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const VmArg& a = in.args[i];
    TVMValue& value = legacy_values_[i];
    int& code = legacy_codes_[i];
    if (a.kind == VmArgKind::kImmediate) {
      value.v_int64 = a.value;
      code = kTVMArgInt;
      continue;
    }
    SORUN_ASSIGN_OR_RETURN(const VmValue* arg, KernelArgument(callee, a, i, frame));
    const VmValue& v = *arg;
    switch (v.kind()) {
      case VmValueKind::kInt:
        value.v_int64 = v.int_value();
        code = kTVMArgInt;
        break;
      case VmValueKind::kFloat:
        value.v_float64 = v.float_value();
        code = kTVMArgFloat;
        break;
      case VmValueKind::kTensor:
        value.v_handle = static_cast<DLTensor*>(v.tensor_node());
        code = kTVMDLTensorHandle;
        break;
      case VmValueKind::kDataType:
        value.v_type = v.dtype();
        code = kTVMDataType;
        break;
      default: return Internal("KernelArgument let a " + DescribeVmValue(v) + " through");
    }
  }
  TVMValue ret;
  ret.v_handle = nullptr;
  int ret_code = kTVMNullptr;
  const int rc =
      callee.legacy(legacy_values_.data(), legacy_codes_.data(), static_cast<int>(n), &ret, &ret_code, nullptr);
  if (rc != 0) return KernelError(callee.name, rc);
  return Status::Ok();
}

void VmExecutor::PagesToWarm(std::vector<PageRange>* pages) const {
  // The constants used in place from the mapped library (the first run would fault them in).
  for (const VmValue& v : program_->constants()) {
    if (v.kind() != VmValueKind::kTensor || !v.tensor_node()->read_only) continue;
    pages->push_back(PageRange{v.tensor().data(), v.tensor().nbytes(), /*write=*/false});
  }
}

StatusOr<std::vector<NodeProfile>> VmExecutor::DoProfile(int repeat) {
  KernelTimer timer(devices_, /*record_events=*/false);
  timer_ = &timer;
  Status s;
  for (int r = 0; r < repeat && s.ok(); ++r) s = RunMain();
  timer_ = nullptr;
  SORUN_RETURN_IF_ERROR(s);
  return timer.Profile();
}

StatusOr<std::vector<KernelEvent>> VmExecutor::DoTrace() {
  KernelTimer timer(devices_, /*record_events=*/true);
  timer_ = &timer;
  Status s = RunMain();
  timer_ = nullptr;
  SORUN_RETURN_IF_ERROR(s);
  return timer.Events();
}

std::vector<DeviceMemory> VmExecutor::DescribeMemory() const {
  std::vector<DeviceMemory> out;
  DeviceMemory m;
  m.device = devices_[0];
  // The tensor constants: in the program on the CPU, else the program's one copy on devices[0] (both
  // shared by every executor of the program, not this executor's).
  m.weight_bytes = program_->constant_bytes_in_place() + program_->constant_bytes_copied();
  m.activation_bytes = storage_bytes_.load(std::memory_order_relaxed);
  out.push_back(m);
  return out;
}

void VmExecutor::NoteHostKernel(const VmCallee& callee, const VmInstruction& in, const Frame& frame) {
  for (size_t i = 0; i < in.args.size(); ++i) {
    if (in.args[i].kind == VmArgKind::kImmediate) continue;
    auto v = KernelArgument(callee, in.args[i], i, frame);
    if (!v.ok() || (*v)->kind() != VmValueKind::kTensor || (*v)->tensor_node()->device.device_type != kDLCPU) continue;
    host_kernel_ = "kernel '" + callee.name + "' takes argument " + std::to_string(i) +
                   " in host memory (a host kernel, e.g. a shape function of a dynamic shape), which a device graph "
                   "cannot replay";
    return;
  }
}

std::string VmExecutor::RecordedRunRefusal() { return std::exchange(host_kernel_, std::string()); }

}  // namespace relax
}  // namespace sorun
