#include "relax/vm_executable.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "format/binary_reader.h"
#include "runtime/data_type.h"
#include "runtime/tensor_io.h"

namespace sorun {
namespace relax {
namespace {

// The tags of each dialect, by constant kind.
struct TagTable {
  int32_t tensor, dtype, shape, str, integer, floating;
};
constexpr TagTable kLegacyTags{0, 1, 2, 3, 4, 5};
constexpr TagTable kFfiTags{70, 5, 69, 65, 1, 3};

const char* DialectName(ConstantTagDialect d) {
  return d == ConstantTagDialect::kLegacyEnum ? "TVM 0.16-0.20 enum tags" : "tvm-ffi type-index tags";
}

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

Status ReadFunction(BinaryReader& reader, VmFunction* f) {
  f->offset = reader.offset();
  int32_t kind = 0;
  SORUN_RETURN_IF_ERROR(reader.ReadI32(&kind));
  if (kind < 0 || kind > 2) {
    return reader.ErrorAt(f->offset,
                          "function kind " + std::to_string(kind) + " is not 0 (packed), 1 (vm) or 2 (vmtir)");
  }
  f->kind = static_cast<VmFunctionKind>(kind);
  SORUN_RETURN_IF_ERROR(reader.ReadString(&f->name, "function name"));
  SORUN_RETURN_IF_ERROR(reader.ReadI64(&f->start_instr));
  SORUN_RETURN_IF_ERROR(reader.ReadI64(&f->end_instr));
  SORUN_RETURN_IF_ERROR(reader.ReadI64(&f->num_args));
  SORUN_RETURN_IF_ERROR(reader.ReadI64(&f->register_file_size));
  return reader.ReadStringVector(&f->param_names, "param_names");
}

Status ReadConstant(BinaryReader& reader, ConstantTagDialect dialect, VmConstant* c) {
  const TagTable& tags = dialect == ConstantTagDialect::kLegacyEnum ? kLegacyTags : kFfiTags;
  c->offset = reader.offset();
  SORUN_RETURN_IF_ERROR(reader.ReadI32(&c->tag));
  if (c->tag == tags.tensor) {
    c->kind = VmConstantKind::kTensor;
    NDArrayHeader h;
    SORUN_RETURN_IF_ERROR(ReadNDArrayHeader(reader, &h));
    c->dtype = h.dtype;
    c->shape = std::move(h.shape);
    c->data = h.data;
    c->data_offset = h.data_offset;
    c->data_bytes = h.data_bytes;
  } else if (c->tag == tags.dtype) {
    c->kind = VmConstantKind::kDataType;
    SORUN_RETURN_IF_ERROR(reader.ReadDataType(&c->dtype));
  } else if (c->tag == tags.shape) {
    c->kind = VmConstantKind::kShape;
    uint64_t n_at = reader.offset();
    uint64_t n = 0;
    SORUN_RETURN_IF_ERROR(reader.ReadU64(&n));
    if (n > reader.remaining() / 8) {
      return reader.ErrorAt(n_at, "shape of " + std::to_string(n) + " dimensions runs past the end (" +
                                      std::to_string(reader.remaining()) + " bytes left)");
    }
    c->shape.resize(static_cast<size_t>(n));
    for (auto& d : c->shape) SORUN_RETURN_IF_ERROR(reader.ReadI64(&d));
  } else if (c->tag == tags.str) {
    c->kind = VmConstantKind::kString;
    SORUN_RETURN_IF_ERROR(reader.ReadString(&c->str, "string constant"));
  } else if (c->tag == tags.integer) {
    c->kind = VmConstantKind::kInt;
    SORUN_RETURN_IF_ERROR(reader.ReadI64(&c->int_value));
  } else if (c->tag == tags.floating) {
    c->kind = VmConstantKind::kFloat;
    SORUN_RETURN_IF_ERROR(reader.ReadF64(&c->float_value));
  } else {
    return reader.ErrorAt(c->offset,
                          "unknown constant tag " + std::to_string(c->tag) + " (" + DialectName(dialect) + ")");
  }
  return Status::Ok();
}

Status ReadI64Vector(BinaryReader& reader, std::vector<int64_t>* out, const std::string& what) {
  uint64_t at = reader.offset();
  uint64_t n = 0;
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadU64(&n), what);
  if (n > reader.remaining() / 8) {
    return reader.ErrorAt(at, what + ": " + std::to_string(n) + " entries run past the end (" +
                                  std::to_string(reader.remaining()) + " bytes left)");
  }
  out->resize(static_cast<size_t>(n));
  for (auto& v : *out) SORUN_RETURN_IF_ERROR_CTX(reader.ReadI64(&v), what);
  return Status::Ok();
}

int64_t InstructionWords(const VmInstruction& in) {
  switch (in.op) {
    case VmOpcode::kCall: return 4 + static_cast<int64_t>(in.args.size());
    case VmOpcode::kRet:
    case VmOpcode::kGoto: return 2;
    case VmOpcode::kIf: return 3;
  }
  return 1;
}

// Decodes instruction `i` from instr_data, checking that its words lie inside instr_data and that it
// ends where the next one starts.
Status DecodeInstructions(VmExecutable* exec) {
  const auto& data = exec->instr_data;
  const int64_t n_words = static_cast<int64_t>(data.size());
  const size_t n = exec->instr_offset.size();
  exec->instructions.clear();
  exec->instructions.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t at = exec->instr_offset[i];
    const std::string where = "instruction " + std::to_string(i) + " (word " + std::to_string(at) + ")";
    if (at < 0 || at >= n_words) {
      return DataLoss(where + ": offset outside the " + std::to_string(n_words) + " instruction words");
    }
    const int64_t expected_at =
        i == 0 ? 0 : exec->instructions.back().word_offset + InstructionWords(exec->instructions.back());
    if (at != expected_at) {
      return DataLoss(where + ": instructions must be contiguous; expected it at word " + std::to_string(expected_at));
    }
    VmInstruction in;
    in.word_offset = at;
    const int64_t opcode = data[static_cast<size_t>(at)];
    auto need = [&](int64_t words) -> Status {
      if (words > n_words - at) {
        return DataLoss(where + ": needs " + std::to_string(words) + " words but only " + std::to_string(n_words - at) +
                        " remain in instr_data");
      }
      return Status::Ok();
    };
    auto word = [&](int64_t k) { return data[static_cast<size_t>(at + k)]; };
    switch (opcode) {
      case 1: {
        in.op = VmOpcode::kCall;
        SORUN_RETURN_IF_ERROR(need(4));
        in.dst = word(1);
        in.func_index = word(2);
        const int64_t nargs = word(3);
        if (nargs < 0 || nargs > n_words - at - 4) {
          return DataLoss(where + ": call with " + std::to_string(nargs) + " arguments runs past the " +
                          std::to_string(n_words) + " instruction words");
        }
        in.args.reserve(static_cast<size_t>(nargs));
        for (int64_t k = 0; k < nargs; ++k) in.args.push_back(DecodeVmArg(word(4 + k)));
        break;
      }
      case 2:
        in.op = VmOpcode::kRet;
        SORUN_RETURN_IF_ERROR(need(2));
        in.reg = word(1);
        break;
      case 3:
        in.op = VmOpcode::kGoto;
        SORUN_RETURN_IF_ERROR(need(2));
        in.pc_offset = word(1);
        break;
      case 4:
        in.op = VmOpcode::kIf;
        SORUN_RETURN_IF_ERROR(need(3));
        in.reg = word(1);
        in.pc_offset = word(2);
        break;
      default: return DataLoss(where + ": unknown opcode " + std::to_string(opcode) + " (1 Call, 2 Ret, 3 Goto, 4 If)");
    }
    exec->instructions.push_back(std::move(in));
  }
  if (n == 0 && !data.empty()) return DataLoss("instr_data holds words but instr_offset is empty");
  if (n > 0) {
    const VmInstruction& last = exec->instructions.back();
    const int64_t end = last.word_offset + InstructionWords(last);
    if (end != n_words) {
      return DataLoss(std::to_string(n_words - end) + " trailing words in instr_data after the last instruction");
    }
  }
  return Status::Ok();
}

std::string FunctionLabel(const VmExecutable& exec, size_t f) {
  return "function " + std::to_string(f) + " '" + exec.functions[f].name + "' (record at byte " +
         std::to_string(exec.functions[f].offset) + ")";
}

Status ValidateFunctions(const VmExecutable& exec) {
  const int64_t n_instr = static_cast<int64_t>(exec.instructions.size());
  std::map<std::string, size_t> names;
  std::vector<std::pair<int64_t, size_t>> ranges;  // (start, function)
  for (size_t f = 0; f < exec.functions.size(); ++f) {
    const VmFunction& fn = exec.functions[f];
    const std::string label = FunctionLabel(exec, f);
    if (fn.name.empty()) return DataLoss(label + ": empty name");
    auto [it, inserted] = names.emplace(fn.name, f);
    if (!inserted) return DataLoss(label + ": name repeats function " + std::to_string(it->second));
    if (fn.kind != VmFunctionKind::kVmFunc) continue;
    if (fn.start_instr < 0 || fn.start_instr >= fn.end_instr || fn.end_instr > n_instr) {
      return DataLoss(label + ": instruction range [" + std::to_string(fn.start_instr) + ", " +
                      std::to_string(fn.end_instr) + ") is empty or outside the " + std::to_string(n_instr) +
                      " instructions");
    }
    if (fn.num_args < 0 || static_cast<uint64_t>(fn.num_args) != fn.param_names.size()) {
      return DataLoss(label + ": num_args " + std::to_string(fn.num_args) + " but " +
                      std::to_string(fn.param_names.size()) + " param_names");
    }
    if (fn.register_file_size < fn.num_args || fn.register_file_size > kMaxRegisters) {
      return DataLoss(label + ": register_file_size " + std::to_string(fn.register_file_size) + " is below num_args " +
                      std::to_string(fn.num_args) + " or above " + std::to_string(kMaxRegisters));
    }
    const VmOpcode last = exec.instructions[static_cast<size_t>(fn.end_instr - 1)].op;
    if (last != VmOpcode::kRet && last != VmOpcode::kGoto) {
      return DataLoss(label + ": its last instruction " + std::to_string(fn.end_instr - 1) +
                      " is neither Ret nor Goto (execution would run off the function)");
    }
    ranges.emplace_back(fn.start_instr, f);
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t k = 1; k < ranges.size(); ++k) {
    const VmFunction& prev = exec.functions[ranges[k - 1].second];
    if (ranges[k].first < prev.end_instr) {
      return DataLoss(FunctionLabel(exec, ranges[k].second) + ": instructions overlap those of " +
                      FunctionLabel(exec, ranges[k - 1].second));
    }
  }
  return Status::Ok();
}

// Registers readable as arguments: the frame's, void (reads null) and the VM context.
Status CheckRegister(int64_t reg, const VmFunction& fn, bool allow_special, const std::string& where) {
  if (reg >= 0 && reg < fn.register_file_size) return Status::Ok();
  if (allow_special && (reg == kVoidRegister || reg == kVmContextRegister)) return Status::Ok();
  return DataLoss(where + ": register " + std::to_string(reg) + " outside the " +
                  std::to_string(fn.register_file_size) + " registers of '" + fn.name + "'");
}

Status ValidateInstruction(const VmExecutable& exec, const VmFunction& fn, int64_t pc) {
  const VmInstruction& in = exec.instructions[static_cast<size_t>(pc)];
  const std::string where = "'" + fn.name + "' instruction " + std::to_string(pc) + " (byte " +
                            std::to_string(exec.instr_data_offset + 8 * static_cast<uint64_t>(in.word_offset)) + ")";
  const int64_t n_funcs = static_cast<int64_t>(exec.functions.size());
  const int64_t n_consts = static_cast<int64_t>(exec.constants.size());
  switch (in.op) {
    case VmOpcode::kCall: {
      if (in.func_index < 0 || in.func_index >= n_funcs) {
        return DataLoss(where + ": calls function " + std::to_string(in.func_index) + " of " + std::to_string(n_funcs));
      }
      if (in.dst != kVoidRegister) SORUN_RETURN_IF_ERROR(CheckRegister(in.dst, fn, false, where + ": dst"));
      for (size_t a = 0; a < in.args.size(); ++a) {
        const VmArg& arg = in.args[a];
        const std::string arg_where = where + ": argument " + std::to_string(a);
        switch (arg.kind) {
          case VmArgKind::kRegister: SORUN_RETURN_IF_ERROR(CheckRegister(arg.value, fn, true, arg_where)); break;
          case VmArgKind::kImmediate: break;
          case VmArgKind::kConstIdx:
            if (arg.value < 0 || arg.value >= n_consts) {
              return DataLoss(arg_where + ": constant " + std::to_string(arg.value) + " of " +
                              std::to_string(n_consts));
            }
            break;
          case VmArgKind::kFuncIdx:
            if (arg.value < 0 || arg.value >= n_funcs) {
              return DataLoss(arg_where + ": function " + std::to_string(arg.value) + " of " + std::to_string(n_funcs));
            }
            break;
          default:
            return DataLoss(arg_where + ": argument kind " + std::to_string(static_cast<int>(arg.kind)) +
                            " is not 0 (register), 1 (immediate), 2 (constant) or 3 (function)");
        }
      }
      return Status::Ok();
    }
    case VmOpcode::kRet: return CheckRegister(in.reg, fn, false, where + ": ret");
    case VmOpcode::kGoto:
    case VmOpcode::kIf: {
      if (in.op == VmOpcode::kIf) {
        SORUN_RETURN_IF_ERROR(CheckRegister(in.reg, fn, false, where + ": if condition"));
        if (in.pc_offset <= 1) {
          return DataLoss(where + ": if false_offset " + std::to_string(in.pc_offset) + " must be > 1");
        }
        if (pc + 1 >= fn.end_instr) return DataLoss(where + ": if is the last instruction of '" + fn.name + "'");
      } else if (in.pc_offset <= 0) {
        // TVM's compiler emits forward jumps only (the join of a relax.If); a backward one could loop
        // without end, so it is refused here rather than bounded at run time.
        return DataLoss(where + ": goto by " + std::to_string(in.pc_offset) +
                        " jumps backwards (TVM emits forward jumps only; a loop could run forever)");
      }
      const bool in_range = in.pc_offset >= fn.start_instr - pc && in.pc_offset < fn.end_instr - pc;
      if (!in_range) {
        return DataLoss(where + ": jump by " + std::to_string(in.pc_offset) + " leaves '" + fn.name +
                        "' (instructions " + std::to_string(fn.start_instr) + " to " +
                        std::to_string(fn.end_instr - 1) + ")");
      }
      return Status::Ok();
    }
  }
  return Internal(where + ": unhandled opcode");
}

}  // namespace

