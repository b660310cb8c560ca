#include "relax/vm_disassembler.h"

#include <sstream>
#include <utility>

#include "relax/vm_builtin_table.h"
#include "runtime/data_type.h"

namespace sorun {
namespace relax {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool Contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

std::string RegisterName(int64_t reg) {
  if (reg == kVoidRegister) return "%void";
  if (reg == kVmContextRegister) return "%vm";
  return "%" + std::to_string(reg);
}

std::string FunctionName(const VmExecutable& exec, int64_t index) {
  if (index >= 0 && index < static_cast<int64_t>(exec.functions.size())) {
    return exec.functions[static_cast<size_t>(index)].name;
  }
  return "<function " + std::to_string(index) + ">";
}

std::string FormatArg(const VmExecutable& exec, const VmArg& arg) {
  switch (arg.kind) {
    case VmArgKind::kRegister: return RegisterName(arg.value);
    case VmArgKind::kImmediate: return "i" + std::to_string(arg.value);
    case VmArgKind::kConstIdx: return "c[" + std::to_string(arg.value) + "]";
    case VmArgKind::kFuncIdx: return "f[" + FunctionName(exec, arg.value) + "]";
  }
  return "?" + std::to_string(static_cast<int>(arg.kind)) + ":" + std::to_string(arg.value);
}

std::string Signed(int64_t v) { return (v >= 0 ? "+" : "") + std::to_string(v); }

std::string FormatConstant(const VmConstant& c, DTypeCodes codes) {
  std::ostringstream os;
  os << VmConstantKindName(c.kind) << " ";
  switch (c.kind) {
    case VmConstantKind::kTensor:
      os << DTypeToString(c.dtype, codes) << ShapeToString(c.shape.data(), static_cast<int>(c.shape.size())) << " "
         << c.data_bytes << " bytes, data at byte " << c.data_offset << ", alignment " << c.DataAlignment();
      break;
    case VmConstantKind::kDataType: os << DTypeToString(c.dtype, codes); break;
    case VmConstantKind::kShape: os << ShapeToString(c.shape.data(), static_cast<int>(c.shape.size())); break;
    case VmConstantKind::kString: {
      std::string s = c.str.size() > 60 ? c.str.substr(0, 57) + "..." : c.str;
      for (char& ch : s) {
        if (ch == '\n' || ch == '\r') ch = ' ';
      }
      os << '"' << s << '"';
      break;
    }
    case VmConstantKind::kInt: os << c.int_value; break;
    case VmConstantKind::kFloat: os << c.float_value; break;
  }
  return os.str();
}

// The immediate value of `arg`, or false.
bool Immediate(const VmArg& arg, int64_t* value) {
  if (arg.kind != VmArgKind::kImmediate) return false;
  *value = arg.value;
  return true;
}

// Applies check_tensor_info(%r, i<ndim>, [c[dtype]], c[err]) to `input`.
void ApplyCheckTensorInfo(const VmExecutable& exec, const VmInstruction& in, VmInputInfo* input) {
  int64_t ndim = -1;
  if (in.args.size() >= 2 && Immediate(in.args[1], &ndim)) input->ndim = ndim;
  if (in.args.size() >= 4 && in.args[2].kind == VmArgKind::kConstIdx) {
    const VmConstant& c = exec.constants[static_cast<size_t>(in.args[2].value)];
    if (c.kind == VmConstantKind::kDataType) {
      input->has_dtype = true;
      input->dtype = c.dtype;
    }
  }
}

// Applies check_prim_value_info(%r, c[dtype], c[err]): an R.Prim scalar parameter.
void ApplyCheckPrimValueInfo(const VmExecutable& exec, const VmInstruction& in, VmInputInfo* input) {
  if (in.args.size() < 2 || in.args[1].kind != VmArgKind::kConstIdx) return;
  const VmConstant& c = exec.constants[static_cast<size_t>(in.args[1].value)];
  if (c.kind != VmConstantKind::kDataType) return;
  input->is_scalar = true;
  input->has_dtype = true;
  input->dtype = c.dtype;
  input->ndim = 0;
  input->dims.clear();
}

// Applies match_shape(%r, heap, i<ndim>, (i<code>, i<value>) x ndim, c[err]): code 0 is a static dim.
void ApplyMatchShape(const VmInstruction& in, VmInputInfo* input) {
  int64_t ndim = 0;
  if (in.args.size() < 3 || !Immediate(in.args[2], &ndim) || ndim < 0 ||
      static_cast<uint64_t>(ndim) > (in.args.size() - 3) / 2) {
    return;
  }
  input->ndim = ndim;
  input->dims.assign(static_cast<size_t>(ndim), -1);
  for (int64_t d = 0; d < ndim; ++d) {
    int64_t code = -1, value = -1;
    if (Immediate(in.args[static_cast<size_t>(3 + 2 * d)], &code) &&
        Immediate(in.args[static_cast<size_t>(4 + 2 * d)], &value) && code == 0) {
      input->dims[static_cast<size_t>(d)] = value;
    }
  }
}

}  // namespace

const char* CalleeClassName(CalleeClass c) {
  switch (c) {
    case CalleeClass::kKernel: return "kernel";
    case CalleeClass::kSupportedBuiltin: return "supported builtin";
    case CalleeClass::kVmFunction: return "vm function";
    case CalleeClass::kUnsupported: return "NOT supported";
  }
  return "?";
}

const std::vector<std::string>& SupportedBuiltins() {
  static const std::vector<std::string>* names = [] {
    auto* v = new std::vector<std::string>();
    for (const BuiltinRow& row : kBuiltinRows) v->emplace_back(row.name);
    return v;
  }();
  return *names;
}

bool IsSupportedBuiltin(std::string_view name) { return FindBuiltin(name) != nullptr; }

std::string UnsupportedFamily(std::string_view name) {
  if (Contains(name, "kv_cache") || Contains(name, "kv_state") || Contains(name, "attention_kv")) {
    return "KV-cache builtin";
  }
  if (Contains(name, "cuda_graph")) return "CUDA-graph builtin";
  if (StartsWith(name, "runtime.disco") || Contains(name, "disco") || Contains(name, "ccl")) {
    return "disco (distributed) builtin";
  }
  if (StartsWith(name, "tvm.contrib.") || Contains(name, "cublas") || Contains(name, "cudnn") ||
      Contains(name, "cutlass") || Contains(name, "flashinfer") || Contains(name, "dnnl") ||
      StartsWith(name, "tvm.relax.")) {
    return "BYOC / contrib extern";
  }
  if (StartsWith(name, "vm.builtin.")) return "VM builtin not implemented by sorun";
  if (StartsWith(name, "runtime.") || StartsWith(name, "relax.")) return "TVM runtime function";
  return "";
}

std::vector<CalleeInfo> ClassifyFunctions(const VmExecutable& exec, const KernelPredicate& is_kernel) {
  std::vector<CalleeInfo> out(exec.functions.size());
  for (const VmInstruction& in : exec.instructions) {
    if (in.op == VmOpcode::kCall && in.func_index >= 0 && in.func_index < static_cast<int64_t>(out.size())) {
      ++out[static_cast<size_t>(in.func_index)].call_sites;
    }
  }
  for (size_t i = 0; i < exec.functions.size(); ++i) {
    const VmFunction& fn = exec.functions[i];
    CalleeInfo& info = out[i];
    info.function_index = static_cast<int>(i);
    info.name = fn.name;
    if (fn.kind == VmFunctionKind::kVmFunc) {
      info.callee_class = CalleeClass::kVmFunction;
    } else if (fn.kind == VmFunctionKind::kVmTirFunc) {
      info.callee_class = CalleeClass::kUnsupported;
      info.reason = "compiled-mode (exec_mode=\"compiled\", vmtir) function";
    } else if (is_kernel && is_kernel(fn.name)) {
      info.callee_class = CalleeClass::kKernel;
    } else if (IsSupportedBuiltin(fn.name)) {
      info.callee_class = CalleeClass::kSupportedBuiltin;
    } else {
      info.callee_class = CalleeClass::kUnsupported;
      info.reason = UnsupportedFamily(fn.name);
      if (info.reason.empty()) info.reason = "neither a kernel of the library nor a known builtin";
    }
  }
  return out;
}

Status CheckCalleesSupported(const VmExecutable& exec, const std::vector<CalleeInfo>& callees) {
  std::vector<bool> reached(exec.functions.size(), false);
  for (const VmInstruction& in : exec.instructions) {
    if (in.op != VmOpcode::kCall) continue;
    if (in.func_index >= 0 && in.func_index < static_cast<int64_t>(reached.size())) {
      reached[static_cast<size_t>(in.func_index)] = true;
    }
    for (const VmArg& a : in.args) {
      if (a.kind == VmArgKind::kFuncIdx && a.value >= 0 && a.value < static_cast<int64_t>(reached.size())) {
        reached[static_cast<size_t>(a.value)] = true;
      }
    }
  }
  for (const VmFunction& fn : exec.functions) {  // an entry point in compiled mode is reached by its caller
    if (fn.name == "main") reached[static_cast<size_t>(exec.FindFunction(fn.name))] = true;
  }
  std::string list;
  int count = 0;
  for (const CalleeInfo& c : callees) {
    if (c.callee_class != CalleeClass::kUnsupported || c.function_index < 0 ||
        static_cast<size_t>(c.function_index) >= reached.size() || !reached[static_cast<size_t>(c.function_index)]) {
      continue;
    }
    list += (count++ ? "; " : "") + std::string("'") + c.name + "' (" + c.reason + ")";
  }
  if (count == 0) return Status::Ok();
  return Unimplemented(std::to_string(count) + " function(s) of the Relax executable are not supported: " + list);
}

std::string FormatInstruction(const VmExecutable& exec, const VmInstruction& in) {
  std::ostringstream os;
  switch (in.op) {
    case VmOpcode::kCall: {
      os << RegisterName(in.dst) << " = call " << FunctionName(exec, in.func_index) << "(";
      for (size_t a = 0; a < in.args.size(); ++a) os << (a ? ", " : "") << FormatArg(exec, in.args[a]);
      os << ")";
      break;
    }
    case VmOpcode::kRet: os << "ret " << RegisterName(in.reg); break;
    case VmOpcode::kGoto: os << "goto " << Signed(in.pc_offset); break;
    case VmOpcode::kIf: os << "if " << RegisterName(in.reg) << " else " << Signed(in.pc_offset); break;
  }
  return os.str();
}

std::string Disassemble(const VmExecutable& exec, const KernelPredicate& is_kernel) {
  std::ostringstream os;
  os << "relax VM executable: magic " << (exec.has_scope_section() ? "V2" : "V1") << ", version " << exec.version
     << ", " << exec.functions.size() << " functions, " << exec.constants.size() << " constants, "
     << exec.instructions.size() << " instructions\n";
  os << "constants:\n";
  for (size_t c = 0; c < exec.constants.size(); ++c)
    os << "  c[" << c << "] " << FormatConstant(exec.constants[c], exec.dtype_codes) << "\n";
  for (const VmConstantScope& s : exec.scopes) os << "  scope c[" << s.const_index << "] " << s.scope << "\n";
  const std::vector<CalleeInfo> callees = ClassifyFunctions(exec, is_kernel);
  os << "functions:\n";
  for (size_t f = 0; f < exec.functions.size(); ++f) {
    const VmFunction& fn = exec.functions[f];
    const CalleeInfo& info = callees[f];
    os << "  @" << fn.name;
    if (fn.kind == VmFunctionKind::kVmFunc) {
      os << "(";
      for (size_t p = 0; p < fn.param_names.size(); ++p) os << (p ? ", " : "") << fn.param_names[p];
      os << ") vm function, " << fn.register_file_size << " registers, instructions [" << fn.start_instr << ", "
         << fn.end_instr << ")\n";
      for (int64_t pc = fn.start_instr; pc < fn.end_instr; ++pc) {
        os << "    " << pc << ": " << FormatInstruction(exec, exec.instructions[static_cast<size_t>(pc)]) << "\n";
      }
      continue;
    }
    os << " " << CalleeClassName(info.callee_class);
    if (!info.reason.empty()) os << " (" << info.reason << ")";
    os << ", " << info.call_sites << " call site(s)\n";
  }
  return os.str();
}

StatusOr<std::vector<VmInputInfo>> DescribeInputs(const VmExecutable& exec, const std::string& function) {
  const int f = exec.FindFunction(function);
  if (f < 0 || exec.functions[static_cast<size_t>(f)].kind != VmFunctionKind::kVmFunc) {
    return NotFound("the Relax executable has no vm function '" + function + "'");
  }
  const VmFunction& fn = exec.functions[static_cast<size_t>(f)];
  std::vector<VmInputInfo> inputs(fn.param_names.size());
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i].name = fn.param_names[i];
  const int check = exec.FindFunction(BuiltinName(Builtin::kCheckTensorInfo));
  const int match = exec.FindFunction(BuiltinName(Builtin::kMatchShape));
  const int prim = exec.FindFunction(BuiltinName(Builtin::kCheckPrimValueInfo));
  const int heap = exec.FindFunction(BuiltinName(Builtin::kAllocShapeHeap));
  for (int64_t pc = fn.start_instr; pc < fn.end_instr; ++pc) {
    const VmInstruction& in = exec.instructions[static_cast<size_t>(pc)];
    if (in.op != VmOpcode::kCall) break;
    if (in.func_index == heap) continue;
    if (in.func_index != check && in.func_index != match && in.func_index != prim) break;
    if (in.args.empty() || in.args[0].kind != VmArgKind::kRegister || in.args[0].value < 0 ||
        in.args[0].value >= static_cast<int64_t>(inputs.size())) {
      continue;
    }
    VmInputInfo& input = inputs[static_cast<size_t>(in.args[0].value)];
    if (in.func_index == check) {
      ApplyCheckTensorInfo(exec, in, &input);
    } else if (in.func_index == prim) {
      ApplyCheckPrimValueInfo(exec, in, &input);
    } else {
      ApplyMatchShape(in, &input);
    }
  }
  return inputs;
}

