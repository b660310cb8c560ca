// Object and ObjectPtr<T>: the intrusive, thread-safe reference count under modules, packed functions,
// tensors and shared libraries.
//
// An Object is owned by every ObjectPtr pointing at it; the last one deletes it. Raw Object* values
// cross the C ABI as handles (TVM's convention); ObjectPtr::FromRaw/Adopt convert back. Reference
// counting is atomic, so ObjectPtr copies may be made and dropped concurrently from many threads.
#ifndef SORUN_BASE_OBJECT_H_
#define SORUN_BASE_OBJECT_H_

#include <atomic>
#include <cstdint>
#include <utility>

namespace sorun {

// Base of every reference-counted runtime object. Not copyable.
class Object {
 public:
  Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  virtual ~Object() = default;

  void IncRef() const { ref_count_.fetch_add(1, std::memory_order_relaxed); }
  void DecRef() const {
    if (ref_count_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  int32_t use_count() const { return ref_count_.load(std::memory_order_relaxed); }
  // Takes a reference only if the object is still alive (count > 0); for weak caches whose entries
  // are removed by the destructor under the cache's lock. Seeing the count at 0 acquires the last
  // DecRef, so what its owners did before letting go happens before the caller replaces the object.
  bool TryIncRef() const {
    int32_t n = ref_count_.load(std::memory_order_acquire);
    while (n > 0) {
      if (ref_count_.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel)) return true;
    }
    return false;
  }

 private:
  mutable std::atomic<int32_t> ref_count_{0};
};

// Owning pointer to an Object subclass. Null by default.
template <typename T>
class ObjectPtr {
 public:
  ObjectPtr() noexcept = default;
  ObjectPtr(std::nullptr_t) noexcept {}  // NOLINT(runtime/explicit)
  ObjectPtr(const ObjectPtr& other) noexcept : ptr_(other.ptr_) {
    if (ptr_) ptr_->IncRef();
  }
  ObjectPtr(ObjectPtr&& other) noexcept : ptr_(other.ptr_) { other.ptr_ = nullptr; }
  template <typename U>
  ObjectPtr(const ObjectPtr<U>& other) noexcept : ptr_(other.get()) {  // NOLINT(runtime/explicit)
    if (ptr_) ptr_->IncRef();
  }
  template <typename U>
  ObjectPtr(ObjectPtr<U>&& other) noexcept : ptr_(other.release()) {}  // NOLINT(runtime/explicit)
  ~ObjectPtr() {
    if (ptr_) ptr_->DecRef();
  }
  ObjectPtr& operator=(ObjectPtr other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }

  // Takes a new reference to `raw` (which another owner already keeps alive).
  static ObjectPtr FromRaw(T* raw) noexcept {
    ObjectPtr p;
    p.ptr_ = raw;
    if (raw) raw->IncRef();
    return p;
  }
  // Takes over one reference previously released with release().
  static ObjectPtr Adopt(T* raw) noexcept {
    ObjectPtr p;
    p.ptr_ = raw;
    return p;
  }

  T* get() const noexcept { return ptr_; }
  T* operator->() const noexcept { return ptr_; }
  T& operator*() const noexcept { return *ptr_; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  // Gives up ownership of one reference without decrementing.
  T* release() noexcept {
    T* p = ptr_;
    ptr_ = nullptr;
    return p;
  }
  void reset() noexcept { ObjectPtr().swap(*this); }
  void swap(ObjectPtr& other) noexcept { std::swap(ptr_, other.ptr_); }

  friend bool operator==(const ObjectPtr& a, const ObjectPtr& b) { return a.ptr_ == b.ptr_; }
  friend bool operator!=(const ObjectPtr& a, const ObjectPtr& b) { return a.ptr_ != b.ptr_; }

 private:
  T* ptr_ = nullptr;
};

// Allocates a T and returns the first owning pointer to it.
template <typename T, typename... Args>
ObjectPtr<T> MakeObject(Args&&... args) {
  return ObjectPtr<T>::FromRaw(new T(std::forward<Args>(args)...));
}

}  // namespace sorun

#endif  // SORUN_BASE_OBJECT_H_