const char* VmConstantKindName(VmConstantKind kind) {
  switch (kind) {
    case VmConstantKind::kTensor: return "tensor";
    case VmConstantKind::kDataType: return "dtype";
    case VmConstantKind::kShape: return "shape";
    case VmConstantKind::kString: return "string";
    case VmConstantKind::kInt: return "int";
    case VmConstantKind::kFloat: return "float";
  }
  return "?";
}

int32_t VmConstantTag(VmConstantKind kind, ConstantTagDialect dialect) {
  const TagTable& tags = dialect == ConstantTagDialect::kLegacyEnum ? kLegacyTags : kFfiTags;
  switch (kind) {
    case VmConstantKind::kTensor: return tags.tensor;
    case VmConstantKind::kDataType: return tags.dtype;
    case VmConstantKind::kShape: return tags.shape;
    case VmConstantKind::kString: return tags.str;
    case VmConstantKind::kInt: return tags.integer;
    case VmConstantKind::kFloat: return tags.floating;
  }
  return -1;
}

uint64_t VmConstant::DataAlignment() const {
  if (kind != VmConstantKind::kTensor || data == nullptr) return 0;
  const uint64_t address = reinterpret_cast<uintptr_t>(data);
  uint64_t alignment = 1;
  while (alignment < 4096 && address % (alignment * 2) == 0) alignment *= 2;
  return alignment;
}

