// Status and StatusOr<T>: sorun's error values.
//
// Every fallible operation in sorun returns a Status (or StatusOr<T>). Library code never throws and
// never aborts on bad input; messages name what is wrong and where (file, section, byte offset, node).
// Context is added on the way up with Annotate(): "model.so: __tvm_dev_mblob: byte 120: ...".
// An OK Status holds no allocation. Status values are thread-compatible (not shared mutable state).
#ifndef SORUN_BASE_STATUS_H_
#define SORUN_BASE_STATUS_H_

#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace sorun {

// Broad error classes; the message carries the specifics.
enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,     // a caller passed a bad value (wrong shape, unknown name, bad CLI flag)
  kNotFound = 2,            // a named thing (function, input, file, loader) does not exist
  kAlreadyExists = 3,       // registering a name twice without override
  kOutOfRange = 4,          // an index past the end
  kFailedPrecondition = 5,  // the object is not in a state that allows the call
  kDataLoss = 6,            // a malformed or truncated artifact (blob, JSON, params, npy, ELF)
  kUnavailable = 7,         // a device or driver is absent (no CUDA driver, no OpenCL platform)
  kUnimplemented = 8,       // a valid request this build does not support
  kResourceExhausted = 9,   // allocation failure
  kInternal = 10,           // a broken invariant inside sorun
  kAborted = 11,            // a kernel reported failure (its message is carried)
  kPermissionDenied = 12,   // a check the caller configured refused the input (an unsigned or altered model)
};

// Returns the lower-case name of `code` ("invalid_argument").
const char* StatusCodeName(StatusCode code);

// An error code and message, or OK. Cheap to move; copying copies the message.
class [[nodiscard]] Status {
 public:
  Status() noexcept = default;
  Status(StatusCode code, std::string message);
  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status Ok() { return Status(); }

  bool ok() const { return rep_ == nullptr; }
  StatusCode code() const { return rep_ ? rep_->code : StatusCode::kOk; }
  // The message without the code name; empty for OK.
  const std::string& message() const;
  // "invalid_argument: message" or "ok".
  std::string ToString() const;

  // Prefixes the message with `context` and ": ". No-op on OK. Returns *this for chaining.
  Status& Annotate(std::string_view context) &;
  Status&& Annotate(std::string_view context) &&;

  // Marks a status as intentionally ignored.
  void IgnoreError() const {}

 private:
  struct Rep {
    StatusCode code;
    std::string message;
  };
  std::unique_ptr<Rep> rep_;
};

// Convenience constructors.
Status InvalidArgument(std::string message);
Status NotFound(std::string message);
Status AlreadyExists(std::string message);
Status OutOfRange(std::string message);
Status FailedPrecondition(std::string message);
Status DataLoss(std::string message);
Status Unavailable(std::string message);
Status Unimplemented(std::string message);
Status ResourceExhausted(std::string message);
Status Internal(std::string message);
Status Aborted(std::string message);
Status PermissionDenied(std::string message);

// For messages that name addresses and offsets: "0x" + lowercase hex digits of `v` ("0x1f40").
std::string HexString(uint64_t v);

namespace status_internal {
// Called when a failed StatusOr is dereferenced: prints "sorun: StatusOr accessed without a value:
// <status>" to stderr and aborts. Defined behaviour in every build (like std::optional::value()
// throwing; the core uses no exceptions). Never returns.
[[noreturn]] void DieOnBadStatusOrAccess(const Status& status);
}  // namespace status_internal

// A value of type T or an error Status. Accessing the value of an error (value(), operator*,
// operator->) is a programming error and aborts with the status message in every build; callers test
// ok() first or use SORUN_ASSIGN_OR_RETURN.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  // Implicit from an error status (must not be OK).
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT(runtime/explicit)
    if (status_.ok()) status_ = Internal("StatusOr constructed from an OK status without a value");
  }
  // Implicit from a value.
  StatusOr(T value) : status_(), has_value_(true) {  // NOLINT(runtime/explicit)
    new (&storage_) T(std::move(value));
  }
  template <typename U,
            typename = std::enable_if_t<std::is_convertible_v<U&&, T> && !std::is_same_v<std::decay_t<U>, Status> &&
                                        !std::is_same_v<std::decay_t<U>, StatusOr<T>>>>
  StatusOr(U&& value) : status_(), has_value_(true) {  // NOLINT(runtime/explicit)
    new (&storage_) T(std::forward<U>(value));
  }
  StatusOr(const StatusOr& other) : status_(other.status_), has_value_(other.has_value_) {
    if (has_value_) new (&storage_) T(other.raw());
  }
  StatusOr(StatusOr&& other) noexcept : status_(std::move(other.status_)), has_value_(other.has_value_) {
    if (has_value_) new (&storage_) T(std::move(other.raw()));
  }
  StatusOr& operator=(StatusOr other) noexcept {
    Reset();
    status_ = std::move(other.status_);
    has_value_ = other.has_value_;
    if (has_value_) new (&storage_) T(std::move(other.raw()));
    return *this;
  }
  ~StatusOr() { Reset(); }

  bool ok() const { return has_value_; }
  const Status& status() const& { return status_; }
  Status status() && { return std::move(status_); }

  T& value() & { return ref(); }
  const T& value() const& { return ref(); }
  T&& value() && { return std::move(ref()); }
  T& operator*() & { return ref(); }
  const T& operator*() const& { return ref(); }
  T&& operator*() && { return std::move(ref()); }
  T* operator->() { return &ref(); }
  const T* operator->() const { return &ref(); }

 private:
  // Checked access: every public accessor goes through these.
  T& ref() {
    if (!has_value_) status_internal::DieOnBadStatusOrAccess(status_);
    return raw();
  }
  const T& ref() const {
    if (!has_value_) status_internal::DieOnBadStatusOrAccess(status_);
    return raw();
  }
  T& raw() { return *std::launder(reinterpret_cast<T*>(&storage_)); }
  const T& raw() const { return *std::launder(reinterpret_cast<const T*>(&storage_)); }
  void Reset() {
    if (has_value_) raw().~T();
    has_value_ = false;
  }

  Status status_;
  bool has_value_ = false;
  std::aligned_storage_t<sizeof(T), alignof(T)> storage_;
};

}  // namespace sorun

#define SORUN_STATUS_CONCAT_INNER_(a, b) a##b
#define SORUN_STATUS_CONCAT_(a, b) SORUN_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define SORUN_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::sorun::Status sorun_status_ = (expr);        \
    if (!sorun_status_.ok()) return sorun_status_; \
  } while (0)

// Like SORUN_RETURN_IF_ERROR, prefixing `context` (a string expression) to the message.
#define SORUN_RETURN_IF_ERROR_CTX(expr, context)                                \
  do {                                                                          \
    ::sorun::Status sorun_status_ = (expr);                                     \
    if (!sorun_status_.ok()) return std::move(sorun_status_).Annotate(context); \
  } while (0)

// `lhs = value of rexpr` or return its error. lhs may declare a variable: SORUN_ASSIGN_OR_RETURN(auto x, F()).
#define SORUN_ASSIGN_OR_RETURN(lhs, rexpr) \
  SORUN_ASSIGN_OR_RETURN_IMPL_(SORUN_STATUS_CONCAT_(sorun_statusor_, __LINE__), lhs, rexpr)
#define SORUN_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                 \
  if (!tmp.ok()) return std::move(tmp).status();      \
  lhs = std::move(tmp).value()

#endif  // SORUN_BASE_STATUS_H_
