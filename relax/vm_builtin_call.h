// The builtins of the sorun Relax VM: one handler per row of relax/vm_builtin_table.h, with TVM's
// `vm.builtin.*` semantics (src/runtime/vm/builtin.cc) and every index, count and kind checked, since
// the bytecode is data. VmExecutor::CallBuiltin evaluates a call's arguments and runs the row's handler
// (BuiltinHandlerFor, no switch). Handlers by family:
//   relax/vm_builtins_check.cc    check_tensor_info, check_shape_info, check_prim_value_info,
//                                 check_tuple_info, check_func_info
//   relax/vm_builtins_shape.cc    match_shape, make_shape, alloc_shape_heap (the shape heap)
//   relax/vm_builtins_memory.cc   alloc_storage, alloc_tensor, reshape
//   relax/vm_builtins_tuple.cc    make_tuple, tuple_getitem
//   relax/vm_builtins_control.cc  null_value, copy, read_if_cond
// A handler sees the executor through BuiltinCall only: the arguments, the call site's cache of what it
// made (memory-making builtins reuse it on the next run, relax/vm_executor.h), the devices, the storage
// counter and the dtype codes. A BuiltinCall lives for one call and borrows the executor and the
// arguments; single-threaded, as the executor.
#ifndef SORUN_RELAX_VM_BUILTIN_CALL_H_
#define SORUN_RELAX_VM_BUILTIN_CALL_H_

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "relax/vm_builtin_table.h"
#include "relax/vm_value.h"
#include "runtime/data_type.h"

namespace sorun {
namespace relax {

class VmExecutor;

class BuiltinCall {
 public:
  // The call at instruction `pc` of `vm`'s program, with its evaluated `args`; both must outlive it.
  BuiltinCall(VmExecutor& vm, int64_t pc, const std::vector<VmValue>& args) : vm_(vm), pc_(pc), args_(args) {}

  const std::vector<VmValue>& args() const { return args_; }
  // InvalidArgument unless lo <= args().size() <= hi ("takes 3-4 arguments, got 2").
  Status Count(size_t lo, size_t hi) const;
  // InvalidArgument unless argument `i` is a `kind` ("argument 1 is a tensor ..., expected a int").
  Status Want(size_t i, VmValueKind kind) const;

  // The executable's dtype codes (error messages name dtypes in them).
  DTypeCodes dtype_codes() const;
  // The executor's devices, the host device last (alloc_storage's index -1).
  const std::vector<DLDevice>& devices() const;
  // This occurrence's slot in the call site's cache (what it made on an earlier run, null at first);
  // null past kMaxCachedOccurrences occurrences in one run (the result is then not kept).
  VmValue* CacheSlot();
  // Storage of `allocated` bytes replaces `released` bytes in the executor's activation count.
  void TrackStorage(uint64_t released, uint64_t allocated);

 private:
  VmExecutor& vm_;
  int64_t pc_;
  const std::vector<VmValue>& args_;
};

using BuiltinHandler = StatusOr<VmValue> (*)(BuiltinCall& call);

// The handler of `id`'s row.
BuiltinHandler BuiltinHandlerFor(Builtin id);

namespace builtins {

// The optional error-context string TVM's compiler passes last ("ErrorContext(fn=main, ...): "), or "".
std::string ErrorContext(const VmValue& v);

// relax/vm_builtins_check.cc
StatusOr<VmValue> CheckTensorInfo(BuiltinCall& call);
StatusOr<VmValue> CheckShapeInfo(BuiltinCall& call);
StatusOr<VmValue> CheckPrimValueInfo(BuiltinCall& call);
StatusOr<VmValue> CheckTupleInfo(BuiltinCall& call);
StatusOr<VmValue> CheckFuncInfo(BuiltinCall& call);
// relax/vm_builtins_shape.cc
StatusOr<VmValue> MatchShape(BuiltinCall& call);
StatusOr<VmValue> MakeShape(BuiltinCall& call);
StatusOr<VmValue> AllocShapeHeap(BuiltinCall& call);
// relax/vm_builtins_memory.cc
StatusOr<VmValue> AllocStorage(BuiltinCall& call);
StatusOr<VmValue> AllocTensor(BuiltinCall& call);
StatusOr<VmValue> Reshape(BuiltinCall& call);
// relax/vm_builtins_tuple.cc
StatusOr<VmValue> MakeTuple(BuiltinCall& call);
StatusOr<VmValue> TupleGetItem(BuiltinCall& call);
// relax/vm_builtins_control.cc
StatusOr<VmValue> NullValue(BuiltinCall& call);
StatusOr<VmValue> Copy(BuiltinCall& call);
StatusOr<VmValue> ReadIfCond(BuiltinCall& call);

}  // namespace builtins
}  // namespace relax
}  // namespace sorun

#endif  // SORUN_RELAX_VM_BUILTIN_CALL_H_
