// VmValue: what a Relax VM register holds (TVM's `Any` as the VM uses it): null, int, float, dtype,
// string, shape, tensor, storage, tuple, a function of the executable's function table, or the VM
// context (register kVmContextRegister). Scalars are inline; strings, shapes, tensors, storage and
// tuples are reference-counted objects, so copying a value between registers never copies data.
// Values are owned by one executor (its registers); the objects they share with the model (constant
// tensors, shapes, strings) are immutable. Not thread-safe (one executor, one thread).
#ifndef SORUN_RELAX_VM_VALUE_H_
#define SORUN_RELAX_VM_VALUE_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/object.h"
#include "runtime/tensor.h"

namespace sorun {
namespace relax {

enum class VmValueKind : uint8_t {
  kNull,
  kInt,
  kFloat,
  kDataType,
  kString,
  kShape,
  kTensor,
  kStorage,
  kTuple,
  kFunction,
  kVmContext
};
const char* VmValueKindName(VmValueKind kind);

// An immutable shape (R.Shape), a string constant, a tuple (R.Tuple, mutable only while built).
struct VmShapeObj : Object {
  explicit VmShapeObj(std::vector<int64_t> d) : dims(std::move(d)) {}
  std::vector<int64_t> dims;
};
struct VmStringObj : Object {
  explicit VmStringObj(std::string s) : value(std::move(s)) {}
  std::string value;
};
struct VmTupleObj;

// A block of device memory that alloc_tensor carves tensors out of (vm.builtin.alloc_storage). Held
// as a 1-D uint8 tensor: views of it are bounds-checked by Tensor::View.
struct VmStorageObj : Object {
  explicit VmStorageObj(Tensor b) : buffer(std::move(b)) {}
  Tensor buffer;
};

class VmValue {
 public:
  VmValue() = default;
  static VmValue Int(int64_t v) {
    VmValue r(VmValueKind::kInt);
    r.int_ = v;
    return r;
  }
  static VmValue Float(double v) {
    VmValue r(VmValueKind::kFloat);
    r.float_ = v;
    return r;
  }
  static VmValue DataType(DLDataType v) {
    VmValue r(VmValueKind::kDataType);
    r.dtype_ = v;
    return r;
  }
  static VmValue Function(int64_t index) {
    VmValue r(VmValueKind::kFunction);
    r.int_ = index;
    return r;
  }
  static VmValue Context() { return VmValue(VmValueKind::kVmContext); }
  static VmValue String(ObjectPtr<VmStringObj> s) { return VmValue(VmValueKind::kString, std::move(s)); }
  static VmValue Shape(ObjectPtr<VmShapeObj> s) { return VmValue(VmValueKind::kShape, std::move(s)); }
  static VmValue FromTensor(const Tensor& t) { return VmValue(VmValueKind::kTensor, t.node()); }
  static VmValue Storage(ObjectPtr<VmStorageObj> s) { return VmValue(VmValueKind::kStorage, std::move(s)); }
  static VmValue Tuple(ObjectPtr<VmTupleObj> t);

  VmValueKind kind() const { return kind_; }
  const char* kind_name() const { return VmValueKindName(kind_); }
  bool is_null() const { return kind_ == VmValueKind::kNull; }
  int64_t int_value() const { return int_; }     // kInt, kFunction
  double float_value() const { return float_; }  // kFloat
  DLDataType dtype() const { return dtype_; }    // kDataType
  const std::string& str() const { return static_cast<const VmStringObj*>(obj_.get())->value; }
  const std::vector<int64_t>& shape() const { return static_cast<const VmShapeObj*>(obj_.get())->dims; }
  TensorNode* tensor_node() const { return static_cast<TensorNode*>(obj_.get()); }
  Tensor tensor() const { return Tensor(ObjectPtr<TensorNode>::FromRaw(tensor_node())); }
  VmStorageObj* storage() const { return static_cast<VmStorageObj*>(obj_.get()); }
  VmTupleObj* tuple() const;
  const ObjectPtr<Object>& object() const { return obj_; }

 private:
  explicit VmValue(VmValueKind kind) : kind_(kind) {}
  VmValue(VmValueKind kind, ObjectPtr<Object> obj) : kind_(kind), obj_(std::move(obj)) {}
  VmValueKind kind_ = VmValueKind::kNull;
  union {
    int64_t int_ = 0;
    double float_;
    DLDataType dtype_;
  };
  ObjectPtr<Object> obj_;
};

struct VmTupleObj : Object {
  std::vector<VmValue> fields;
};

inline VmValue VmValue::Tuple(ObjectPtr<VmTupleObj> t) { return VmValue(VmValueKind::kTuple, std::move(t)); }
inline VmTupleObj* VmValue::tuple() const { return static_cast<VmTupleObj*>(obj_.get()); }

// "tensor float32[1, 10]", "int 3", "shape (1, 32)", "tuple of 2" (error messages).
std::string DescribeVmValue(const VmValue& v);

}  // namespace relax
}  // namespace sorun

#endif  // SORUN_RELAX_VM_VALUE_H_
