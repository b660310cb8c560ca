#include "executor/device_weight_cache.h"

#include <chrono>
#include <utility>

#include "runtime/data_type.h"
#include "runtime/startup_timings.h"

namespace sorun {

DeviceWeightCache::DeviceWeightCache(std::vector<Tensor> host, std::vector<std::string> names)
    : host_(std::move(host)), names_(std::move(names)) {
  for (const Tensor& t : host_) host_bytes_ += t.defined() ? t.nbytes() : 0;
}

DeviceWeightCache::~DeviceWeightCache() = default;

std::string DeviceWeightCache::Name(size_t index) const {
  return index < names_.size() && !names_[index].empty() ? names_[index] : "weight " + std::to_string(index);
}

DeviceWeightCache::PerDevice& DeviceWeightCache::Slot(DLDevice device) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<PerDevice>& slot = devices_[{device.device_type, device.device_id}];
  if (!slot) {
    slot = std::make_unique<PerDevice>();
    slot->copies.resize(host_.size());
  }
  return *slot;
}

StatusOr<Tensor> DeviceWeightCache::Upload(size_t index, DLDevice device) const {
  const auto start = std::chrono::steady_clock::now();
  auto copy = host_[index].CopyToDevice(device);
  AddStartupTime(StartupPhase::kWeightUpload,
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
                 copy.ok() ? host_[index].nbytes() : 0);
  if (!copy.ok()) {
    return std::move(copy).status().Annotate("uploading " + Name(index) + " (" + host_[index].Describe() + ") to " +
                                             DeviceToString(device));
  }
  copy->node()->read_only = true;  // shared by every executor on the device
  return *std::move(copy);
}

StatusOr<Tensor> DeviceWeightCache::Get(size_t index, DLDevice device) {
  if (index >= host_.size() || !host_[index].defined()) {
    return InvalidArgument("no weight " + std::to_string(index) + " to place on " + DeviceToString(device));
  }
  if (device.device_type == kDLCPU) return host_[index];
  PerDevice& slot = Slot(device);
  std::lock_guard<std::mutex> lock(slot.upload);
  Tensor& cached = slot.copies[index];
  if (cached.defined()) return cached;
  SORUN_ASSIGN_OR_RETURN(Tensor copy, Upload(index, device));
  cached = copy;
  slot.bytes.fetch_add(copy.nbytes(), std::memory_order_relaxed);
  return copy;
}

StatusOr<std::vector<Tensor>> DeviceWeightCache::GetAll(DLDevice device) {
  if (device.device_type == kDLCPU) return host_;
  PerDevice& slot = Slot(device);
  std::lock_guard<std::mutex> lock(slot.upload);
  // Uploaded into a scratch list and published only once all succeeded: a failure frees its copies.
  std::vector<Tensor> all = slot.copies;
  uint64_t added = 0;
  for (size_t i = 0; i < host_.size(); ++i) {
    if (!host_[i].defined() || all[i].defined()) continue;
    SORUN_ASSIGN_OR_RETURN(all[i], Upload(i, device));
    added += all[i].nbytes();
  }
  slot.copies = all;
  slot.bytes.fetch_add(added, std::memory_order_relaxed);
  return all;
}

uint64_t DeviceWeightCache::device_bytes(DLDevice device) const {
  if (device.device_type == kDLCPU) return 0;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = devices_.find({device.device_type, device.device_id});
  return it == devices_.end() ? 0 : it->second->bytes.load(std::memory_order_relaxed);
}

}  // namespace sorun
