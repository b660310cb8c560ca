// CountingDeviceApi: a test backend of host memory registered under a device type nothing else uses
// (kDLExtDev), which counts what it is asked for — live bytes, live allocations, copies into it —
// and can be told to fail allocations. Executors' storage setup is device-agnostic, so what they ask
// this device for is what they would ask a GPU for. One instance per process (Get() registers it);
// every method may be called from any thread (one lock).
#ifndef SORUN_TESTS_UTIL_COUNTING_DEVICE_API_H_
#define SORUN_TESTS_UTIL_COUNTING_DEVICE_API_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "runtime/device_api.h"

namespace sorun {
namespace testing {

class CountingDeviceApi final : public DeviceApi {
 public:
  static constexpr DLDeviceType kType = kDLExtDev;
  // The process's instance, registered on first use (device kType:0).
  static CountingDeviceApi* Get();

  DLDeviceType device_type() const override { return kType; }
  int DeviceCount() override { return 1; }
  StatusOr<std::string> Describe(int) override { return std::string("counting host memory"); }
  Status SetDevice(int) override { return Status::Ok(); }
  StatusOr<void*> Alloc(DLDevice device, size_t nbytes, size_t alignment) override;
  void Free(DLDevice device, void* ptr) override;
  Status Copy(const DLTensor& from, const DLTensor& to, TVMStreamHandle stream) override;
  Status Sync(DLDevice, TVMStreamHandle) override { return Status::Ok(); }

  uint64_t live_bytes();
  uint64_t live_allocations();
  uint64_t allocations();  // ever made
  uint64_t copies_in();    // copies whose destination is this device
  // The next `n` allocations succeed and the ones after fail (ResourceExhausted); n < 0: never fail.
  void FailAllocationsAfter(int64_t n);

 private:
  std::mutex mutex_;
  std::map<void*, size_t> sizes_;
  uint64_t live_ = 0;
  uint64_t allocs_ = 0;
  uint64_t copies_in_ = 0;
  int64_t until_failure_ = -1;
};

}  // namespace testing
}  // namespace sorun

#endif  // SORUN_TESTS_UTIL_COUNTING_DEVICE_API_H_
