// Packed functions: TVM's type-erased calling convention (an array of TVMValue + type codes) with a
// typed C++ layer on top, so a C++ caller, a compiled kernel and the C ABI share one convention.
//
//  - PackedArgs: a borrowed view of (values, codes, count) with checked, typed accessors.
//  - Value: an owning value (int, float, string, tensor, module, function, ...) used for returns and
//    for building arguments.
//  - PackedFuncNode / PackedFunc: a callable. Compiled kernels are wrapped without copies (the
//    executor calls their raw C entry point directly, see c_function()).
// PackedFuncs are immutable once built and may be called from many threads at once unless the
// function itself says otherwise.
#ifndef SORUN_RUNTIME_PACKED_FUNC_H_
#define SORUN_RUNTIME_PACKED_FUNC_H_

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/call_guarded.h"
#include "base/object.h"
#include "base/status.h"
#include "runtime/c_runtime_api.h"
#include "runtime/last_error.h"
#include "runtime/tensor.h"

namespace sorun {

class ModuleNode;
class Module;
class PackedFunc;

// Name of a type code ("int", "DLTensor*", "str").
const char* TypeCodeName(int code);

// Borrowed view of packed arguments. Accessors check the index and type code and return errors like
// "argument 1: expected int, got str".
class PackedArgs {
 public:
  PackedArgs(const TVMValue* values, const int* codes, int size) : values_(values), codes_(codes), size_(size) {}

  int size() const { return size_; }
  const TVMValue* values() const { return values_; }
  const int* codes() const { return codes_; }
  int code(int i) const { return codes_[i]; }
  const TVMValue& value(int i) const { return values_[i]; }

  StatusOr<int64_t> GetInt(int i) const;           // int, bool
  StatusOr<double> GetFloat(int i) const;          // float, int
  StatusOr<void*> GetHandle(int i) const;          // opaque handle, null, DLTensor*, NDArray
  StatusOr<DLTensor*> GetDLTensor(int i) const;    // DLTensor*, NDArray
  StatusOr<Tensor> GetTensor(int i) const;         // NDArray (shared), DLTensor* (borrowed view)
  StatusOr<std::string_view> GetStr(int i) const;  // str, bytes
  StatusOr<DLDevice> GetDevice(int i) const;
  StatusOr<DLDataType> GetDType(int i) const;  // dtype or dtype string
  StatusOr<Module> GetModule(int i) const;
  StatusOr<PackedFunc> GetFunc(int i) const;

  // Error for argument `i` ("argument i: expected <what>, got <code>").
  Status TypeError(int i, std::string_view expected) const;
  // InvalidArgument unless size() == n (or in [lo, hi]).
  Status ExpectCount(int n, std::string_view fn_name) const;
  Status ExpectCountAtLeast(int n, std::string_view fn_name) const;

 private:
  Status CheckIndex(int i) const;
  const TVMValue* values_;
  const int* codes_;
  int size_;
};

// The argument arrays a caller fills before a packed call of `n` arguments (converting its own values
// to TVM's form): in the object itself up to kInline arguments, so the common call allocates nothing,
// else on the heap. Not copyable or movable (the pointers point into it); single-threaded.
template <size_t kInline>
class PackedArgArrays {
 public:
  explicit PackedArgArrays(size_t n) {
    if (n > kInline) {
      heap_values_.resize(n);
      heap_codes_.resize(n);
      values_ = heap_values_.data();
      codes_ = heap_codes_.data();
    }
  }
  PackedArgArrays(const PackedArgArrays&) = delete;
  PackedArgArrays& operator=(const PackedArgArrays&) = delete;

  TVMValue* values() { return values_; }
  int* codes() { return codes_; }

 private:
  TVMValue inline_values_[kInline];
  int inline_codes_[kInline];
  std::vector<TVMValue> heap_values_;
  std::vector<int> heap_codes_;
  TVMValue* values_ = inline_values_;
  int* codes_ = inline_codes_;
};

// An owning packed value. Objects (tensor, module, function) are held by reference.
class Value {
 public:
  Value() { raw_.v_handle = nullptr; }
  Value(const Value& other);
  Value& operator=(const Value& other);
  Value(Value&& other) noexcept;
  Value& operator=(Value&& other) noexcept;
  ~Value() = default;

  static Value Int(int64_t v);
  static Value Float(double v);
  static Value Bool(bool v);
  static Value Handle(void* v);
  static Value Str(std::string v);
  static Value Bytes(std::string v);
  static Value Device(DLDevice v);
  static Value DType(DLDataType v);
  static Value FromTensor(Tensor t);
  // A DLTensor* the caller keeps alive (type code kTVMDLTensorHandle).
  static Value BorrowedDLTensor(DLTensor* t);
  static Value FromModule(Module m);
  static Value FromFunc(PackedFunc f);
  // Copies argument `i` (objects by reference, strings by value).
  static Value FromArg(const PackedArgs& args, int i);
  // Takes a raw return of a C function; object handles adopt the reference TVM transfers.
  static Value FromRawReturn(TVMValue v, int code);

  int type_code() const { return code_; }
  bool is_null() const { return code_ == kTVMNullptr; }
  // The raw ABI form (valid while this Value lives).
  const TVMValue& raw() const { return raw_; }

  StatusOr<int64_t> AsInt() const;
  StatusOr<double> AsFloat() const;
  StatusOr<std::string> AsString() const;
  StatusOr<void*> AsHandle() const;
  StatusOr<DLDevice> AsDevice() const;
  StatusOr<DLDataType> AsDType() const;
  StatusOr<Tensor> AsTensor() const;
  StatusOr<Module> AsModule() const;
  StatusOr<PackedFunc> AsFunc() const;

