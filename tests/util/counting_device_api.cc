#include "tests/util/counting_device_api.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

#include "runtime/data_type.h"

namespace sorun {
namespace testing {

CountingDeviceApi* CountingDeviceApi::Get() {
  static CountingDeviceApi* api = [] {
    auto owned = std::make_unique<CountingDeviceApi>();
    CountingDeviceApi* raw = owned.get();
    Status s = RegisterDeviceApi(std::move(owned));
    if (!s.ok()) std::abort();  // a test binary registers it once
    return raw;
  }();
  return api;
}

StatusOr<void*> CountingDeviceApi::Alloc(DLDevice, size_t nbytes, size_t alignment) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (until_failure_ == 0) return ResourceExhausted("counting device: allocation failure requested by the test");
    if (until_failure_ > 0) --until_failure_;
  }
  void* p = nullptr;
  if (posix_memalign(&p, alignment < 64 ? 64 : alignment, nbytes ? nbytes : 1) != 0) return ResourceExhausted("oom");
  std::lock_guard<std::mutex> lock(mutex_);
  sizes_[p] = nbytes;
  live_ += nbytes;
  ++allocs_;
  return p;
}

void CountingDeviceApi::Free(DLDevice, void* p) {
  std::lock_guard<std::mutex> lock(mutex_);
  live_ -= sizes_[p];
  sizes_.erase(p);
  std::free(p);
}

Status CountingDeviceApi::Copy(const DLTensor& from, const DLTensor& to, TVMStreamHandle) {
  SORUN_ASSIGN_OR_RETURN(uint64_t n, ShapeByteSize(from.shape, from.ndim, from.dtype));
  std::memmove(static_cast<char*>(to.data) + to.byte_offset, static_cast<const char*>(from.data) + from.byte_offset, n);
  if (to.device.device_type == kType) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++copies_in_;
  }
  return Status::Ok();
}

uint64_t CountingDeviceApi::live_bytes() {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_;
}

uint64_t CountingDeviceApi::live_allocations() {
  std::lock_guard<std::mutex> lock(mutex_);
  return sizes_.size();
}

uint64_t CountingDeviceApi::allocations() {
  std::lock_guard<std::mutex> lock(mutex_);
  return allocs_;
}

uint64_t CountingDeviceApi::copies_in() {
  std::lock_guard<std::mutex> lock(mutex_);
  return copies_in_;
}

void CountingDeviceApi::FailAllocationsAfter(int64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  until_failure_ = n < 0 ? -1 : n;
}

}  // namespace testing
}  // namespace sorun
