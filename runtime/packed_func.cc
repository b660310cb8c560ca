#include "runtime/packed_func.h"

#include <type_traits>

#include "runtime/data_type.h"
#include "runtime/last_error.h"
#include "runtime/module.h"

namespace sorun {

const char* TypeCodeName(int code) {
  switch (code) {
    case kTVMArgInt: return "int";
    case kTVMArgUInt: return "uint";
    case kTVMArgFloat: return "float";
    case kTVMOpaqueHandle: return "handle";
    case kTVMNullptr: return "null";
    case kTVMDataType: return "dtype";
    case kTVMDLDevice: return "device";
    case kTVMDLTensorHandle: return "DLTensor*";
    case kTVMObjectHandle: return "object";
    case kTVMModuleHandle: return "module";
    case kTVMPackedFuncHandle: return "function";
    case kTVMStr: return "str";
    case kTVMBytes: return "bytes";
    case kTVMNDArrayHandle: return "NDArray";
    case kTVMObjectRValueRefArg: return "object rvalue";
    case kTVMArgBool: return "bool";
    default: return "unknown type code";
  }
}

// ---------------------------------------------------------------------------------------------
// PackedArgs

Status PackedArgs::CheckIndex(int i) const {
  if (i < 0 || i >= size_) {
    return InvalidArgument("argument " + std::to_string(i) + " missing (" + std::to_string(size_) + " given)");
  }
  return Status::Ok();
}

Status PackedArgs::TypeError(int i, std::string_view expected) const {
  return InvalidArgument("argument " + std::to_string(i) + ": expected " + std::string(expected) + ", got " +
                         TypeCodeName(codes_[i]) + " (type code " + std::to_string(codes_[i]) + ")");
}

Status PackedArgs::ExpectCount(int n, std::string_view fn_name) const {
  if (size_ == n) return Status::Ok();
  return InvalidArgument(std::string(fn_name) + " expects " + std::to_string(n) + " argument(s), got " +
                         std::to_string(size_));
}

Status PackedArgs::ExpectCountAtLeast(int n, std::string_view fn_name) const {
  if (size_ >= n) return Status::Ok();
  return InvalidArgument(std::string(fn_name) + " expects at least " + std::to_string(n) + " argument(s), got " +
                         std::to_string(size_));
}

StatusOr<int64_t> PackedArgs::GetInt(int i) const {
  SORUN_RETURN_IF_ERROR(CheckIndex(i));
  if (codes_[i] == kTVMArgInt || codes_[i] == kTVMArgBool) return values_[i].v_int64;
  return TypeError(i, "int");
}

StatusOr<double> PackedArgs::GetFloat(int i) const {
  SORUN_RETURN_IF_ERROR(CheckIndex(i));
  if (codes_[i] == kTVMArgFloat) return values_[i].v_float64;
  if (codes_[i] == kTVMArgInt) return static_cast<double>(values_[i].v_int64);
  return TypeError(i, "float");
}

StatusOr<void*> PackedArgs::GetHandle(int i) const {
  SORUN_RETURN_IF_ERROR(CheckIndex(i));
  switch (codes_[i]) {
    case kTVMOpaqueHandle:
    case kTVMDLTensorHandle:
    case kTVMNDArrayHandle: return values_[i].v_handle;
    case kTVMNullptr: return static_cast<void*>(nullptr);
    default: return TypeError(i, "handle");
  }
}

StatusOr<DLTensor*> PackedArgs::GetDLTensor(int i) const {
  SORUN_RETURN_IF_ERROR(CheckIndex(i));
  if ((codes_[i] == kTVMDLTensorHandle || codes_[i] == kTVMNDArrayHandle) && values_[i].v_handle) {
    return static_cast<DLTensor*>(values_[i].v_handle);
  }
  return TypeError(i, "tensor");
}

StatusOr<Tensor> PackedArgs::GetTensor(int i) const {
  SORUN_ASSIGN_OR_RETURN(DLTensor * t, GetDLTensor(i));
  if (codes_[i] == kTVMNDArrayHandle) {
    return Tensor(ObjectPtr<TensorNode>::FromRaw(TensorNode::FromDLTensor(t)));
  }
  // A borrowed DLTensor: wrap without ownership (valid for the duration of the call).
  std::vector<int64_t> shape(t->shape, t->shape + t->ndim);
  SORUN_ASSIGN_OR_RETURN(uint64_t nbytes, ShapeByteSize(t->shape, t->ndim, t->dtype));
  SORUN_ASSIGN_OR_RETURN(Tensor view, Tensor::Wrap(static_cast<char*>(t->data), nbytes + t->byte_offset, shape,
                                                   t->dtype, t->device, nullptr));
  view.dl()->byte_offset = t->byte_offset;
  view.node()->memory_bytes = nbytes;
  return view;
}

StatusOr<std::string_view> PackedArgs::GetStr(int i) const {
  SORUN_RETURN_IF_ERROR(CheckIndex(i));
  if (codes_[i] == kTVMStr && values_[i].v_str) return std::string_view(values_[i].v_str);
  if (codes_[i] == kTVMBytes && values_[i].v_handle) {
    auto* b = static_cast<const TVMByteArray*>(values_[i].v_handle);
    return std::string_view(b->data, b->size);
  }
  return TypeError(i, "str");
}

StatusOr<DLDevice> PackedArgs::GetDevice(int i) const {
  SORUN_RETURN_IF_ERROR(CheckIndex(i));
  if (codes_[i] == kTVMDLDevice) return values_[i].v_device;
  return TypeError(i, "device");
}

StatusOr<DLDataType> PackedArgs::GetDType(int i) const {
  SORUN_RETURN_IF_ERROR(CheckIndex(i));
  if (codes_[i] == kTVMDataType) return values_[i].v_type;
  if (codes_[i] == kTVMStr && values_[i].v_str) return ParseDType(values_[i].v_str);
  return TypeError(i, "dtype");
}

StatusOr<Module> PackedArgs::GetModule(int i) const {
  SORUN_RETURN_IF_ERROR(CheckIndex(i));
  if (codes_[i] == kTVMModuleHandle && values_[i].v_handle) {
    return Module(ObjectPtr<ModuleNode>::FromRaw(static_cast<ModuleNode*>(values_[i].v_handle)));
  }
  return TypeError(i, "module");
}

StatusOr<PackedFunc> PackedArgs::GetFunc(int i) const {
  SORUN_RETURN_IF_ERROR(CheckIndex(i));
  if (codes_[i] == kTVMPackedFuncHandle && values_[i].v_handle) {
    return PackedFunc(ObjectPtr<PackedFuncNode>::FromRaw(static_cast<PackedFuncNode*>(values_[i].v_handle)));
  }
  return TypeError(i, "function");
}

// ---------------------------------------------------------------------------------------------
// Value

Value::Value(const Value& other)
    : code_(other.code_), raw_(other.raw_), str_(other.str_), bytes_(other.bytes_), obj_(other.obj_) {
  Fixup();
}

Value& Value::operator=(const Value& other) {
  if (this != &other) {
    code_ = other.code_;
    raw_ = other.raw_;
    str_ = other.str_;
    obj_ = other.obj_;
    Fixup();
  }
  return *this;
}

Value::Value(Value&& other) noexcept
    : code_(other.code_), raw_(other.raw_), str_(std::move(other.str_)), obj_(std::move(other.obj_)) {
  Fixup();
  other.code_ = kTVMNullptr;
  other.raw_.v_handle = nullptr;
}

Value& Value::operator=(Value&& other) noexcept {
  if (this != &other) {
    code_ = other.code_;
    raw_ = other.raw_;
    str_ = std::move(other.str_);
    obj_ = std::move(other.obj_);
    Fixup();
    other.code_ = kTVMNullptr;
    other.raw_.v_handle = nullptr;
  }
  return *this;
}

void Value::Fixup() {
  if (code_ == kTVMStr) {
    raw_.v_str = str_.c_str();
  } else if (code_ == kTVMBytes) {
    bytes_.data = str_.data();
    bytes_.size = str_.size();
    raw_.v_handle = &bytes_;
  }
}

Value Value::Int(int64_t v) {
  Value out;
  out.code_ = kTVMArgInt;
  out.raw_.v_int64 = v;
  return out;
}

Value Value::Float(double v) {
  Value out;
  out.code_ = kTVMArgFloat;
  out.raw_.v_float64 = v;
  return out;
}

Value Value::Bool(bool v) {
  // Passed as int for compatibility with kernels built before v0.18 (which reject code 15).
  return Int(v ? 1 : 0);
}

Value Value::Handle(void* v) {
  Value out;
  out.code_ = v ? kTVMOpaqueHandle : kTVMNullptr;
  out.raw_.v_handle = v;
  return out;
}

Value Value::Str(std::string v) {
  Value out;
  out.code_ = kTVMStr;
  out.str_ = std::move(v);
  out.Fixup();
  return out;
}

Value Value::Bytes(std::string v) {
  Value out;
  out.code_ = kTVMBytes;
  out.str_ = std::move(v);
  out.Fixup();
  return out;
}

Value Value::Device(DLDevice v) {
  Value out;
  out.code_ = kTVMDLDevice;
  out.raw_.v_device = v;
  return out;
}

Value Value::DType(DLDataType v) {
  Value out;
  out.code_ = kTVMDataType;
  out.raw_.v_int64 = 0;
  out.raw_.v_type = v;
  return out;
}

Value Value::FromTensor(Tensor t) {
  Value out;
  if (!t.defined()) return out;
  out.code_ = kTVMNDArrayHandle;
  out.raw_.v_handle = static_cast<DLTensor*>(t.node().get());
  out.obj_ = t.node();
  return out;
}

Value Value::BorrowedDLTensor(DLTensor* t) {
  Value out;
  if (!t) return out;
  out.code_ = kTVMDLTensorHandle;
  out.raw_.v_handle = t;
  return out;
}

Value Value::FromModule(Module m) {
  Value out;
  if (!m.defined()) return out;
  out.code_ = kTVMModuleHandle;
  out.raw_.v_handle = m.get();
  out.obj_ = m.node();
  return out;
}

Value Value::FromFunc(PackedFunc f) {
  Value out;
  if (!f.defined()) return out;
  out.code_ = kTVMPackedFuncHandle;
  out.raw_.v_handle = f.get();
  out.obj_ = f.node();
  return out;
}

Value Value::FromArg(const PackedArgs& args, int i) { return FromRaw(args.value(i), args.code(i), /*adopt=*/false); }

Value Value::FromRawReturn(TVMValue v, int code) { return FromRaw(v, code, /*adopt=*/true); }

Value Value::FromRaw(TVMValue v, int code, bool adopt) {
  // An object handle either gains a reference (an argument the caller keeps) or takes over the one
  // the C function transferred (a return value).
  auto take = [adopt](auto* object) {
    using T = std::remove_pointer_t<decltype(object)>;
    return adopt ? ObjectPtr<T>::Adopt(object) : ObjectPtr<T>::FromRaw(object);
  };
  switch (code) {
    case kTVMStr: return v.v_str ? Str(v.v_str) : Value();
    case kTVMBytes: {
      auto* b = static_cast<const TVMByteArray*>(v.v_handle);
      return b ? Bytes(std::string(b->data, b->size)) : Value();
    }
    case kTVMNDArrayHandle:
      return v.v_handle ? FromTensor(Tensor(take(TensorNode::FromDLTensor(static_cast<DLTensor*>(v.v_handle)))))
                        : Value();
    case kTVMModuleHandle: return v.v_handle ? FromModule(Module(take(static_cast<ModuleNode*>(v.v_handle)))) : Value();
    case kTVMPackedFuncHandle:
      return v.v_handle ? FromFunc(PackedFunc(take(static_cast<PackedFuncNode*>(v.v_handle)))) : Value();
    default: {
      Value out;
      out.code_ = code;
      out.raw_ = v;
      return out;
    }
  }
}

void Value::ExportRaw(TVMValue* value, int* code) const {
  *value = raw_;
  *code = code_;
  if (obj_ && (code_ == kTVMNDArrayHandle || code_ == kTVMModuleHandle || code_ == kTVMPackedFuncHandle)) {
    obj_->IncRef();
  }
}

namespace {
Status WrongType(int code, const char* expected) {
  return InvalidArgument(std::string("value is ") + TypeCodeName(code) + ", expected " + expected);
}
}  // namespace

StatusOr<int64_t> Value::AsInt() const {
  if (code_ == kTVMArgInt || code_ == kTVMArgBool) return raw_.v_int64;
  return WrongType(code_, "int");
}

StatusOr<double> Value::AsFloat() const {
  if (code_ == kTVMArgFloat) return raw_.v_float64;
  if (code_ == kTVMArgInt) return static_cast<double>(raw_.v_int64);
  return WrongType(code_, "float");
}

StatusOr<std::string> Value::AsString() const {
  if (code_ == kTVMStr || code_ == kTVMBytes) return str_;
  return WrongType(code_, "str");
}

StatusOr<void*> Value::AsHandle() const {
  if (code_ == kTVMOpaqueHandle || code_ == kTVMNullptr || code_ == kTVMDLTensorHandle || code_ == kTVMNDArrayHandle) {
    return raw_.v_handle;
  }
  return WrongType(code_, "handle");
}

StatusOr<DLDevice> Value::AsDevice() const {
  if (code_ == kTVMDLDevice) return raw_.v_device;
  return WrongType(code_, "device");
}

StatusOr<DLDataType> Value::AsDType() const {
  if (code_ == kTVMDataType) return raw_.v_type;
  if (code_ == kTVMStr) return ParseDType(str_);
  return WrongType(code_, "dtype");
}

StatusOr<Tensor> Value::AsTensor() const {
  if (code_ == kTVMNDArrayHandle && obj_) {
    return Tensor(ObjectPtr<TensorNode>::FromRaw(static_cast<TensorNode*>(obj_.get())));
  }
  return WrongType(code_, "NDArray");
}

StatusOr<Module> Value::AsModule() const {
  if (code_ == kTVMModuleHandle && obj_) {
    return Module(ObjectPtr<ModuleNode>::FromRaw(static_cast<ModuleNode*>(obj_.get())));
  }
  return WrongType(code_, "module");
}

StatusOr<PackedFunc> Value::AsFunc() const {
  if (code_ == kTVMPackedFuncHandle && obj_) {
    return PackedFunc(ObjectPtr<PackedFuncNode>::FromRaw(static_cast<PackedFuncNode*>(obj_.get())));
  }
  return WrongType(code_, "function");
}

// ---------------------------------------------------------------------------------------------
// PackedFunc

namespace {

class BodyPackedFunc final : public PackedFuncNode {
 public:
  BodyPackedFunc(std::string name, PackedFunc::Body body) : PackedFuncNode(std::move(name)), body_(std::move(body)) {}
  Status Call(PackedArgs args, Value* ret) const override { return body_(args, ret); }

