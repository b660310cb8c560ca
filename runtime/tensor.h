// Tensor: an owning, reference-counted n-d array over DLPack's DLTensor.
//
// A TensorNode *is* a DLTensor (first base class), so the DLTensor* handed to kernels and across the
// C ABI (type code kTVMNDArrayHandle) converts back to its node. The node owns its shape/strides and
// holds `memory`, any Object keeping the data alive: a device allocation, a DLPack producer's
// DLManagedTensor, the shared library a parameter lives in, or the parent of a view. Copying a Tensor
// shares the data; use CopyFrom/CopyTo to move bytes. Tensors may be shared across threads; writing
// the same data concurrently is the caller's business.
#ifndef SORUN_RUNTIME_TENSOR_H_
#define SORUN_RUNTIME_TENSOR_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/object.h"
#include "base/status.h"
#include "runtime/c_runtime_api.h"

namespace sorun {

class TensorNode final : public DLTensor, public Object {
 public:
  TensorNode();
  // The node whose DLTensor base is `t`. Only valid for DLTensors created by sorun Tensors
  // (e.g. values passed with kTVMNDArrayHandle by this runtime).
  static TensorNode* FromDLTensor(DLTensor* t) { return static_cast<TensorNode*>(t); }

  std::vector<int64_t> shape_storage;
  std::vector<int64_t> strides_storage;  // empty = compact
  ObjectPtr<Object> memory;              // keeps `data` alive
  uint64_t memory_bytes = 0;             // bytes reachable from data+byte_offset (bounds of views)
  bool read_only = false;                // data lives in read-only memory (e.g. a mapped library)
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(ObjectPtr<TensorNode> node) : node_(std::move(node)) {}

  // A new compact, 64-byte aligned tensor on `device` (contents uninitialised).
  static StatusOr<Tensor> Empty(const std::vector<int64_t>& shape, DLDataType dtype, DLDevice device);
  // A tensor over `data` (not copied), which `owner` keeps alive; `capacity` = bytes available.
  static StatusOr<Tensor> Wrap(void* data, uint64_t capacity, const std::vector<int64_t>& shape, DLDataType dtype,
                               DLDevice device, ObjectPtr<Object> owner);
  // Takes ownership of a DLPack tensor (its deleter runs when the last Tensor goes). Zero-copy.
  static StatusOr<Tensor> FromDLPack(DLManagedTensor* managed);

  // A DLManagedTensor sharing this tensor's data; the consumer must call its deleter. Zero-copy.
  DLManagedTensor* ToDLPack() const;
  // A view of the same storage with another shape/dtype at `byte_offset` (bounds-checked).
  StatusOr<Tensor> View(const std::vector<int64_t>& shape, DLDataType dtype, uint64_t byte_offset = 0) const;

  // Copies bytes from/to another tensor of the same byte size, across devices. CopyFrom into a
  // read-only tensor is FailedPrecondition.
  Status CopyFrom(const DLTensor& src) const;
  Status CopyTo(const DLTensor& dst) const;
  // A new compact tensor on `device` holding a copy.
  StatusOr<Tensor> CopyToDevice(DLDevice device) const;

  bool defined() const { return static_cast<bool>(node_); }
  bool read_only() const { return node_->read_only; }
  explicit operator bool() const { return defined(); }
  DLTensor* dl() const { return node_.get(); }
  const ObjectPtr<TensorNode>& node() const { return node_; }
  void* data() const { return node_->data; }
  int ndim() const { return node_->ndim; }
  const std::vector<int64_t>& shape() const { return node_->shape_storage; }
  DLDataType dtype() const { return node_->dtype; }
  DLDevice device() const { return node_->device; }
  // Compact byte size (elements * element bytes).
  uint64_t nbytes() const;
  int64_t num_elements() const;
  // "float32[2, 3] on cpu:0".
  std::string Describe() const;

  template <typename T>
  T* data_as() const {
    return reinterpret_cast<T*>(static_cast<char*>(node_->data) + node_->byte_offset);
  }

 private:
  ObjectPtr<TensorNode> node_;
};

// True when `t` has no strides or row-major compact strides.
bool IsCompact(const DLTensor& t);
// The fields of a caller's DLTensor that sorun reads before anything else checks them: ndim >= 0, a
// shape array when ndim > 0, and data unless the tensor has no elements. InvalidArgument prefixed
// with `what` ("set_input 0: shape is NULL but ndim is 2") otherwise.
Status CheckDLTensorFields(const DLTensor& t, const std::string& what);
// Copies between two compact tensors of equal byte size on any devices (host staging when both
// are non-CPU devices of different types). Errors name both shapes/dtypes/devices.
Status CopyTensor(const DLTensor& from, const DLTensor& to, TVMStreamHandle stream = nullptr);
// "float32[2, 3] on cpu:0" for any DLTensor.
std::string DescribeDLTensor(const DLTensor& t);

}  // namespace sorun

#endif  // SORUN_RUNTIME_TENSOR_H_
