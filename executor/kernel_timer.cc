#include "executor/kernel_timer.h"

#include <algorithm>

#include "runtime/device_api.h"

namespace sorun {

KernelTimer::KernelTimer(const std::vector<DLDevice>& devices, bool record_events)
    : record_events_(record_events), origin_(std::chrono::steady_clock::now()) {
  for (const DLDevice& d : devices) {
    if (d.device_type != kDLCPU) devices_.push_back(d);
  }
}

Status KernelTimer::WaitForDevices() const {
  for (const DLDevice& d : devices_) {
    SORUN_ASSIGN_OR_RETURN(DeviceApi * api, GetDeviceApi(d.device_type));
    // The executor's stream (current during its calls): other executors' work is not waited for.
    SORUN_RETURN_IF_ERROR(api->Sync(d, api->CurrentStream(d)));
  }
  return Status::Ok();
}

void KernelTimer::Record(uint32_t site, std::string_view name, std::string_view func_name,
                         std::chrono::steady_clock::time_point start, std::chrono::steady_clock::time_point end) {
  auto [it, added] = site_index_.emplace(site, sites_.size());
  if (added) {
    Site s;
    s.profile.node_id = site;
    s.profile.name = std::string(name);
    s.profile.func_name = std::string(func_name);
    s.profile.min_us = 1e300;
    sites_.push_back(std::move(s));
  }
  Site& s = sites_[it->second];
  const double us = std::chrono::duration<double, std::micro>(end - start).count();
  s.total_us += us;
  ++s.calls;
  s.profile.min_us = std::min(s.profile.min_us, us);
  if (record_events_) {
    calls_.push_back(Call{it->second, std::chrono::duration<double, std::micro>(start - origin_).count(), us});
  }
}

std::vector<NodeProfile> KernelTimer::Profile() const {
  std::vector<NodeProfile> out;
  out.reserve(sites_.size());
  for (const Site& s : sites_) {
    NodeProfile p = s.profile;
    p.mean_us = s.total_us / static_cast<double>(s.calls);
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<KernelEvent> KernelTimer::Events() const {
  std::vector<KernelEvent> out;
  out.reserve(calls_.size());
  for (const Call& c : calls_) {
    const NodeProfile& p = sites_[c.site].profile;
    out.push_back(KernelEvent{p.node_id, p.name, p.func_name, c.start_us, c.duration_us});
  }
  return out;
}

}  // namespace sorun