 private:
  PackedFunc::Body body_;
};

class CPackedFunc final : public PackedFuncNode {
 public:
  CPackedFunc(std::string name, TVMBackendPackedCFunc fn, ObjectPtr<Object> keep_alive)
      : PackedFuncNode(std::move(name)), fn_(fn), keep_alive_(std::move(keep_alive)) {}

  Status Call(PackedArgs args, Value* ret) const override {
    TVMValue rv;
    rv.v_handle = nullptr;
    int rcode = kTVMNullptr;
    int rc =
        fn_(const_cast<TVMValue*>(args.values()), const_cast<int*>(args.codes()), args.size(), &rv, &rcode, nullptr);
    if (rc != 0) return KernelError(name(), rc);
    if (ret) *ret = Value::FromRawReturn(rv, rcode);
    return Status::Ok();
  }
  TVMBackendPackedCFunc c_function() const override { return fn_; }

 private:
  TVMBackendPackedCFunc fn_;
  ObjectPtr<Object> keep_alive_;
};

}  // namespace

PackedFunc PackedFunc::FromBody(std::string name, Body body) {
  return PackedFunc(ObjectPtr<PackedFuncNode>(MakeObject<BodyPackedFunc>(std::move(name), std::move(body))));
}

PackedFunc PackedFunc::FromCFunction(std::string name, TVMBackendPackedCFunc fn, ObjectPtr<Object> keep_alive) {
  return PackedFunc(ObjectPtr<PackedFuncNode>(MakeObject<CPackedFunc>(std::move(name), fn, std::move(keep_alive))));
}

Status PackedFunc::CallPacked(PackedArgs args, Value* ret) const {
  if (!node_) return FailedPrecondition("call of a null PackedFunc");
  return node_->Call(args, ret);
}

Status PackedFunc::CallPacked(const std::vector<Value>& args, Value* ret) const {
  PackedArgArrays<8> arrays(args.size());
  TVMValue* values = arrays.values();
  int* codes = arrays.codes();
  for (size_t i = 0; i < args.size(); ++i) {
    values[i] = args[i].raw();
    codes[i] = args[i].type_code();
  }
  return CallPacked(PackedArgs(values, codes, static_cast<int>(args.size())), ret);
}

}  // namespace sorun