VmArg DecodeVmArg(int64_t word) {
  const uint64_t u = static_cast<uint64_t>(word);
  VmArg arg;
  arg.kind = static_cast<VmArgKind>(static_cast<int32_t>(u >> 56));
  const uint64_t low = u & ((uint64_t{1} << 56) - 1);
  const uint64_t sign = uint64_t{1} << 55;
  arg.value = static_cast<int64_t>((low ^ sign) - sign);  // sign-extend 56 bits
  return arg;
}

int VmExecutable::FindFunction(const std::string& name) const {
  for (size_t i = 0; i < functions.size(); ++i) {
    if (functions[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int VmExecutable::FunctionOfInstruction(int64_t pc) const {
  for (size_t i = 0; i < functions.size(); ++i) {
    const VmFunction& f = functions[i];
    if (f.kind == VmFunctionKind::kVmFunc && pc >= f.start_instr && pc < f.end_instr) return static_cast<int>(i);
  }
  return -1;
}

StatusOr<VmExecutable> ParseVmExecutable(const uint8_t* data, size_t size, ConstantTagDialect dialect,
                                         const std::string& section, uint64_t base_offset) {
  BinaryReader reader(data, size, section, base_offset);
  VmExecutable exec;
  exec.dtype_codes = dialect == ConstantTagDialect::kFfiTypeIndex ? DTypeCodes::kDLPack : DTypeCodes::kTvmLegacy;
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadU64(&exec.magic), "magic");
  if (exec.magic != kVmMagicV1 && exec.magic != kVmMagicV2) {
    return reader.ErrorAt(base_offset, "bad VM executable magic " + Hex(exec.magic) + " (expected " + Hex(kVmMagicV1) +
                                           " or " + Hex(kVmMagicV2) + ")");
  }
  uint64_t version_at = reader.offset();
  SORUN_RETURN_IF_ERROR(reader.ReadString(&exec.version, "version"));
  if (exec.version != kVmVersion) {
    return reader.ErrorAt(version_at, "VM executable version '" + exec.version + "' is not '" + kVmVersion +
                                          "' (the only version TVM 0.16 - 0.27 write and load)");
  }
  uint64_t count_at = reader.offset();
  uint64_t n_funcs = 0;
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadU64(&n_funcs), "function table");
  if (n_funcs > reader.remaining() / 52) {  // a record is at least 4 + 8 + 32 + 8 bytes
    return reader.ErrorAt(count_at, "function count " + std::to_string(n_funcs) + " is impossible with " +
                                        std::to_string(reader.remaining()) + " bytes left");
  }
  exec.functions.resize(static_cast<size_t>(n_funcs));
  for (size_t f = 0; f < exec.functions.size(); ++f) {
    SORUN_RETURN_IF_ERROR_CTX(ReadFunction(reader, &exec.functions[f]), "function " + std::to_string(f));
  }
  if (exec.has_scope_section()) {
    count_at = reader.offset();
    uint64_t n_scopes = 0;
    SORUN_RETURN_IF_ERROR_CTX(reader.ReadU64(&n_scopes), "scope section");
    if (n_scopes > reader.remaining() / 16) {
      return reader.ErrorAt(count_at, "scope count " + std::to_string(n_scopes) + " is impossible with " +
                                          std::to_string(reader.remaining()) + " bytes left");
    }
    exec.scopes.resize(static_cast<size_t>(n_scopes));
    for (size_t s = 0; s < exec.scopes.size(); ++s) {
      const std::string ctx = "scope " + std::to_string(s);
      SORUN_RETURN_IF_ERROR_CTX(reader.ReadI64(&exec.scopes[s].const_index), ctx);
      SORUN_RETURN_IF_ERROR_CTX(reader.ReadString(&exec.scopes[s].scope, "scope"), ctx);
    }
  }
  count_at = reader.offset();
  uint64_t n_consts = 0;
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadU64(&n_consts), "constant pool");
  if (n_consts > reader.remaining() / 5) {  // tag + at least one byte
    return reader.ErrorAt(count_at, "constant count " + std::to_string(n_consts) + " is impossible with " +
                                        std::to_string(reader.remaining()) + " bytes left");
  }
  exec.constants.resize(static_cast<size_t>(n_consts));
  for (size_t c = 0; c < exec.constants.size(); ++c) {
    SORUN_RETURN_IF_ERROR_CTX(ReadConstant(reader, dialect, &exec.constants[c]), "constant " + std::to_string(c));
  }
  SORUN_RETURN_IF_ERROR(ReadI64Vector(reader, &exec.instr_offset, "instr_offset"));
  exec.instr_data_offset = reader.offset() + 8;
  SORUN_RETURN_IF_ERROR(ReadI64Vector(reader, &exec.instr_data, "instr_data"));
  if (!reader.at_end()) {
    return reader.Error(std::to_string(reader.remaining()) + " trailing bytes after the code section");
  }
  SORUN_RETURN_IF_ERROR_CTX(DecodeInstructions(&exec), section);
  SORUN_RETURN_IF_ERROR_CTX(ValidateVmExecutable(exec), section);
  return exec;
}

Status ValidateVmExecutable(const VmExecutable& exec_in) {
  // Decoding is part of validation: re-decode into a copy when the caller built only the words.
  VmExecutable decoded;
  const VmExecutable* exec = &exec_in;
  if (exec_in.instructions.size() != exec_in.instr_offset.size()) {
    decoded = exec_in;
    SORUN_RETURN_IF_ERROR(DecodeInstructions(&decoded));
    exec = &decoded;
  }
  for (size_t s = 0; s < exec->scopes.size(); ++s) {
    const int64_t ci = exec->scopes[s].const_index;
    if (ci < 0 || ci >= static_cast<int64_t>(exec->constants.size())) {
      return DataLoss("scope " + std::to_string(s) + " ('" + exec->scopes[s].scope + "') names constant " +
                      std::to_string(ci) + " of " + std::to_string(exec->constants.size()));
    }
  }
  SORUN_RETURN_IF_ERROR(ValidateFunctions(*exec));
  uint64_t covered = 0;
  for (const VmFunction& fn : exec->functions) {
    if (fn.kind != VmFunctionKind::kVmFunc) continue;
    covered += static_cast<uint64_t>(fn.end_instr - fn.start_instr);
    for (int64_t pc = fn.start_instr; pc < fn.end_instr; ++pc)
      SORUN_RETURN_IF_ERROR(ValidateInstruction(*exec, fn, pc));
  }
  // TVM's executables hold function code only: an instruction outside every vm function (ranges do not
  // overlap, so a count tells) is never validated, so it is refused, not skipped by every reader.
  if (covered != exec->instructions.size()) {
    for (size_t pc = 0; pc < exec->instructions.size(); ++pc) {
      if (exec->FunctionOfInstruction(static_cast<int64_t>(pc)) < 0) {
        return DataLoss("instruction " + std::to_string(pc) + " (word " +
                        std::to_string(exec->instructions[pc].word_offset) +
                        ") lies in no vm function (an executable holds function code only)");
      }
    }
  }
  return Status::Ok();
}

}  // namespace relax
}  // namespace sorun
