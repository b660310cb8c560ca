// The value and control builtins (relax/vm_builtin_call.h): null_value, copy (the same value: values
// are shared, never copied) and read_if_cond (the int an `If` instruction branches on, read from an
// int or from an integer tensor's first element, copied to the host when on a device).
#include <cstring>
#include <vector>

#include "relax/vm_builtin_call.h"

namespace sorun {
namespace relax {
namespace builtins {

StatusOr<VmValue> NullValue(BuiltinCall&) { return VmValue(); }

StatusOr<VmValue> Copy(BuiltinCall& call) {
  SORUN_RETURN_IF_ERROR(call.Count(1, 1));
  return call.args()[0];
}

StatusOr<VmValue> ReadIfCond(BuiltinCall& call) {
  const std::vector<VmValue>& a = call.args();
  SORUN_RETURN_IF_ERROR(call.Count(1, 1));
  if (a[0].kind() == VmValueKind::kInt) return VmValue::Int(a[0].int_value() != 0);
  SORUN_RETURN_IF_ERROR(call.Want(0, VmValueKind::kTensor));
  Tensor t = a[0].tensor();
  const DLDataType dt = t.dtype();
  if ((dt.code != kDLInt && dt.code != kDLUInt && dt.code != kDLPackBoolCode) || t.num_elements() < 1 ||
      (dt.bits != 1 && dt.bits != 8 && dt.bits != 16 && dt.bits != 32 && dt.bits != 64)) {
    return InvalidArgument("if condition " + t.Describe() + " is not an integer scalar");
  }
  if (t.device().device_type != kDLCPU) {
    SORUN_ASSIGN_OR_RETURN(t, t.CopyToDevice(DLDevice{kDLCPU, 0}));
  }
  int64_t value = 0;
  std::memcpy(&value, static_cast<const uint8_t*>(t.data()) + t.dl()->byte_offset, dt.bits <= 8 ? 1 : dt.bits / 8);
  if (dt.bits == 1) value &= 1;
  return VmValue::Int(value != 0);
}

}  // namespace builtins
}  // namespace relax
}  // namespace sorun
