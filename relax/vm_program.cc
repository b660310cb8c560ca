#include "relax/vm_program.h"

#include <cstring>
#include <utility>

#include "base/mapped_pages.h"
#include "relax/export_check.h"
#include "relax/vm_disassembler.h"
#include "relax/vm_executor.h"
#include "runtime/data_type.h"
#include "runtime/device_api.h"
#include "runtime/library_module.h"
#include "runtime/tensor.h"

namespace sorun {
namespace relax {
namespace {

// The most dimensions an input may be checked for (the tensor readers' bound, runtime/tensor_io.cc).
constexpr int64_t kMaxInputNdim = 64;

// The library module among `lib` and its imports (the `_lib` of the export).
LibraryModuleNode* AsLibrary(const Module& lib) { return ModuleNodeAs<LibraryModuleNode>(lib); }

}  // namespace

StatusOr<ObjectPtr<VmProgram>> VmProgram::Create(std::shared_ptr<const VmExecutable> exec, ObjectPtr<Object> keep_alive,
                                                 Module kernel_library, KernelAbi abi, std::string path) {
  if (exec == nullptr) return InvalidArgument("VmProgram::Create: no executable");
  ObjectPtr<VmProgram> p = ObjectPtr<VmProgram>::FromRaw(new VmProgram());
  p->exec_ = std::move(exec);
  p->keep_alive_ = std::move(keep_alive);
  p->kernel_library_ = std::move(kernel_library);
  p->abi_ = abi;
  p->path_ = std::move(path);
  p->main_ = p->exec_->FindFunction("main");
  if (p->main_ < 0 || p->exec_->functions[static_cast<size_t>(p->main_)].kind != VmFunctionKind::kVmFunc) {
    return NotFound(p->path_ + ": the Relax executable has no bytecode function 'main' (sorun runs main)");
  }
  SORUN_RETURN_IF_ERROR(p->ResolveCallees());
  SORUN_RETURN_IF_ERROR(p->CheckMemoryScopes());
  SORUN_RETURN_IF_ERROR(p->MakeConstants());
  SORUN_ASSIGN_OR_RETURN(std::vector<VmInputInfo> inputs, DescribeInputs(*p->exec_, "main"));
  for (const VmInputInfo& in : inputs) {
    TensorInfo info;
    info.name = in.name;
    if (in.has_dtype) info.dtype = ApiDType(in.dtype, p->exec_->dtype_codes);
    if (in.is_scalar) {
      p->has_scalar_inputs_ = true;  // shape stays [] (a 0-d tensor carries the value)
    } else if (!in.dims.empty()) {
      info.shape = in.dims;
    } else if (in.ndim > kMaxInputNdim) {
      // check_tensor_info's ndim is an immediate of the bytecode: bound it before it sizes anything.
      return DataLoss(p->path_ + ": main's parameter '" + in.name + "' is checked for " + std::to_string(in.ndim) +
                      " dimensions (sorun supports at most " + std::to_string(kMaxInputNdim) + ")");
    } else if (in.ndim > 0) {
      info.shape.assign(static_cast<size_t>(in.ndim), -1);
    }
    p->input_dtype_known_.push_back(in.has_dtype);
    p->input_model_dtypes_.push_back(in.has_dtype ? in.dtype : info.dtype);  // read before `info` moves
    p->input_is_scalar_.push_back(in.is_scalar);
    p->input_ndims_.push_back(in.is_scalar ? 0 : in.ndim);
    p->inputs_.push_back(std::move(info));
  }
  p->outputs_ = DescribeOutputs(*p->exec_, p->main_);
  for (TensorInfo& out : p->outputs_) out.dtype = ApiDType(out.dtype, p->exec_->dtype_codes);
  // Neither output zero-copy nor params files (VmExecutor::MissingCapabilityReason says why).
  p->Describe(ModelSignature::Make(p->inputs_, p->outputs_, /*outputs_known=*/!p->outputs_.empty()),
              ExecutorCapabilities{});
  return p;
}

StatusOr<std::unique_ptr<ModelExecutor>> VmProgram::NewExecutor(std::vector<DLDevice> devices,
                                                                std::shared_ptr<ThreadPool> thread_pool) const {
  auto e = VmExecutor::Create(ObjectPtr<VmProgram>::FromRaw(const_cast<VmProgram*>(this)), std::move(devices),
                              std::move(thread_pool));
  if (!e.ok()) return std::move(e).status().Annotate(path_);
  return std::unique_ptr<ModelExecutor>(std::move(*e));
}

Status VmProgram::ResolveCallees() {
  const VmExecutable& exec = *exec_;
  callees_.resize(exec.functions.size());
  for (size_t i = 0; i < exec.functions.size(); ++i) {
    const VmFunction& fn = exec.functions[i];
    VmCallee& c = callees_[i];
    c.name = fn.name;
    switch (fn.kind) {
      case VmFunctionKind::kVmFunc:
        c.kind = VmCallee::Kind::kVmFunction;
        c.vm_function = static_cast<int>(i);
        continue;
      case VmFunctionKind::kVmTirFunc:
        return Unimplemented(path_ + ": function '" + fn.name +
                             "' is compiled VM code (exec_mode=\"compiled\"); sorun runs bytecode exports "
                             "(exec_mode=\"bytecode\", the default)");
      case VmFunctionKind::kPackedFunc: break;
    }
    if (const BuiltinRow* builtin = FindBuiltin(fn.name)) {
      c.kind = VmCallee::Kind::kBuiltin;
      c.builtin = builtin->id;
      continue;
    }
    const std::string family = UnsupportedFamily(fn.name);
    if (!family.empty()) {
      return Unimplemented(path_ + ": the executable calls '" + fn.name + "' (" + family +
                           "), which sorun does not run");
    }
    if (!kernel_library_.defined()) {
      return FailedPrecondition(path_ + ": the executable calls kernel '" + fn.name +
                                "' but the export has no kernel library (_lib)");
    }
    // The library's own kernel rule: a dlopen'ed LibraryModuleNode or a system-lib SystemLibModuleNode.
    ModuleNode* lib = kernel_library_.node().get();
    if (abi_ == KernelAbi::kFfi) {
      auto k = lib->GetFfiKernel(fn.name, kernel_library_.node());
      if (!k.ok()) return std::move(k).status().Annotate(path_ + ": function table entry " + std::to_string(i));
      c.kind = VmCallee::Kind::kFfiKernel;
      c.ffi = std::move(*k);
    } else {
      auto k = lib->GetKernelFunction(fn.name, kernel_library_.node());
      if (!k.ok()) return std::move(k).status().Annotate(path_ + ": function table entry " + std::to_string(i));
      c.kind = VmCallee::Kind::kLegacyKernel;
      c.legacy = k->get()->c_function();
      if (c.legacy == nullptr) return Internal(path_ + ": kernel '" + fn.name + "' has no C entry point");
    }
  }
  return Status::Ok();
}

Status VmProgram::CheckMemoryScopes() const {
  std::vector<std::string> lines;
  MemoryScopeRefusals(*exec_, &lines);
  if (lines.empty()) return Status::Ok();
  std::string message = path_ + ": memory scopes sorun does not allocate:";
  for (const std::string& line : lines) message += "\n  " + line;
  return Unimplemented(message);
}

Status VmProgram::MakeConstants() {
  constants_.reserve(exec_->constants.size());
  std::vector<std::pair<uintptr_t, uintptr_t>> released;
  for (size_t i = 0; i < exec_->constants.size(); ++i) {
    const VmConstant& k = exec_->constants[i];
    switch (k.kind) {
      case VmConstantKind::kInt: constants_.push_back(VmValue::Int(k.int_value)); break;
      case VmConstantKind::kFloat: constants_.push_back(VmValue::Float(k.float_value)); break;
      case VmConstantKind::kDataType: constants_.push_back(VmValue::DataType(k.dtype)); break;
      case VmConstantKind::kString: constants_.push_back(VmValue::String(MakeObject<VmStringObj>(k.str))); break;
      case VmConstantKind::kShape: constants_.push_back(VmValue::Shape(MakeObject<VmShapeObj>(k.shape))); break;
      case VmConstantKind::kTensor: {
        const DLDevice cpu{kDLCPU, 0};
        Tensor t;
        // In place when aligned, on copy-on-write pages (a kernel that writes to a constant, which only
        // a crafted executable makes it do, copies the page instead of faulting on read-only memory).
        LibraryModuleNode* lib = AsLibrary(kernel_library_);
        const bool in_place = k.data_bytes == 0 || (k.DataAlignment() >= kAllocAlignment && lib != nullptr &&
                                                    lib->library()->MakeCopyOnWrite(k.data, k.data_bytes).ok());
        if (in_place) {
          auto wrapped = Tensor::Wrap(const_cast<uint8_t*>(k.data), k.data_bytes, k.shape, k.dtype, cpu, keep_alive_);
          if (!wrapped.ok()) return std::move(wrapped).status().Annotate(path_ + ": constant " + std::to_string(i));
          t = std::move(*wrapped);
          t.node()->read_only = true;
          in_place_bytes_ += k.data_bytes;
        } else {
          auto copy = Tensor::Empty(k.shape, k.dtype, cpu);
          if (!copy.ok()) return std::move(copy).status().Annotate(path_ + ": constant " + std::to_string(i));
          t = std::move(*copy);
          // From the library's read-only file pages: give the source pages back as the copy passes
          // them (the weights are resident once, not twice).
          if (lib != nullptr && lib->library()->CheckReadOnlyFileRange(k.data, k.data_bytes).ok()) {
            released.push_back(CopyAndReleaseSource(static_cast<uint8_t*>(t.data()), k.data, k.data_bytes));
          } else {
            std::memcpy(t.data(), k.data, k.data_bytes);
          }
          copied_bytes_ += k.data_bytes;
          ++copied_count_;
        }
        constants_.push_back(VmValue::FromTensor(t));
        break;
      }
    }
  }
  for (const auto& range : released) ReleaseMappedPages(range.first, range.second);
  std::vector<Tensor> tensors(constants_.size());
  std::vector<std::string> names(constants_.size());
  for (size_t i = 0; i < constants_.size(); ++i) {
    if (constants_[i].kind() != VmValueKind::kTensor) continue;
    tensors[i] = constants_[i].tensor();
    names[i] = "constant " + std::to_string(i);
  }
  device_constants_ = std::make_unique<DeviceWeightCache>(std::move(tensors), std::move(names));
  return Status::Ok();
}

StatusOr<std::vector<VmValue>> VmProgram::ConstantsOn(DLDevice device) const {
  if (device.device_type == kDLCPU) return constants_;
  SORUN_ASSIGN_OR_RETURN(std::vector<Tensor> on_device, device_constants_->GetAll(device));
  std::vector<VmValue> pool = constants_;
  for (size_t i = 0; i < pool.size(); ++i) {
    if (on_device[i].defined()) pool[i] = VmValue::FromTensor(on_device[i]);
  }
  return pool;
}

}  // namespace relax
}  // namespace sorun
