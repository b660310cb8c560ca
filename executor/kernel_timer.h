// KernelTimer: the one way every executor kind times its kernel calls, for Profile (per call site:
// mean and min over the calls) and Trace (each call of one run on a timeline). A call's time is the
// kernel's alone: the executor's non-CPU devices are waited for before the clock starts and before it
// stops (their work is asynchronous), so timing serializes device work and costs what a sync costs.
// Created by a kind's DoProfile / DoTrace on the thread that runs the executor; single-threaded.
#ifndef SORUN_EXECUTOR_KERNEL_TIMER_H_
#define SORUN_EXECUTOR_KERNEL_TIMER_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/executor_types.h"
#include "base/status.h"

namespace sorun {

class KernelTimer {
 public:
  // `record_events`: keep every call (Trace) in addition to the per-site statistics (Profile).
  KernelTimer(const std::vector<DLDevice>& devices, bool record_events);

  // Runs `call` (returning Status) as call site `site` (`name`: the site, e.g. a graph node;
  // `func_name`: the kernel) and records its time. The call's error is returned as it is.
  template <typename Call>
  Status Time(uint32_t site, std::string_view name, std::string_view func_name, Call&& call) {
    SORUN_RETURN_IF_ERROR(WaitForDevices());
    const auto start = std::chrono::steady_clock::now();
    Status status = std::forward<Call>(call)();
    Status waited = WaitForDevices();
    const auto end = std::chrono::steady_clock::now();
    SORUN_RETURN_IF_ERROR(status);
    SORUN_RETURN_IF_ERROR(waited);
    Record(site, name, func_name, start, end);
    return Status::Ok();
  }

  // One entry per call site, in the order the sites were first called.
  std::vector<NodeProfile> Profile() const;
  // Every call, in call order; start_us counted from the timer's creation.
  std::vector<KernelEvent> Events() const;

 private:
  struct Site {
    NodeProfile profile;
    double total_us = 0;
    int64_t calls = 0;
  };
  struct Call {
    size_t site;  // index into sites_
    double start_us;
    double duration_us;
  };
  Status WaitForDevices() const;
  void Record(uint32_t site, std::string_view name, std::string_view func_name,
              std::chrono::steady_clock::time_point start, std::chrono::steady_clock::time_point end);

  std::vector<DLDevice> devices_;  // the non-CPU ones
  bool record_events_;
  std::chrono::steady_clock::time_point origin_;
  std::vector<Site> sites_;
  std::unordered_map<uint32_t, size_t> site_index_;
  std::vector<Call> calls_;
};

}  // namespace sorun

#endif  // SORUN_EXECUTOR_KERNEL_TIMER_H_
