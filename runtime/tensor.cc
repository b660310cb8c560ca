#include "runtime/tensor.h"

#include <cstring>
#include <utility>

#include "runtime/data_type.h"
#include "runtime/device_api.h"

namespace sorun {
namespace {

// Device memory from a DeviceApi, freed with it.
class DeviceAllocation final : public Object {
 public:
  DeviceAllocation(DeviceApi* api, DLDevice device, void* ptr) : api_(api), device_(device), ptr_(ptr) {}
  ~DeviceAllocation() override { api_->Free(device_, ptr_); }

 private:
  DeviceApi* api_;
  DLDevice device_;
  void* ptr_;
};

// A DLPack producer's tensor; its deleter runs when the last user goes.
class ManagedTensorOwner final : public Object {
 public:
  explicit ManagedTensorOwner(DLManagedTensor* managed) : managed_(managed) {}
  ~ManagedTensorOwner() override {
    if (managed_->deleter) managed_->deleter(managed_);
  }

 private:
  DLManagedTensor* managed_;
};

ObjectPtr<TensorNode> NewNode(void* data, const std::vector<int64_t>& shape, DLDataType dtype, DLDevice device) {
  ObjectPtr<TensorNode> node = MakeObject<TensorNode>();
  node->shape_storage = shape;
  node->data = data;
  node->device = device;
  node->ndim = static_cast<int32_t>(shape.size());
  node->dtype = dtype;
  node->shape = node->shape_storage.empty() ? nullptr : node->shape_storage.data();
  node->strides = nullptr;
  node->byte_offset = 0;
  return node;
}

void DeleteExported(DLManagedTensor* self) {
  static_cast<TensorNode*>(self->manager_ctx)->DecRef();
  delete self;
}

}  // namespace

TensorNode::TensorNode() {
  data = nullptr;
  device = DLDevice{kDLCPU, 0};
  ndim = 0;
  dtype = DLDataType{kDLFloat, 32, 1};
  shape = nullptr;
  strides = nullptr;
  byte_offset = 0;
}

StatusOr<Tensor> Tensor::Empty(const std::vector<int64_t>& shape, DLDataType dtype, DLDevice device) {
  SORUN_ASSIGN_OR_RETURN(uint64_t nbytes, ShapeByteSize(shape.data(), static_cast<int>(shape.size()), dtype));
  SORUN_ASSIGN_OR_RETURN(DeviceApi * api, GetDeviceApi(device.device_type));
  SORUN_ASSIGN_OR_RETURN(void* ptr, api->Alloc(device, static_cast<size_t>(nbytes), kAllocAlignment));
  ObjectPtr<TensorNode> node = NewNode(ptr, shape, dtype, device);
  node->memory = MakeObject<DeviceAllocation>(api, device, ptr);
  node->memory_bytes = nbytes;
  return Tensor(std::move(node));
}

StatusOr<Tensor> Tensor::Wrap(void* data, uint64_t capacity, const std::vector<int64_t>& shape, DLDataType dtype,
                              DLDevice device, ObjectPtr<Object> owner) {
  SORUN_ASSIGN_OR_RETURN(uint64_t nbytes, ShapeByteSize(shape.data(), static_cast<int>(shape.size()), dtype));
  if (nbytes > capacity) {
    return InvalidArgument("tensor " + DTypeToString(dtype) +
                           ShapeToString(shape.data(), static_cast<int>(shape.size())) + " needs " +
                           std::to_string(nbytes) + " bytes but only " + std::to_string(capacity) + " are available");
  }
  ObjectPtr<TensorNode> node = NewNode(data, shape, dtype, device);
  node->memory = std::move(owner);
  node->memory_bytes = capacity;
  return Tensor(std::move(node));
}

StatusOr<Tensor> Tensor::FromDLPack(DLManagedTensor* managed) {
  if (managed == nullptr) return InvalidArgument("FromDLPack: null DLManagedTensor");
  ObjectPtr<Object> owner = MakeObject<ManagedTensorOwner>(managed);  // deleter runs on any error below
  const DLTensor& src = managed->dl_tensor;
  if (src.ndim < 0 || (src.ndim > 0 && src.shape == nullptr)) {
    return InvalidArgument("FromDLPack: tensor has ndim " + std::to_string(src.ndim) + " and no shape");
  }
  std::vector<int64_t> shape(src.shape, src.shape + src.ndim);
  SORUN_ASSIGN_OR_RETURN(uint64_t nbytes, ShapeByteSize(shape.data(), src.ndim, src.dtype));
  ObjectPtr<TensorNode> node = NewNode(src.data, shape, src.dtype, src.device);
  node->byte_offset = src.byte_offset;
  if (src.strides != nullptr && !IsCompact(src)) {
    node->strides_storage.assign(src.strides, src.strides + src.ndim);
    node->strides = node->strides_storage.data();
  }
  node->memory = std::move(owner);
  node->memory_bytes = nbytes;
  return Tensor(std::move(node));
}

DLManagedTensor* Tensor::ToDLPack() const {
  auto* managed = new DLManagedTensor();
  managed->dl_tensor = *static_cast<DLTensor*>(node_.get());
  node_->IncRef();
  managed->manager_ctx = node_.get();
  managed->deleter = &DeleteExported;
  return managed;
}

StatusOr<Tensor> Tensor::View(const std::vector<int64_t>& shape, DLDataType dtype, uint64_t byte_offset) const {
  if (!defined()) return FailedPrecondition("View of an undefined tensor");
  if (!IsCompact(*node_)) return FailedPrecondition("View of a strided tensor is not supported");
  SORUN_ASSIGN_OR_RETURN(uint64_t nbytes, ShapeByteSize(shape.data(), static_cast<int>(shape.size()), dtype));
  uint64_t available = node_->memory_bytes;
  if (byte_offset > available || nbytes > available - byte_offset) {
    return InvalidArgument("view " + DTypeToString(dtype) +
                           ShapeToString(shape.data(), static_cast<int>(shape.size())) + " at byte " +
                           std::to_string(byte_offset) + " needs " + std::to_string(nbytes) +
                           " bytes but the storage has " + std::to_string(available));
  }
  ObjectPtr<TensorNode> node = NewNode(node_->data, shape, dtype, node_->device);
  node->byte_offset = node_->byte_offset + byte_offset;
  node->memory = node_;  // the parent keeps the storage alive
  node->read_only = node_->read_only;
  node->memory_bytes = available - byte_offset;
  return Tensor(std::move(node));
}

uint64_t Tensor::nbytes() const {
  auto n = ShapeByteSize(node_->shape, node_->ndim, node_->dtype);
  return n.ok() ? *n : 0;
}

int64_t Tensor::num_elements() const {
  auto n = ShapeNumElements(node_->shape, node_->ndim);
  return n.ok() ? *n : 0;
}

std::string Tensor::Describe() const { return defined() ? DescribeDLTensor(*node_) : "undefined tensor"; }

Status Tensor::CopyFrom(const DLTensor& src) const {
  if (node_->read_only) return FailedPrecondition("cannot write into read-only tensor " + Describe());
  return CopyTensor(src, *node_);
}
Status Tensor::CopyTo(const DLTensor& dst) const { return CopyTensor(*node_, dst); }

StatusOr<Tensor> Tensor::CopyToDevice(DLDevice device) const {
  SORUN_ASSIGN_OR_RETURN(Tensor out, Empty(shape(), dtype(), device));
  SORUN_RETURN_IF_ERROR(CopyTensor(*node_, *out.dl()));
  return out;
}

Status CheckDLTensorFields(const DLTensor& t, const std::string& what) {
  if (t.ndim < 0) return InvalidArgument(what + ": ndim is " + std::to_string(t.ndim));
  if (t.ndim > 0 && t.shape == nullptr) {
    return InvalidArgument(what + ": shape is NULL but ndim is " + std::to_string(t.ndim));
  }
  bool empty = false;
  for (int32_t i = 0; i < t.ndim; ++i) empty = empty || t.shape[i] == 0;
  if (t.data == nullptr && !empty) return InvalidArgument(what + ": data is NULL");
  return Status::Ok();
}

bool IsCompact(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

std::string DescribeDLTensor(const DLTensor& t) {
  return DTypeToString(t.dtype) + ShapeToString(t.shape, t.ndim) + " on " + DeviceToString(t.device);
}

Status CopyTensor(const DLTensor& from, const DLTensor& to, TVMStreamHandle stream) {
  SORUN_ASSIGN_OR_RETURN(uint64_t from_bytes, ShapeByteSize(from.shape, from.ndim, from.dtype));
  SORUN_ASSIGN_OR_RETURN(uint64_t to_bytes, ShapeByteSize(to.shape, to.ndim, to.dtype));
  if (from_bytes != to_bytes) {
    return InvalidArgument("cannot copy " + DescribeDLTensor(from) + " (" + std::to_string(from_bytes) +
                           " bytes) into " + DescribeDLTensor(to) + " (" + std::to_string(to_bytes) + " bytes)");
  }
  if (!IsCompact(from) || !IsCompact(to)) {
    return Unimplemented("copy of strided tensors is not supported (" + DescribeDLTensor(from) + " -> " +
                         DescribeDLTensor(to) + ")");
  }
  if (from_bytes == 0) return Status::Ok();
  int ft = from.device.device_type;
  int tt = to.device.device_type;
  if (ft != kDLCPU && tt != kDLCPU && ft != tt) {
    // Two different accelerators: stage through host memory.
    SORUN_ASSIGN_OR_RETURN(Tensor staging,
                           Tensor::Empty(std::vector<int64_t>{static_cast<int64_t>(from_bytes)}, UInt8(), CpuDevice()));
    DLTensor from_bytes_view = from;
    int64_t flat[1] = {static_cast<int64_t>(from_bytes)};
    from_bytes_view.ndim = 1;
    from_bytes_view.shape = flat;
    from_bytes_view.dtype = UInt8();
    DLTensor to_bytes_view = to;
    to_bytes_view.ndim = 1;
    to_bytes_view.shape = flat;
    to_bytes_view.dtype = UInt8();
    SORUN_RETURN_IF_ERROR(CopyTensor(from_bytes_view, *staging.dl(), stream));
    return CopyTensor(*staging.dl(), to_bytes_view, stream);
  }
  int api_type = tt != kDLCPU ? tt : ft;
  SORUN_ASSIGN_OR_RETURN(DeviceApi * api, GetDeviceApi(api_type));
  return api->Copy(from, to, stream);
}

}  // namespace sorun
