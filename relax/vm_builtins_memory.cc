// The memory builtins (relax/vm_builtin_call.h): alloc_storage (a block of device memory), alloc_tensor
// (a view into one) and reshape (a view of a tensor with another shape). Each call site keeps what it
// made, per occurrence within a run, and returns it again on the next run when it fits
// (BuiltinCall::CacheSlot), so a static-shape model allocates nothing after its first run.
#include <string>
#include <utility>
#include <vector>

#include "relax/vm_builtin_call.h"

namespace sorun {
namespace relax {
namespace builtins {
namespace {

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
         n->shape_storage == shape && n->dtype == dtype;
}

// The view `shape` x `dtype` at byte `offset` of `base`: the one this call site made for this occurrence
// on an earlier run when it is the same view, else a new one (kept for the next run).
StatusOr<VmValue> CachedView(BuiltinCall& call, const Tensor& base, uint64_t offset, const std::vector<int64_t>& shape,
                             DLDataType dtype) {
  VmValue* cached = call.CacheSlot();
  if (cached != nullptr && SameView(*cached, base.node().get(), offset, shape, dtype)) return *cached;
  SORUN_ASSIGN_OR_RETURN(Tensor view, base.View(shape, dtype, offset));
  SORUN_RETURN_IF_ERROR(NormalizeView(view));
  if (cached == nullptr) return VmValue::FromTensor(view);
  *cached = VmValue::FromTensor(view);
  return *cached;
}

}  // namespace

StatusOr<VmValue> AllocStorage(BuiltinCall& call) {
  const std::vector<VmValue>& a = call.args();
  SORUN_RETURN_IF_ERROR(call.Count(4, 5));
  SORUN_RETURN_IF_ERROR(call.Want(1, VmValueKind::kShape));
  SORUN_RETURN_IF_ERROR(call.Want(2, VmValueKind::kInt));
  if (a[1].shape().size() != 1 || a[1].shape()[0] < 0) {
    return InvalidArgument("storage size is " + DescribeVmValue(a[1]) + ", expected a 1-d shape of bytes");
  }
  const std::vector<DLDevice>& devices = call.devices();
  int64_t index = a[2].int_value();
  if (index == -1) index = static_cast<int64_t>(devices.size()) - 1;
  if (index < 0 || index >= static_cast<int64_t>(devices.size())) {
    return OutOfRange("device index " + std::to_string(a[2].int_value()) + " outside the executor's " +
                      std::to_string(devices.size()) + " devices");
  }
  const DLDevice device = devices[static_cast<size_t>(index)];
  const int64_t nbytes = a[1].shape()[0];
  VmValue* cached = call.CacheSlot();
  if (cached != nullptr && cached->kind() == VmValueKind::kStorage) {
    const Tensor& b = cached->storage()->buffer;
    if (b.shape()[0] >= nbytes && b.device().device_type == device.device_type &&
        b.device().device_id == device.device_id) {
      return *cached;
    }
  }
  auto buffer = Tensor::Empty({nbytes}, DLDataType{kDLUInt, 8, 1}, device);
  if (!buffer.ok()) return std::move(buffer).status().Annotate("alloc_storage of " + std::to_string(nbytes) + " bytes");
  if (cached == nullptr) return VmValue::Storage(MakeObject<VmStorageObj>(std::move(*buffer)));
  const uint64_t released = cached->kind() == VmValueKind::kStorage ? cached->storage()->buffer.nbytes() : 0;
  call.TrackStorage(released, static_cast<uint64_t>(nbytes));
  *cached = VmValue::Storage(MakeObject<VmStorageObj>(std::move(*buffer)));
  return *cached;
}

StatusOr<VmValue> AllocTensor(BuiltinCall& call) {
  const std::vector<VmValue>& a = call.args();
  SORUN_RETURN_IF_ERROR(call.Count(4, 5));
  SORUN_RETURN_IF_ERROR(call.Want(0, VmValueKind::kStorage));
  SORUN_RETURN_IF_ERROR(call.Want(1, VmValueKind::kInt));
  SORUN_RETURN_IF_ERROR(call.Want(2, VmValueKind::kShape));
  SORUN_RETURN_IF_ERROR(call.Want(3, VmValueKind::kDataType));
  if (a[1].int_value() < 0) return InvalidArgument("negative offset " + std::to_string(a[1].int_value()));
  const uint64_t offset = static_cast<uint64_t>(a[1].int_value());
  return CachedView(call, a[0].storage()->buffer, offset, a[2].shape(), a[3].dtype());
}

StatusOr<VmValue> Reshape(BuiltinCall& call) {
  const std::vector<VmValue>& a = call.args();
  SORUN_RETURN_IF_ERROR(call.Count(2, 2));
  SORUN_RETURN_IF_ERROR(call.Want(0, VmValueKind::kTensor));
  SORUN_RETURN_IF_ERROR(call.Want(1, VmValueKind::kShape));
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
  return CachedView(call, t, 0, a[1].shape(), t.dtype());
}

}  // namespace builtins
}  // namespace relax
}  // namespace sorun