namespace {

// ---- DescribeOutputs: a static walk back from main's returns ----
//
// Straight-line code: the value of a register at an instruction is the one its last writer before it
// made. With branches (If / Goto): any writer of the register in the function may have made it, so every
// one is described and the descriptions merged (same count, dtype and rank; a dim the writers disagree
// on becomes -1), and a register no instruction writes (a parameter) cannot be told. Every path's value
// is covered either way, so what the walk returns holds for every run.

struct OutputWalk {
  const VmExecutable& exec;
  const VmFunction& fn;
  bool branchy = false;

  const std::string& CalleeName(const VmInstruction& in) const {
    return exec.functions[static_cast<size_t>(in.func_index)].name;
  }
  // The instructions that may have written `reg` as seen at instruction `before` (see above); empty
  // when none can be named.
  std::vector<int64_t> Writers(int64_t reg, int64_t before) const {
    std::vector<int64_t> out;
    if (!branchy) {
      for (int64_t pc = before - 1; pc >= fn.start_instr; --pc) {
        const VmInstruction& in = exec.instructions[static_cast<size_t>(pc)];
        if (in.op == VmOpcode::kCall && in.dst == reg) return {pc};
      }
      return out;
    }
    if (reg < fn.num_args) return out;  // a parameter may reach unwritten
    for (int64_t pc = fn.start_instr; pc < fn.end_instr; ++pc) {
      const VmInstruction& in = exec.instructions[static_cast<size_t>(pc)];
      if (in.op == VmOpcode::kCall && in.dst == reg) out.push_back(pc);
    }
    return out;
  }
  // dims of a shape argument: a constant, or a register written by one make_shape.
  bool ShapeOf(const VmArg& a, int64_t before, std::vector<int64_t>* dims) const {
    if (a.kind == VmArgKind::kConstIdx) {
      const VmConstant& c = exec.constants[static_cast<size_t>(a.value)];
      if (c.kind != VmConstantKind::kShape) return false;
      *dims = c.shape;
      return true;
    }
    if (a.kind != VmArgKind::kRegister) return false;
    const std::vector<int64_t> writers = Writers(a.value, before);
    if (writers.size() != 1) return false;
    const VmInstruction& in = exec.instructions[static_cast<size_t>(writers[0])];
    if (CalleeName(in) != BuiltinName(Builtin::kMakeShape) || in.args.size() < 2 ||
        in.args[1].kind != VmArgKind::kImmediate) {
      return false;
    }
    const int64_t n = in.args[1].value;
    if (n < 0 || in.args.size() < static_cast<size_t>(2 + 2 * n)) return false;
    dims->clear();
    for (int64_t i = 0; i < n; ++i) {
      const VmArg& code = in.args[static_cast<size_t>(2 + 2 * i)];
      const VmArg& val = in.args[static_cast<size_t>(3 + 2 * i)];
      const bool imm = code.kind == VmArgKind::kImmediate && code.value == 0 && val.kind == VmArgKind::kImmediate;
      dims->push_back(imm ? val.value : -1);
    }
    return true;
  }
  bool DTypeOf(const VmArg& a, DLDataType* dtype) const {
    if (a.kind != VmArgKind::kConstIdx) return false;
    const VmConstant& c = exec.constants[static_cast<size_t>(a.value)];
    if (c.kind != VmConstantKind::kDataType) return false;
    *dtype = c.dtype;
    return true;
  }
  // Merges `next` (one writer's leaves) into `merged`; false when they disagree beyond dims.
  static bool Merge(std::vector<TensorInfo>* merged, const std::vector<TensorInfo>& next, bool first) {
    if (first) {
      *merged = next;
      return true;
    }
    if (merged->size() != next.size()) return false;
    for (size_t i = 0; i < next.size(); ++i) {
      TensorInfo& m = (*merged)[i];
      const TensorInfo& n = next[i];
      if (m.dtype.code != n.dtype.code || m.dtype.bits != n.dtype.bits || m.dtype.lanes != n.dtype.lanes ||
          m.shape.size() != n.shape.size()) {
        return false;
      }
      for (size_t d = 0; d < n.shape.size(); ++d) {
        if (m.shape[d] != n.shape[d]) m.shape[d] = -1;
      }
    }
    return true;
  }
  // Appends the leaves of the value `reg` holds at instruction `before`; false when it cannot tell.
  bool Leaf(int64_t reg, int64_t before, int depth, std::vector<TensorInfo>* out) const {
    if (depth > 64) return false;
    const std::vector<int64_t> writers = Writers(reg, before);
    if (writers.empty()) return false;
    std::vector<TensorInfo> merged;
    for (size_t i = 0; i < writers.size(); ++i) {
      std::vector<TensorInfo> one;
      if (!Written(writers[i], depth, &one) || !Merge(&merged, one, i == 0)) return false;
    }
    out->insert(out->end(), merged.begin(), merged.end());
    return true;
  }
  // The leaves of what instruction `w` wrote.
  bool Written(int64_t w, int depth, std::vector<TensorInfo>* out) const {
    const VmInstruction& in = exec.instructions[static_cast<size_t>(w)];
    const std::string& callee = CalleeName(in);
    TensorInfo info;
    if (callee == BuiltinName(Builtin::kMakeTuple)) {
      for (const VmArg& a : in.args) {
        if (a.kind != VmArgKind::kRegister || !Leaf(a.value, w, depth + 1, out)) return false;
      }
      return true;
    }
    if (callee == BuiltinName(Builtin::kCopy) && !in.args.empty() && in.args[0].kind == VmArgKind::kRegister) {
      return Leaf(in.args[0].value, w, depth + 1, out);
    }
    if (callee == BuiltinName(Builtin::kAllocTensor) && in.args.size() >= 4 && ShapeOf(in.args[2], w, &info.shape) &&
        DTypeOf(in.args[3], &info.dtype)) {
      out->push_back(info);
      return true;
    }
    if (callee == BuiltinName(Builtin::kReshape) && in.args.size() == 2 && in.args[0].kind == VmArgKind::kRegister &&
        ShapeOf(in.args[1], w, &info.shape)) {
      // The dtype is the reshaped tensor's.
      std::vector<TensorInfo> inner;
      if (!Leaf(in.args[0].value, w, depth + 1, &inner) || inner.size() != 1) return false;
      info.dtype = inner[0].dtype;
      out->push_back(info);
      return true;
    }
    return false;
  }
};

}  // namespace