  // Raw form for returning through the C ABI: strings stay owned by this Value; objects get an extra
  // reference the receiver must release (TVMModFree / TVMFuncFree / TVMArrayFree).
  void ExportRaw(TVMValue* value, int* code) const;

 private:
  void Fixup();  // re-point raw_ at owned string storage after copy/move
  // FromArg (adopt false: objects gain a reference) and FromRawReturn (adopt true: they take over the
  // reference the C function transferred): one conversion of a raw TVMValue.
  static Value FromRaw(TVMValue v, int code, bool adopt);
  int code_ = kTVMNullptr;
  TVMValue raw_;
  std::string str_;
  TVMByteArray bytes_{nullptr, 0};
  ObjectPtr<Object> obj_;
};

// A callable with the packed convention.
class PackedFuncNode : public Object {
 public:
  explicit PackedFuncNode(std::string name) : name_(std::move(name)) {}
  // Calls the function. `ret` receives the return value (null if none).
  virtual Status Call(PackedArgs args, Value* ret) const = 0;
  // The compiled C entry point when this function is one; callers on hot paths (the graph executor)
  // may call it directly with resource_handle = NULL instead of Call().
  virtual TVMBackendPackedCFunc c_function() const { return nullptr; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// Handle to a PackedFuncNode; null by default.
class PackedFunc {
 public:
  using Body = std::function<Status(PackedArgs args, Value* ret)>;

  PackedFunc() = default;
  explicit PackedFunc(ObjectPtr<PackedFuncNode> node) : node_(std::move(node)) {}

  // A function implemented in C++.
  static PackedFunc FromBody(std::string name, Body body);
  // A compiled TVMBackendPackedCFunc; `keep_alive` (e.g. the library) stays alive with the function.
  static PackedFunc FromCFunction(std::string name, TVMBackendPackedCFunc fn, ObjectPtr<Object> keep_alive);

  bool defined() const { return static_cast<bool>(node_); }
  explicit operator bool() const { return defined(); }
  PackedFuncNode* get() const { return node_.get(); }
  const ObjectPtr<PackedFuncNode>& node() const { return node_; }
  const std::string& name() const { return node_->name(); }

  Status CallPacked(PackedArgs args, Value* ret) const;
  Status CallPacked(const std::vector<Value>& args, Value* ret) const;

  // Typed call: f(1, "x", tensor) -> StatusOr<Value>.
  template <typename... Args>
  StatusOr<Value> operator()(Args&&... args) const {
    std::vector<Value> packed;
    packed.reserve(sizeof...(Args));
    (packed.push_back(ToValue(std::forward<Args>(args))), ...);
    Value ret;
    SORUN_RETURN_IF_ERROR(CallPacked(packed, &ret));
    return ret;
  }

 private:
  template <typename T>
  static Value ToValue(T&& v) {
    using D = std::decay_t<T>;
    if constexpr (std::is_same_v<D, Value>) {
      return std::forward<T>(v);
    } else if constexpr (std::is_same_v<D, bool>) {
      return Value::Bool(v);
    } else if constexpr (std::is_integral_v<D> || std::is_enum_v<D>) {
      return Value::Int(static_cast<int64_t>(v));
    } else if constexpr (std::is_floating_point_v<D>) {
      return Value::Float(static_cast<double>(v));
    } else if constexpr (std::is_null_pointer_v<D>) {  // before strings: nullptr converts to string_view
      return Value::Handle(nullptr);
    } else if constexpr (std::is_convertible_v<T, std::string_view>) {
      return Value::Str(std::string(std::string_view(v)));
    } else if constexpr (std::is_same_v<D, DLDevice>) {
      return Value::Device(v);
    } else if constexpr (std::is_same_v<D, DLDataType>) {
      return Value::DType(v);
    } else if constexpr (std::is_same_v<D, Tensor>) {
      return Value::FromTensor(std::forward<T>(v));
    } else if constexpr (std::is_same_v<D, Module>) {
      return Value::FromModule(std::forward<T>(v));
    } else if constexpr (std::is_same_v<D, PackedFunc>) {
      return Value::FromFunc(std::forward<T>(v));
    } else if constexpr (std::is_same_v<D, DLTensor*>) {
      return Value::BorrowedDLTensor(v);
    } else if constexpr (std::is_pointer_v<D>) {
      return Value::Handle(const_cast<void*>(static_cast<const void*>(v)));
    } else {
      static_assert(sizeof(D) == 0, "unsupported packed argument type");
    }
  }
  ObjectPtr<PackedFuncNode> node_;
};

// Runs `body`, the work of a C entry point (TVMFuncCall, TVMBackend*, TVMAPISetLastError, ...), so
// that no C++ exception crosses into C code (a compiled kernel or a C client): an exception escaping
// `body` becomes `error_value` (-1, or NULL for pointers) with the message of CallGuarded's Status
// (base/call_guarded.h: "TVMFuncCall: out of memory (std::bad_alloc)", "TVMFuncCall: C++ exception:
// ...") in TVMGetLastError(); with no memory for the message the previous one stays. Every extern "C"
// function of the runtime and its backends wraps its body in this. Thread-safe.
template <typename R, typename F>
R GuardCBoundary(const char* entry, R error_value, F&& body) noexcept {
#if __cpp_exceptions
  R result = error_value;
  try {
    Status failure = CallGuarded(entry, [&]() -> Status {
      result = body();
      return Status::Ok();
    });
    if (failure.ok()) return result;
    SetLastError(failure.message());
  } catch (...) {
    // No memory for the message: the previous last error stays.
  }
  return error_value;
#else  // nothing can escape `body` (base/call_guarded.h)
  (void)entry;
  (void)error_value;
  return body();
#endif
}

}  // namespace sorun

#endif  // SORUN_RUNTIME_PACKED_FUNC_H_
