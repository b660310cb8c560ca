// The one table of the Relax builtins sorun implements: a row per builtin, with TVM's name (as an
// export's function table spells it), sorun's enumerator and the handler that runs it (a function of
// relax/vm_builtin_call.h). Every reader takes the builtins from here:
//   - the resolver (VmProgram, relax/vm_program.h) maps a function-table entry to its row (FindBuiltin);
//   - the executor dispatches a call through the row's handler (VmExecutor::CallBuiltin: one function
//     pointer per row, relax/vm_builtin_call.cc);
//   - `sorun inspect`, the callee classification and the refusal check (relax/vm_disassembler.h's
//     SupportedBuiltins / IsSupportedBuiltin) list the rows' names;
//   - the static walks of the disassembler and export_check name a builtin by its enumerator
//     (BuiltinName).
// The table is a list macro, expanded by each reader into what it needs: the readers below the VM
// (disassembler, export_check, inspect) take the enumerator and name columns (the enum and
// kBuiltinRows below) and link no VM code; the handler column is expanded by the VM alone. Adding a
// builtin is one row here and its handler (a row without one does not compile).
// Constant data and pure functions; thread-safe.
#ifndef SORUN_RELAX_VM_BUILTIN_TABLE_H_
#define SORUN_RELAX_VM_BUILTIN_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

// ROW(enumerator, TVM name, handler)
#define SORUN_RELAX_BUILTIN_TABLE(ROW)                                             \
  ROW(kCheckTensorInfo, "vm.builtin.check_tensor_info", CheckTensorInfo)           \
  ROW(kMatchShape, "vm.builtin.match_shape", MatchShape)                           \
  ROW(kAllocStorage, "vm.builtin.alloc_storage", AllocStorage)                     \
  ROW(kAllocTensor, "vm.builtin.alloc_tensor", AllocTensor)                        \
  ROW(kNullValue, "vm.builtin.null_value", NullValue)                              \
  ROW(kReshape, "vm.builtin.reshape", Reshape)                                     \
  ROW(kMakeTuple, "vm.builtin.make_tuple", MakeTuple)                              \
  ROW(kTupleGetItem, "vm.builtin.tuple_getitem", TupleGetItem)                     \
  ROW(kCopy, "vm.builtin.copy", Copy)                                              \
  ROW(kReadIfCond, "vm.builtin.read_if_cond", ReadIfCond)                          \
  ROW(kCheckShapeInfo, "vm.builtin.check_shape_info", CheckShapeInfo)              \
  ROW(kCheckPrimValueInfo, "vm.builtin.check_prim_value_info", CheckPrimValueInfo) \
  ROW(kCheckTupleInfo, "vm.builtin.check_tuple_info", CheckTupleInfo)              \
  ROW(kCheckFuncInfo, "vm.builtin.check_func_info", CheckFuncInfo)                 \
  ROW(kAllocShapeHeap, "vm.builtin.alloc_shape_heap", AllocShapeHeap)              \
  ROW(kMakeShape, "vm.builtin.make_shape", MakeShape)

namespace sorun {
namespace relax {

// One enumerator per row, in table order.
enum class Builtin : uint8_t {
#define SORUN_RELAX_BUILTIN_ENUMERATOR(id, name, handler) id,
  SORUN_RELAX_BUILTIN_TABLE(SORUN_RELAX_BUILTIN_ENUMERATOR)
#undef SORUN_RELAX_BUILTIN_ENUMERATOR
};

struct BuiltinRow {
  Builtin id;
  const char* name;  // "vm.builtin.check_tensor_info"
};

// The rows in table order: kBuiltinRows[i].id == Builtin(i).
inline constexpr BuiltinRow kBuiltinRows[] = {
#define SORUN_RELAX_BUILTIN_ROW(id, name, handler) {Builtin::id, name},
    SORUN_RELAX_BUILTIN_TABLE(SORUN_RELAX_BUILTIN_ROW)
#undef SORUN_RELAX_BUILTIN_ROW
};
inline constexpr size_t kNumBuiltins = std::size(kBuiltinRows);

// The row named `name`; null when sorun implements no builtin of that name.
const BuiltinRow* FindBuiltin(std::string_view name);
// The TVM name of `id` ("vm.builtin.match_shape").
const char* BuiltinName(Builtin id);

}  // namespace relax
}  // namespace sorun

#endif  // SORUN_RELAX_VM_BUILTIN_TABLE_H_
