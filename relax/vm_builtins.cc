// The builtins of the sorun Relax VM (VmExecutor::CallBuiltin): TVM's `vm.builtin.*` semantics
// (src/runtime/vm/builtin.cc) with every index, count and kind checked, since the bytecode is data.
// Memory-making builtins reuse what their call site made on the previous run (relax/vm_executor.h).
#include <cstring>
#include <string>
#include <utility>

#include "relax/vm_executor.h"
#include "runtime/data_type.h"
#include "runtime/device_api.h"

namespace sorun {
namespace relax {

const char* VmValueKindName(VmValueKind kind) {
  switch (kind) {
    case VmValueKind::kNull: return "null";
    case VmValueKind::kInt: return "int";
    case VmValueKind::kFloat: return "float";
    case VmValueKind::kDataType: return "dtype";
    case VmValueKind::kString: return "string";
    case VmValueKind::kShape: return "shape";
    case VmValueKind::kTensor: return "tensor";
    case VmValueKind::kStorage: return "storage";
    case VmValueKind::kTuple: return "tuple";
    case VmValueKind::kFunction: return "function";
    case VmValueKind::kVmContext: return "VM context";
  }
  return "?";
}

std::string DescribeVmValue(const VmValue& v) {
  switch (v.kind()) {
    case VmValueKind::kInt: return "int " + std::to_string(v.int_value());
    case VmValueKind::kTensor: return "tensor " + v.tensor().Describe();
    case VmValueKind::kShape: {
      std::string s = "shape (";
      for (size_t i = 0; i < v.shape().size(); ++i) s += (i ? ", " : "") + std::to_string(v.shape()[i]);
      return s + ")";
    }
    case VmValueKind::kTuple: return "tuple of " + std::to_string(v.tuple()->fields.size());
    case VmValueKind::kDataType: return "dtype " + DTypeToString(v.dtype());
    default: return VmValueKindName(v.kind());
  }
}

namespace {

bool SameDType(DLDataType a, DLDataType b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }

// The optional error-context string TVM's compiler passes last ("ErrorContext(fn=main, ...)").
std::string ErrorContext(const VmValue& v) { return v.kind() == VmValueKind::kString ? v.str() + ": " : std::string(); }

// On the CPU a view's offset moves into `data` (TVM's kernels require byte_offset == 0); device
// memory handles cannot be offset.
Status NormalizeView(Tensor& t) {
  TensorNode* n = t.node().get();
  if (n->byte_offset == 0) return Status::Ok();
  if (n->device.device_type != kDLCPU) {
    return Unimplemented("a tensor at byte " + std::to_string(n->byte_offset) +
                         " of device storage (sorun's VM places device tensors at offset 0 only)");
  }
  n->data = static_cast<uint8_t*>(n->data) + n->byte_offset;
  n->byte_offset = 0;
  return Status::Ok();
}

bool SameView(const VmValue& cached, const TensorNode* base, uint64_t offset, const std::vector<int64_t>& shape,
              DLDataType dtype) {
  if (cached.kind() != VmValueKind::kTensor) return false;
  const TensorNode* n = cached.tensor_node();
  return n->memory.get() == base && n->data == static_cast<uint8_t*>(base->data) + base->byte_offset + offset &&
         n->shape_storage == shape && SameDType(n->dtype, dtype);
}

}  // namespace

StatusOr<VmValue> VmExecutor::CallBuiltin(const VmCallee& callee, const VmInstruction& in, int64_t pc, Frame& frame) {
  std::vector<VmValue>& a = builtin_args_;
  a.clear();
  for (const VmArg& arg : in.args) a.push_back(ArgValue(arg, frame));
  const size_t n = a.size();
  auto count = [&](size_t lo, size_t hi) -> Status {
    if (n < lo || n > hi) {
      return InvalidArgument("takes " +
                             (lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi)) +
                             " arguments, got " + std::to_string(n));
    }
    return Status::Ok();
  };
  auto want = [&](size_t i, VmValueKind kind) -> Status {
    if (a[i].kind() != kind) {
      return InvalidArgument("argument " + std::to_string(i) + " is a " + DescribeVmValue(a[i]) + ", expected a " +
                             VmValueKindName(kind));
    }
    return Status::Ok();
  };
  // Shape heap access: a host int64 tensor, index in range.
  auto heap_slot = [&](const VmValue& heap, int64_t index) -> StatusOr<int64_t*> {
    if (heap.kind() != VmValueKind::kTensor) return InvalidArgument("the shape heap is a " + DescribeVmValue(heap));
    Tensor h = heap.tensor();
    if (h.device().device_type != kDLCPU || !SameDType(h.dtype(), DLDataType{kDLInt, 64, 1}) || h.ndim() != 1) {
      return InvalidArgument("the shape heap is " + h.Describe() + ", not a host int64 vector");
    }
    if (index < 0 || index >= h.shape()[0]) {
      return OutOfRange("shape heap index " + std::to_string(index) + " outside its " + std::to_string(h.shape()[0]) +
                        " slots");
    }
    return static_cast<int64_t*>(h.data()) + index;
  };

