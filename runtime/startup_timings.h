// StartupTimings: process-wide totals of the one-time work that makes a model's first run slow on a
// device — opening the device driver, creating a device context, loading device code (and the
// driver's JIT compilation of PTX inside it) and uploading weights — so a cold start can be told apart
// (`sorun bench --json`'s "cold_start", docs/cuda.md). Backends and the weight cache add to it; readers
// take a snapshot before and after a step and subtract. Any thread (relaxed atomics: totals only).
#ifndef SORUN_RUNTIME_STARTUP_TIMINGS_H_
#define SORUN_RUNTIME_STARTUP_TIMINGS_H_

#include <cstdint>

namespace sorun {

enum class StartupPhase {
  kDriverOpen,     // dlopen of the driver library and its initialization (cuInit)
  kDeviceContext,  // a device's context, made on its first use (CUDA: the primary context)
  kModuleLoad,     // device code handed to the driver (cuModuleLoadDataEx), JIT compilation included
  kWeightUpload,   // weights copied to a device (executor/device_weight_cache.h)
};

struct StartupTimings {
  double driver_open_ms = 0;
  double device_context_ms = 0;
  double module_load_ms = 0;
  double weight_upload_ms = 0;
  uint64_t modules_loaded = 0;
  uint64_t modules_ptx_only = 0;  // images with no machine code (fmt ptx): the driver must compile them
  double jit_ms = 0;              // compile time the driver reported (CU_JIT_WALL_TIME); 0: machine code or
                                  // its JIT cache served every image
  uint64_t weight_bytes_uploaded = 0;
};

// Adds `ms` to `phase` (and `count` to its counter: modules loaded, bytes uploaded).
void AddStartupTime(StartupPhase phase, double ms, uint64_t count = 0);
// A module load's JIT facts: whether its image was PTX only, and the driver's compile time.
void AddModuleJit(bool ptx_only, double jit_ms);
// The totals so far.
StartupTimings ReadStartupTimings();
// b - a, field by field (what a step between two snapshots did).
StartupTimings StartupTimingsBetween(const StartupTimings& a, const StartupTimings& b);

}  // namespace sorun

#endif  // SORUN_RUNTIME_STARTUP_TIMINGS_H_
