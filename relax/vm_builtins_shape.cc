// The shape builtins (relax/vm_builtin_call.h): match_shape (check a tensor's or shape's dims against
// immediates and the shape heap, or store them there), make_shape (from immediates and the heap) and
// alloc_shape_heap (the host int64 vector of a function's symbolic dims, zeroed per call).
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "relax/vm_builtin_call.h"
#include "relax/vm_executor.h"

namespace sorun {
namespace relax {
namespace builtins {
namespace {

// Shape heap access: a host int64 tensor, index in range.
StatusOr<int64_t*> HeapSlot(const VmValue& heap, int64_t index) {
  if (heap.kind() != VmValueKind::kTensor) return InvalidArgument("the shape heap is a " + DescribeVmValue(heap));
  Tensor h = heap.tensor();
  if (h.device().device_type != kDLCPU || h.dtype() != DLDataType{kDLInt, 64, 1} || h.ndim() != 1) {
    return InvalidArgument("the shape heap is " + h.Describe() + ", not a host int64 vector");
  }
  if (index < 0 || index >= h.shape()[0]) {
    return OutOfRange("shape heap index " + std::to_string(index) + " outside its " + std::to_string(h.shape()[0]) +
                      " slots");
  }
  return static_cast<int64_t*>(h.data()) + index;
}

// How many (code, value) pairs match_shape / make_shape read: the int at argument `at` of a call with at
// least `min_args` arguments.
StatusOr<int64_t> DimCount(const BuiltinCall& call, size_t min_args, size_t at) {
  const size_t n = call.args().size();
  if (n < min_args) {
    return InvalidArgument("takes at least " + std::to_string(min_args) + " arguments, got " + std::to_string(n));
  }
  SORUN_RETURN_IF_ERROR(call.Want(at, VmValueKind::kInt));
  return call.args()[at].int_value();
}

}  // namespace

StatusOr<VmValue> MatchShape(BuiltinCall& call) {
  const std::vector<VmValue>& a = call.args();
  const size_t n = a.size();
  SORUN_ASSIGN_OR_RETURN(const int64_t size, DimCount(call, 4, 2));
  if (size < 0 || static_cast<uint64_t>(size) > (n - 4) / 2) {
    return InvalidArgument("matches " + std::to_string(size) + " dims with " + std::to_string(n) + " arguments");
  }
  auto ctx = [&] { return ErrorContext(a[static_cast<size_t>(3 + 2 * size)]); };  // built only on an error
  const std::vector<int64_t>* dims_of = nullptr;
  if (a[0].kind() == VmValueKind::kTensor) {
    dims_of = &a[0].tensor_node()->shape_storage;
  } else if (a[0].kind() == VmValueKind::kShape) {
    dims_of = &a[0].shape();
  } else {
    return InvalidArgument(ctx() + "match_shape of a " + DescribeVmValue(a[0]));
  }
  const std::vector<int64_t>& dims = *dims_of;
  if (static_cast<int64_t>(dims.size()) != size) {
    return InvalidArgument(ctx() + "expected " + std::to_string(size) + " dims, got " + std::to_string(dims.size()));
  }
  for (int64_t i = 0; i < size; ++i) {
    const VmValue& code = a[static_cast<size_t>(3 + 2 * i)];
    const VmValue& val = a[static_cast<size_t>(4 + 2 * i)];
    if (code.kind() != VmValueKind::kInt || val.kind() != VmValueKind::kInt) {
      return InvalidArgument("dim " + std::to_string(i) + ": code and value must be ints");
    }
    const int64_t d = dims[static_cast<size_t>(i)];
    switch (code.int_value()) {
      case 0:  // assert equal to the immediate
        if (d != val.int_value()) {
          return InvalidArgument(ctx() + "shape[" + std::to_string(i) + "] is " + std::to_string(d) + ", expected " +
                                 std::to_string(val.int_value()));
        }
        break;
      case 1: {  // store into the heap
        SORUN_ASSIGN_OR_RETURN(int64_t * slot, HeapSlot(a[1], val.int_value()));
        *slot = d;
        break;
      }
      case 2: break;  // no-op
      case 3: {       // assert equal to a stored value
        SORUN_ASSIGN_OR_RETURN(int64_t * slot, HeapSlot(a[1], val.int_value()));
        if (d != *slot) {
          return InvalidArgument(ctx() + "shape[" + std::to_string(i) + "] is " + std::to_string(d) + ", expected " +
                                 std::to_string(*slot) + " (as an earlier dimension)");
        }
        break;
      }
      default:
        return InvalidArgument("dim " + std::to_string(i) + ": unknown match code " + std::to_string(code.int_value()));
    }
  }
  return VmValue();
}

StatusOr<VmValue> MakeShape(BuiltinCall& call) {
  const std::vector<VmValue>& a = call.args();
  const size_t n = a.size();
  SORUN_ASSIGN_OR_RETURN(const int64_t size, DimCount(call, 2, 1));
  if (size < 0 || static_cast<uint64_t>(size) != (n - 2) / 2 || (n - 2) % 2 != 0) {
    return InvalidArgument("makes " + std::to_string(size) + " dims from " + std::to_string(n) + " arguments");
  }
  std::vector<int64_t> dims(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) {
    const VmValue& code = a[static_cast<size_t>(2 + 2 * i)];
    const VmValue& val = a[static_cast<size_t>(3 + 2 * i)];
    if (code.kind() != VmValueKind::kInt || val.kind() != VmValueKind::kInt) {
      return InvalidArgument("dim " + std::to_string(i) + ": code and value must be ints");
    }
    if (code.int_value() == 0) {
      dims[static_cast<size_t>(i)] = val.int_value();
    } else if (code.int_value() == 1) {
      SORUN_ASSIGN_OR_RETURN(int64_t * slot, HeapSlot(a[0], val.int_value()));
      dims[static_cast<size_t>(i)] = *slot;
    } else {
      return InvalidArgument("dim " + std::to_string(i) + ": unknown make_shape code " +
                             std::to_string(code.int_value()));
    }
  }
  return VmValue::Shape(MakeObject<VmShapeObj>(std::move(dims)));
}

StatusOr<VmValue> AllocShapeHeap(BuiltinCall& call) {
  const std::vector<VmValue>& a = call.args();
  SORUN_RETURN_IF_ERROR(call.Count(2, 2));
  SORUN_RETURN_IF_ERROR(call.Want(1, VmValueKind::kInt));
  const int64_t size = a[1].int_value();
  if (size < 0 || size > kMaxShapeHeap) {
    return OutOfRange("shape heap of " + std::to_string(size) + " slots (at most " + std::to_string(kMaxShapeHeap) +
                      ")");
  }
  VmValue* cached = call.CacheSlot();
  if (cached == nullptr || cached->kind() != VmValueKind::kTensor || cached->tensor().shape()[0] != size) {
    SORUN_ASSIGN_OR_RETURN(Tensor heap, Tensor::Empty({size}, DLDataType{kDLInt, 64, 1}, DLDevice{kDLCPU, 0}));
    if (cached == nullptr) {
      std::memset(heap.data(), 0, static_cast<size_t>(size) * sizeof(int64_t));
      return VmValue::FromTensor(heap);
    }
    *cached = VmValue::FromTensor(heap);
  }
  std::memset(cached->tensor().data(), 0, static_cast<size_t>(size) * sizeof(int64_t));
  return *cached;
}

}  // namespace builtins
}  // namespace relax
}  // namespace sorun
