// DeviceWeightCache: the one copy per device of a model's weights, shared read-only by every executor
// of the model on that device — the rule "one upload per model per device" (docs/architecture.md,
// Memory) for both executor kinds: graph_executor's SharedWeights (the parameters, one at a time, as
// each executor's memory plan binds them) and relax's VmProgram (the tensor constants, all at once,
// for an executor's first device).
//
// Owns the host tensors it is given (by index; an undefined entry is a slot with nothing to upload)
// and, per non-CPU device, their uploaded copies (marked read-only). The model's shared part owns the
// cache, so the copies are freed when the model goes and no executor holds one any more.
//
// Threads: every method may be called from any thread at once. The uploads to one device run under
// that device's lock: of many executors made at once for a device exactly one uploads, the others
// wait for it and share its copies; uploads to other devices are not held up. An upload that fails
// keeps nothing: the copies it made are freed, nothing is cached, and the next call tries again.
#ifndef SORUN_EXECUTOR_DEVICE_WEIGHT_CACHE_H_
#define SORUN_EXECUTOR_DEVICE_WEIGHT_CACHE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "runtime/tensor.h"

namespace sorun {

class DeviceWeightCache {
 public:
  // `host`: the weights as the model holds them (CPU tensors; undefined entries allowed); `names[i]`
  // is what errors call weight i ("param 'w'", "constant c[3]"); as many names as tensors.
  DeviceWeightCache(std::vector<Tensor> host, std::vector<std::string> names);
  ~DeviceWeightCache();
  DeviceWeightCache(const DeviceWeightCache&) = delete;
  DeviceWeightCache& operator=(const DeviceWeightCache&) = delete;

  size_t size() const { return host_.size(); }
  const Tensor& host(size_t index) const { return host_[index]; }
  // Bytes of the defined host tensors.
  uint64_t host_bytes() const { return host_bytes_; }

  // Weight `index` (< size(), defined) on `device`: the host tensor itself on the CPU; elsewhere its
  // read-only copy, uploaded by the first call that asks for it on that device.
  StatusOr<Tensor> Get(size_t index, DLDevice device);
  // Every weight on `device` (undefined where the host entry is): the host tensors on the CPU; elsewhere
  // all of them uploaded (those not uploaded yet, by this call), or an error and nothing kept.
  StatusOr<std::vector<Tensor>> GetAll(DLDevice device);

  // Bytes of the copies held on `device` (0 on the CPU and before the first upload). Never waits for an
  // upload in progress.
  uint64_t device_bytes(DLDevice device) const;

 private:
  struct PerDevice {
    std::mutex upload;               // held while uploading to this device
    std::vector<Tensor> copies;      // by index (size() entries); undefined: not uploaded
    std::atomic<uint64_t> bytes{0};  // of `copies`
  };
  // The entry of `device`, made on first use (under mutex_, never held while uploading).
  PerDevice& Slot(DLDevice device);
  // What errors call weight `index`.
  std::string Name(size_t index) const;
  // A read-only copy of host tensor `index` on `device`.
  StatusOr<Tensor> Upload(size_t index, DLDevice device) const;

  const std::vector<Tensor> host_;
  const std::vector<std::string> names_;
  uint64_t host_bytes_ = 0;
  mutable std::mutex mutex_;  // guards the map below, not its entries
  std::map<std::pair<int, int>, std::unique_ptr<PerDevice>> devices_;
};

}  // namespace sorun

#endif  // SORUN_EXECUTOR_DEVICE_WEIGHT_CACHE_H_