std::vector<TensorInfo> DescribeOutputs(const VmExecutable& exec, int function) {
  if (function < 0 || static_cast<size_t>(function) >= exec.functions.size()) return {};
  const VmFunction& fn = exec.functions[static_cast<size_t>(function)];
  if (fn.kind != VmFunctionKind::kVmFunc) return {};
  OutputWalk walk{exec, fn};
  std::vector<int64_t> rets;
  for (int64_t pc = fn.start_instr; pc < fn.end_instr; ++pc) {
    const VmInstruction& in = exec.instructions[static_cast<size_t>(pc)];
    if (in.op == VmOpcode::kGoto || in.op == VmOpcode::kIf) walk.branchy = true;
    if (in.op == VmOpcode::kRet) rets.push_back(pc);
  }
  std::vector<TensorInfo> outputs;
  for (size_t i = 0; i < rets.size(); ++i) {
    std::vector<TensorInfo> one;
    const int64_t pc = rets[i];
    if (!walk.Leaf(exec.instructions[static_cast<size_t>(pc)].reg, pc, 0, &one) ||
        !OutputWalk::Merge(&outputs, one, i == 0)) {
      return {};
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) outputs[i].name = "output_" + std::to_string(i);
  return outputs;
}

}  // namespace relax
}  // namespace sorun
