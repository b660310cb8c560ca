// The tuple builtins (relax/vm_builtin_call.h): make_tuple (its arguments as one tuple) and
// tuple_getitem (a field, its index checked).
#include <string>
#include <vector>

#include "relax/vm_builtin_call.h"

namespace sorun {
namespace relax {
namespace builtins {

StatusOr<VmValue> MakeTuple(BuiltinCall& call) {
  auto tuple = MakeObject<VmTupleObj>();
  tuple->fields = call.args();
  return VmValue::Tuple(std::move(tuple));
}

StatusOr<VmValue> TupleGetItem(BuiltinCall& call) {
  const std::vector<VmValue>& a = call.args();
  SORUN_RETURN_IF_ERROR(call.Count(2, 2));
  SORUN_RETURN_IF_ERROR(call.Want(0, VmValueKind::kTuple));
  SORUN_RETURN_IF_ERROR(call.Want(1, VmValueKind::kInt));
  const auto& fields = a[0].tuple()->fields;
  if (a[1].int_value() < 0 || a[1].int_value() >= static_cast<int64_t>(fields.size())) {
    return OutOfRange("index " + std::to_string(a[1].int_value()) + " of a tuple of " + std::to_string(fields.size()));
  }
  return fields[static_cast<size_t>(a[1].int_value())];
}

}  // namespace builtins
}  // namespace relax
}  // namespace sorun