  switch (callee.builtin) {
    case Builtin::kCheckTensorInfo: {
      SORUN_RETURN_IF_ERROR(count(3, 4));
      auto ctx = [&] { return ErrorContext(a[n - 1]); };  // built only on an error
      if (a[0].kind() != VmValueKind::kTensor) {
        return InvalidArgument(ctx() + "expected a tensor, got a " + DescribeVmValue(a[0]));
      }
      SORUN_RETURN_IF_ERROR(want(1, VmValueKind::kInt));
      const TensorNode* t = a[0].tensor_node();
      if (a[1].int_value() != -1 && t->ndim != a[1].int_value()) {
        return InvalidArgument(ctx() + "expected a tensor of ndim " + std::to_string(a[1].int_value()) + ", got " +
                               a[0].tensor().Describe());
      }
      if (n == 4 && a[2].kind() == VmValueKind::kDataType && !SameDType(t->dtype, a[2].dtype())) {
        return InvalidArgument(ctx() + "expected a tensor of dtype " +
                               DTypeToString(a[2].dtype(), program_->dtype_codes()) + ", got " +
                               a[0].tensor().Describe());
      }
      return VmValue();
    }
    case Builtin::kMatchShape: {
      if (n < 4) return InvalidArgument("takes at least 4 arguments, got " + std::to_string(n));
      SORUN_RETURN_IF_ERROR(want(2, VmValueKind::kInt));
      const int64_t size = a[2].int_value();
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
        return InvalidArgument(ctx() + "expected " + std::to_string(size) + " dims, got " +
                               std::to_string(dims.size()));
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
              return InvalidArgument(ctx() + "shape[" + std::to_string(i) + "] is " + std::to_string(d) +
                                     ", expected " + std::to_string(val.int_value()));
            }
            break;
          case 1: {  // store into the heap
            SORUN_ASSIGN_OR_RETURN(int64_t * slot, heap_slot(a[1], val.int_value()));
            *slot = d;
            break;
          }
          case 2: break;  // no-op
          case 3: {       // assert equal to a stored value
            SORUN_ASSIGN_OR_RETURN(int64_t * slot, heap_slot(a[1], val.int_value()));
            if (d != *slot) {
              return InvalidArgument(ctx() + "shape[" + std::to_string(i) + "] is " + std::to_string(d) +
                                     ", expected " + std::to_string(*slot) + " (as an earlier dimension)");
            }
            break;
          }
          default:
            return InvalidArgument("dim " + std::to_string(i) + ": unknown match code " +
                                   std::to_string(code.int_value()));
        }
      }
      return VmValue();
    }
    case Builtin::kAllocStorage: {
      SORUN_RETURN_IF_ERROR(count(4, 5));
      SORUN_RETURN_IF_ERROR(want(1, VmValueKind::kShape));
      SORUN_RETURN_IF_ERROR(want(2, VmValueKind::kInt));
      if (a[1].shape().size() != 1 || a[1].shape()[0] < 0) {
        return InvalidArgument("storage size is " + DescribeVmValue(a[1]) + ", expected a 1-d shape of bytes");
      }
      int64_t index = a[2].int_value();
      if (index == -1) index = static_cast<int64_t>(devices_.size()) - 1;
      if (index < 0 || index >= static_cast<int64_t>(devices_.size())) {
        return OutOfRange("device index " + std::to_string(a[2].int_value()) + " outside the executor's " +
                          std::to_string(devices_.size()) + " devices");
      }
      const DLDevice device = devices_[static_cast<size_t>(index)];
      const int64_t nbytes = a[1].shape()[0];
      SiteCache& site = Site(pc);
      const size_t k = site.used++;
      if (k < site.made.size() && site.made[k].kind() == VmValueKind::kStorage) {
        const Tensor& b = site.made[k].storage()->buffer;
        if (b.shape()[0] >= nbytes && b.device().device_type == device.device_type &&
            b.device().device_id == device.device_id) {
          return site.made[k];
        }
      }
      auto buffer = Tensor::Empty({nbytes}, DLDataType{kDLUInt, 8, 1}, device);
      if (!buffer.ok())
        return std::move(buffer).status().Annotate("alloc_storage of " + std::to_string(nbytes) + " bytes");
      if (k >= kMaxCachedOccurrences) return VmValue::Storage(MakeObject<VmStorageObj>(std::move(*buffer)));
      if (k >= site.made.size()) site.made.resize(k + 1);
      if (site.made[k].kind() == VmValueKind::kStorage) storage_bytes_ -= site.made[k].storage()->buffer.nbytes();
      storage_bytes_ += static_cast<uint64_t>(nbytes);
      site.made[k] = VmValue::Storage(MakeObject<VmStorageObj>(std::move(*buffer)));
      return site.made[k];
    }
    case Builtin::kAllocTensor: {
      SORUN_RETURN_IF_ERROR(count(4, 5));
      SORUN_RETURN_IF_ERROR(want(0, VmValueKind::kStorage));
      SORUN_RETURN_IF_ERROR(want(1, VmValueKind::kInt));
      SORUN_RETURN_IF_ERROR(want(2, VmValueKind::kShape));
      SORUN_RETURN_IF_ERROR(want(3, VmValueKind::kDataType));
      if (a[1].int_value() < 0) return InvalidArgument("negative offset " + std::to_string(a[1].int_value()));
      const uint64_t offset = static_cast<uint64_t>(a[1].int_value());
      const Tensor& base = a[0].storage()->buffer;
      SiteCache& site = Site(pc);
      const size_t k = site.used++;
      if (k < site.made.size() && SameView(site.made[k], base.node().get(), offset, a[2].shape(), a[3].dtype())) {
        return site.made[k];
      }
      SORUN_ASSIGN_OR_RETURN(Tensor view, base.View(a[2].shape(), a[3].dtype(), offset));
      SORUN_RETURN_IF_ERROR(NormalizeView(view));
      if (k >= kMaxCachedOccurrences) return VmValue::FromTensor(view);
      if (k >= site.made.size()) site.made.resize(k + 1);
      site.made[k] = VmValue::FromTensor(view);
      return site.made[k];
    }
    case Builtin::kNullValue: return VmValue();
    case Builtin::kReshape: {
      SORUN_RETURN_IF_ERROR(count(2, 2));
      SORUN_RETURN_IF_ERROR(want(0, VmValueKind::kTensor));
      SORUN_RETURN_IF_ERROR(want(1, VmValueKind::kShape));
      const Tensor t = a[0].tensor();
      int64_t elements = 1;
      for (int64_t d : a[1].shape()) {
        if (d < 0 || (d != 0 && elements > (int64_t{1} << 62) / d))
          return InvalidArgument("bad shape " + DescribeVmValue(a[1]));
        elements *= d;
      }
      if (elements != t.num_elements()) {
        return InvalidArgument("reshape of " + t.Describe() + " to " + DescribeVmValue(a[1]) +
                               " changes the element count");
      }
      SiteCache& site = Site(pc);
      const size_t k = site.used++;
      if (k < site.made.size() && SameView(site.made[k], t.node().get(), 0, a[1].shape(), t.dtype())) {
        return site.made[k];
      }
      SORUN_ASSIGN_OR_RETURN(Tensor view, t.View(a[1].shape(), t.dtype(), 0));
      SORUN_RETURN_IF_ERROR(NormalizeView(view));
      if (k >= kMaxCachedOccurrences) return VmValue::FromTensor(view);
      if (k >= site.made.size()) site.made.resize(k + 1);
      site.made[k] = VmValue::FromTensor(view);
      return site.made[k];
    }
    case Builtin::kMakeTuple: {
      auto tuple = MakeObject<VmTupleObj>();
      tuple->fields = a;
      return VmValue::Tuple(std::move(tuple));
    }
    case Builtin::kTupleGetItem: {
      SORUN_RETURN_IF_ERROR(count(2, 2));
      SORUN_RETURN_IF_ERROR(want(0, VmValueKind::kTuple));
      SORUN_RETURN_IF_ERROR(want(1, VmValueKind::kInt));
      const auto& fields = a[0].tuple()->fields;
      if (a[1].int_value() < 0 || a[1].int_value() >= static_cast<int64_t>(fields.size())) {
        return OutOfRange("index " + std::to_string(a[1].int_value()) + " of a tuple of " +
                          std::to_string(fields.size()));
      }
      return fields[static_cast<size_t>(a[1].int_value())];
    }
    case Builtin::kCopy: {
      SORUN_RETURN_IF_ERROR(count(1, 1));
      return a[0];
    }
    case Builtin::kReadIfCond: {
      SORUN_RETURN_IF_ERROR(count(1, 1));
      if (a[0].kind() == VmValueKind::kInt) return VmValue::Int(a[0].int_value() != 0);
      SORUN_RETURN_IF_ERROR(want(0, VmValueKind::kTensor));
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
    case Builtin::kCheckShapeInfo: {
      SORUN_RETURN_IF_ERROR(count(3, 3));
      SORUN_RETURN_IF_ERROR(want(1, VmValueKind::kInt));
      auto ctx = [&] { return ErrorContext(a[2]); };  // built only on an error
      if (a[0].kind() != VmValueKind::kShape)
        return InvalidArgument(ctx() + "expected a shape, got a " + DescribeVmValue(a[0]));
      if (a[1].int_value() != -1 && static_cast<int64_t>(a[0].shape().size()) != a[1].int_value()) {
        return InvalidArgument(ctx() + "expected a shape of " + std::to_string(a[1].int_value()) + " dims, got " +
                               DescribeVmValue(a[0]));
      }
      return VmValue();
    }
    case Builtin::kCheckPrimValueInfo: {
      SORUN_RETURN_IF_ERROR(count(3, 3));
      auto ctx = [&] { return ErrorContext(a[2]); };  // built only on an error
      const bool is_float = a[1].kind() == VmValueKind::kDataType && a[1].dtype().code == kDLFloat;
      const bool ok = a[0].kind() == VmValueKind::kInt || (is_float && a[0].kind() == VmValueKind::kFloat);
      if (!ok) return InvalidArgument(ctx() + "expected a scalar, got a " + DescribeVmValue(a[0]));
      return VmValue();
    }
    case Builtin::kCheckTupleInfo: {
      SORUN_RETURN_IF_ERROR(count(3, 3));
      SORUN_RETURN_IF_ERROR(want(1, VmValueKind::kInt));
      auto ctx = [&] { return ErrorContext(a[2]); };  // built only on an error
      if (a[0].kind() != VmValueKind::kTuple)
        return InvalidArgument(ctx() + "expected a tuple, got a " + DescribeVmValue(a[0]));
      if (static_cast<int64_t>(a[0].tuple()->fields.size()) != a[1].int_value()) {
        return InvalidArgument(ctx() + "expected a tuple of " + std::to_string(a[1].int_value()) + ", got " +
                               DescribeVmValue(a[0]));
      }
      return VmValue();
    }
    case Builtin::kCheckFuncInfo: {
      SORUN_RETURN_IF_ERROR(count(2, 2));
      if (a[0].kind() != VmValueKind::kFunction) {
        return InvalidArgument(ErrorContext(a[1]) + "expected a function, got a " + DescribeVmValue(a[0]));
      }
      return VmValue();
    }
    case Builtin::kAllocShapeHeap: {
      SORUN_RETURN_IF_ERROR(count(2, 2));
      SORUN_RETURN_IF_ERROR(want(1, VmValueKind::kInt));
      const int64_t size = a[1].int_value();
      if (size < 0 || size > kMaxShapeHeap) {
        return OutOfRange("shape heap of " + std::to_string(size) + " slots (at most " + std::to_string(kMaxShapeHeap) +
                          ")");
      }
      SiteCache& site = Site(pc);
      const size_t k = site.used++;
      if (k >= site.made.size() || site.made[k].kind() != VmValueKind::kTensor ||
          site.made[k].tensor().shape()[0] != size) {
        SORUN_ASSIGN_OR_RETURN(Tensor heap, Tensor::Empty({size}, DLDataType{kDLInt, 64, 1}, DLDevice{kDLCPU, 0}));
        if (k >= kMaxCachedOccurrences) {
          std::memset(heap.data(), 0, static_cast<size_t>(size) * sizeof(int64_t));
          return VmValue::FromTensor(heap);
        }
        if (k >= site.made.size()) site.made.resize(k + 1);
        site.made[k] = VmValue::FromTensor(heap);
      }
      std::memset(site.made[k].tensor().data(), 0, static_cast<size_t>(size) * sizeof(int64_t));
      return site.made[k];
    }
    case Builtin::kMakeShape: {
      if (n < 2) return InvalidArgument("takes at least 2 arguments, got " + std::to_string(n));
      SORUN_RETURN_IF_ERROR(want(1, VmValueKind::kInt));
      const int64_t size = a[1].int_value();
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
          SORUN_ASSIGN_OR_RETURN(int64_t * slot, heap_slot(a[0], val.int_value()));
          dims[static_cast<size_t>(i)] = *slot;
        } else {
          return InvalidArgument("dim " + std::to_string(i) + ": unknown make_shape code " +
                                 std::to_string(code.int_value()));
        }
      }
      return VmValue::Shape(MakeObject<VmShapeObj>(std::move(dims)));
    }
  }
  return Internal("unknown builtin");
}

}  // namespace relax
}  // namespace sorun
