#include "runtime/startup_timings.h"

#include <atomic>

namespace sorun {
namespace {

// Nanoseconds and counts, as integers (atomic doubles need CAS loops).
std::atomic<uint64_t> g_ns[4];
std::atomic<uint64_t> g_modules{0};
std::atomic<uint64_t> g_modules_ptx{0};
std::atomic<uint64_t> g_jit_ns{0};
std::atomic<uint64_t> g_upload_bytes{0};

uint64_t ToNs(double ms) { return ms <= 0 ? 0 : static_cast<uint64_t>(ms * 1e6); }
double ToMs(uint64_t ns) { return static_cast<double>(ns) / 1e6; }

}  // namespace

void AddStartupTime(StartupPhase phase, double ms, uint64_t count) {
  g_ns[static_cast<int>(phase)].fetch_add(ToNs(ms), std::memory_order_relaxed);
  if (phase == StartupPhase::kModuleLoad) g_modules.fetch_add(count, std::memory_order_relaxed);
  if (phase == StartupPhase::kWeightUpload) g_upload_bytes.fetch_add(count, std::memory_order_relaxed);
}

void AddModuleJit(bool ptx_only, double jit_ms) {
  if (ptx_only) g_modules_ptx.fetch_add(1, std::memory_order_relaxed);
  g_jit_ns.fetch_add(ToNs(jit_ms), std::memory_order_relaxed);
}

StartupTimings ReadStartupTimings() {
  StartupTimings t;
  t.driver_open_ms = ToMs(g_ns[static_cast<int>(StartupPhase::kDriverOpen)].load(std::memory_order_relaxed));
  t.device_context_ms = ToMs(g_ns[static_cast<int>(StartupPhase::kDeviceContext)].load(std::memory_order_relaxed));
  t.module_load_ms = ToMs(g_ns[static_cast<int>(StartupPhase::kModuleLoad)].load(std::memory_order_relaxed));
  t.weight_upload_ms = ToMs(g_ns[static_cast<int>(StartupPhase::kWeightUpload)].load(std::memory_order_relaxed));
  t.modules_loaded = g_modules.load(std::memory_order_relaxed);
  t.modules_ptx_only = g_modules_ptx.load(std::memory_order_relaxed);
  t.jit_ms = ToMs(g_jit_ns.load(std::memory_order_relaxed));
  t.weight_bytes_uploaded = g_upload_bytes.load(std::memory_order_relaxed);
  return t;
}

StartupTimings StartupTimingsBetween(const StartupTimings& a, const StartupTimings& b) {
  StartupTimings d;
  d.driver_open_ms = b.driver_open_ms - a.driver_open_ms;
  d.device_context_ms = b.device_context_ms - a.device_context_ms;
  d.module_load_ms = b.module_load_ms - a.module_load_ms;
  d.weight_upload_ms = b.weight_upload_ms - a.weight_upload_ms;
  d.modules_loaded = b.modules_loaded - a.modules_loaded;
  d.modules_ptx_only = b.modules_ptx_only - a.modules_ptx_only;
  d.jit_ms = b.jit_ms - a.jit_ms;
  d.weight_bytes_uploaded = b.weight_bytes_uploaded - a.weight_bytes_uploaded;
  return d;
}

}  // namespace sorun
