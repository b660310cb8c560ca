// The check builtins (relax/vm_builtin_call.h): check_tensor_info, check_shape_info,
// check_prim_value_info, check_tuple_info, check_func_info. Each returns null or an InvalidArgument
// led by the call's error context.
#include <string>
#include <vector>

#include "relax/vm_builtin_call.h"

namespace sorun {
namespace relax {
namespace builtins {
namespace {

// check_shape_info(value, i<ndim>, c[err]) and check_tuple_info(value, i<size>, c[err]): `value` is a
// shape of that many dims (-1: any) or a tuple of that many fields.
StatusOr<VmValue> CheckCount(BuiltinCall& call, VmValueKind kind) {
  const std::vector<VmValue>& a = call.args();
  SORUN_RETURN_IF_ERROR(call.Count(3, 3));
  SORUN_RETURN_IF_ERROR(call.Want(1, VmValueKind::kInt));
  auto ctx = [&] { return ErrorContext(a[2]); };  // built only on an error
  if (a[0].kind() != kind) {
    return InvalidArgument(ctx() + "expected a " + VmValueKindName(kind) + ", got a " + DescribeVmValue(a[0]));
  }
  const bool shape = kind == VmValueKind::kShape;
  const size_t count = shape ? a[0].shape().size() : a[0].tuple()->fields.size();
  const int64_t expected = a[1].int_value();
  if ((!shape || expected != -1) && static_cast<int64_t>(count) != expected) {
    return InvalidArgument(ctx() + "expected a " + VmValueKindName(kind) + " of " + std::to_string(expected) +
                           (shape ? " dims" : "") + ", got " + DescribeVmValue(a[0]));
  }
  return VmValue();
}

}  // namespace

StatusOr<VmValue> CheckTensorInfo(BuiltinCall& call) {
  const std::vector<VmValue>& a = call.args();
  const size_t n = a.size();
  SORUN_RETURN_IF_ERROR(call.Count(3, 4));
  auto ctx = [&] { return ErrorContext(a[n - 1]); };  // built only on an error
  // The tensor as the executable spells its dtype (a TVM 0.23+ bool is "bool", not TVM 0.20's code 6).
  auto got = [&] {
    const Tensor& t = a[0].tensor();
    return DTypeToString(t.dtype(), call.dtype_codes()) + ShapeToString(t.shape().data(), t.ndim()) + " on " +
           DeviceToString(t.device());
  };
  if (a[0].kind() != VmValueKind::kTensor) {
    return InvalidArgument(ctx() + "expected a tensor, got a " + DescribeVmValue(a[0]));
  }
  SORUN_RETURN_IF_ERROR(call.Want(1, VmValueKind::kInt));
  const TensorNode* t = a[0].tensor_node();
  if (a[1].int_value() != -1 && t->ndim != a[1].int_value()) {
    return InvalidArgument(ctx() + "expected a tensor of ndim " + std::to_string(a[1].int_value()) + ", got " + got());
  }
  if (n == 4 && a[2].kind() == VmValueKind::kDataType && t->dtype != a[2].dtype()) {
    return InvalidArgument(ctx() + "expected a tensor of dtype " + DTypeToString(a[2].dtype(), call.dtype_codes()) +
                           ", got " + got());
  }
  return VmValue();
}

StatusOr<VmValue> CheckPrimValueInfo(BuiltinCall& call) {
  const std::vector<VmValue>& a = call.args();
  SORUN_RETURN_IF_ERROR(call.Count(3, 3));
  auto ctx = [&] { return ErrorContext(a[2]); };  // built only on an error
  const bool is_float = a[1].kind() == VmValueKind::kDataType && a[1].dtype().code == kDLFloat;
  const bool ok = a[0].kind() == VmValueKind::kInt || (is_float && a[0].kind() == VmValueKind::kFloat);
  if (!ok) return InvalidArgument(ctx() + "expected a scalar, got a " + DescribeVmValue(a[0]));
  return VmValue();
}

StatusOr<VmValue> CheckShapeInfo(BuiltinCall& call) { return CheckCount(call, VmValueKind::kShape); }

StatusOr<VmValue> CheckTupleInfo(BuiltinCall& call) { return CheckCount(call, VmValueKind::kTuple); }

StatusOr<VmValue> CheckFuncInfo(BuiltinCall& call) {
  const std::vector<VmValue>& a = call.args();
  SORUN_RETURN_IF_ERROR(call.Count(2, 2));
  if (a[0].kind() != VmValueKind::kFunction) {
    return InvalidArgument(ErrorContext(a[1]) + "expected a function, got a " + DescribeVmValue(a[0]));
  }
  return VmValue();
}

}  // namespace builtins
}  // namespace relax
}  // namespace sorun
