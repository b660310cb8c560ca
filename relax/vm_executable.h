// The Relax VM executable (`VMExecutable::SaveToBytes`, docs/spec/RELAX_FORMAT.md section 4): a struct model of
// its function table, memory-scope map (magic V2), constant pool (both tag dialects) and bytecode,
// parsed from the payload of a relax.VMExecutable / relax.Executable module and validated before
// anything runs it:
//   - magic V1 (TVM <= 0.22) or V2 (0.23+, adds the scope section), version "0.14";
//   - functions: kind 0 packed / 1 vm / 2 vmtir, unique names; a vm function's [start, end) is a
//     non-empty range of instructions that overlaps no other, num_args == param_names.size() <=
//     register_file_size <= kMaxRegisters, and its last instruction is Ret or Goto;
//   - constants: every record fully inside the payload, tensors per ReadNDArrayHeader (CPU, dtype,
//     shape x dtype == nbytes); scope indices name constants;
//   - bytecode: instr_offset strictly contiguous over instr_data; known opcodes; each instruction's
//     words inside instr_data; registers below their function's register_file_size (or the void /
//     VM-context registers where TVM allows them); constant and function indices in range; argument
//     kinds 0-3; Goto / If targets inside their function (If: false_offset > 1, as TVM checks).
// Errors are DataLoss naming the byte offset (relative to the payload's `base_offset`), the function
// and the instruction. The model borrows the payload's bytes (tensor data points into it).
// Pure functions; the result is immutable and thread-safe to share.
#ifndef SORUN_RELAX_VM_EXECUTABLE_H_
#define SORUN_RELAX_VM_EXECUTABLE_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/data_type.h"

namespace sorun {
namespace relax {

inline constexpr uint64_t kVmMagicV1 = 0xD225DE2F4214151DULL;
inline constexpr uint64_t kVmMagicV2 = 0xD225DE2F4214151EULL;
inline constexpr const char* kVmVersion = "0.14";
inline constexpr int64_t kVoidRegister = int64_t{1} << 54;
inline constexpr int64_t kVmContextRegister = (int64_t{1} << 54) + 1;
// Upper bound on a frame's register file (the VM allocates one Any per register per frame).
inline constexpr int64_t kMaxRegisters = int64_t{1} << 20;

// How constants are tagged: TVM 0.16 - 0.20 enum (0 tensor, 1 dtype, 2 shape, 3 str, 4 int, 5 float)
// or tvm-ffi type indices (70, 5, 69, 65, 1, 3) from 0.21 on. Tags 1, 3 and 5 mean different things
// in the two, so the dialect comes from the container generation (UsesFfiConstantTags).
enum class ConstantTagDialect { kLegacyEnum, kFfiTypeIndex };

enum class VmFunctionKind : int32_t { kPackedFunc = 0, kVmFunc = 1, kVmTirFunc = 2 };

struct VmFunction {
  VmFunctionKind kind = VmFunctionKind::kPackedFunc;
  std::string name;
  int64_t start_instr = 0;
  int64_t end_instr = 0;
  int64_t num_args = 0;
  int64_t register_file_size = 0;
  std::vector<std::string> param_names;
  uint64_t offset = 0;  // where its record starts
};

enum class VmConstantKind { kTensor, kDataType, kShape, kString, kInt, kFloat };
const char* VmConstantKindName(VmConstantKind kind);
// The tag a constant of `kind` carries in `dialect` (what the parser maps back to `kind`; the executable
// writer, packer/relax_executable_writer.h, uses it).
int32_t VmConstantTag(VmConstantKind kind, ConstantTagDialect dialect);

struct VmConstant {
  VmConstantKind kind = VmConstantKind::kInt;
  int32_t tag = 0;      // as written (dialect-specific)
  uint64_t offset = 0;  // where its tag is
  // kTensor: dtype, shape, data (borrowed), data_offset/data_bytes. kDataType: dtype. kShape: shape.
  DLDataType dtype{kDLFloat, 32, 1};
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;
  uint64_t data_offset = 0;
  uint64_t data_bytes = 0;
  std::string str;         // kString
  int64_t int_value = 0;   // kInt
  double float_value = 0;  // kFloat

  // Largest power of two (<= 4096) dividing the tensor data's address: 64 or more means it can be used
  // in place by TVM's kernels; 0 when not a tensor.
  uint64_t DataAlignment() const;
};

// The V2 memory-scope map: constant `const_index` lives in `scope` (e.g. "global.texture").
struct VmConstantScope {
  int64_t const_index = 0;
  std::string scope;
};

enum class VmOpcode : int64_t { kCall = 1, kRet = 2, kGoto = 3, kIf = 4 };
enum class VmArgKind : int32_t { kRegister = 0, kImmediate = 1, kConstIdx = 2, kFuncIdx = 3 };

struct VmArg {
  VmArgKind kind = VmArgKind::kRegister;
  int64_t value = 0;  // sign-extended from 56 bits
};

// Decodes an argument word: kind = word >> 56, value = low 56 bits sign-extended.
VmArg DecodeVmArg(int64_t word);

struct VmInstruction {
  VmOpcode op = VmOpcode::kRet;
  int64_t word_offset = 0;  // index into instr_data
  int64_t dst = 0;          // kCall: destination register (kVoidRegister = none)
  int64_t func_index = 0;   // kCall
  std::vector<VmArg> args;  // kCall
  int64_t reg = 0;          // kRet: result register; kIf: condition register
  int64_t pc_offset = 0;    // kGoto: pc offset; kIf: false offset
};

struct VmExecutable {
  uint64_t magic = kVmMagicV1;
  std::string version;
  std::vector<VmFunction> functions;
  std::vector<VmConstantScope> scopes;  // V2 only
  std::vector<VmConstant> constants;
  std::vector<int64_t> instr_offset;
  std::vector<int64_t> instr_data;
  uint64_t instr_data_offset = 0;           // byte offset of instr_data[0] (messages)
  std::vector<VmInstruction> instructions;  // decoded, one per instr_offset entry
  // How its dtype constants number codes: DLPack 1.x for tvm-ffi type-index tags (TVM 0.21+).
  DTypeCodes dtype_codes = DTypeCodes::kTvmLegacy;

  bool has_scope_section() const { return magic == kVmMagicV2; }
  // Index of the function named `name`, -1 if none.
  int FindFunction(const std::string& name) const;
  // Index of the vm function owning instruction `pc`, -1 if none.
  int FunctionOfInstruction(int64_t pc) const;
};

// Parses and validates a payload of `size` bytes (starting with the magic). `section` names it in
// errors; `base_offset` is added to offsets (e.g. the payload's offset inside the blob symbol).
StatusOr<VmExecutable> ParseVmExecutable(const uint8_t* data, size_t size, ConstantTagDialect dialect,
                                         const std::string& section = "relax.VMExecutable", uint64_t base_offset = 0);

// The validation ParseVmExecutable applies after reading (exposed for models built in memory).
Status ValidateVmExecutable(const VmExecutable& exec);

}  // namespace relax
}  // namespace sorun

#endif  // SORUN_RELAX_VM_EXECUTABLE_H_
