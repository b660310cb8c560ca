// CapturedRuns: an executor's runs replayed as a device graph (ExecutorOptions::cuda_graph). Each run
// comes with its bindings (the addresses and shapes of the executor's inputs and outputs: a key):
//   - the first run with a key runs kernel by kernel (it also makes every allocation a run needs);
//   - the second is captured on the executor's stream (DeviceApi::BeginCapture / EndCapture) and the
//     graph is launched, which runs it;
//   - later runs with the same key launch the graph again: one driver call instead of one per kernel;
//   - a new key (a rebinding, another shape) drops the graph and starts over.
// A run that cannot be recorded runs uncaptured and the reason is kept (DeviceGraphReport::refusal),
// for the key it happened with; a refusal given at creation (the executor has no single device with
// capture, the kind has host kernels) holds for every run. Recording does not run anything, so a run
// whose capture failed is run again uncaptured and gives its normal result (or its normal error).
//
// Owned by ModelExecutor; used under its busy guard (one thread at a time); the report is a copy.
#ifndef SORUN_EXECUTOR_CAPTURED_RUNS_H_
#define SORUN_EXECUTOR_CAPTURED_RUNS_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/executor_types.h"
#include "base/status.h"
#include "runtime/device_api.h"

namespace sorun {

class CapturedRuns {
 public:
  // `device`: the device whose stream is captured. `refusal`: non-empty when no run may be captured.
  CapturedRuns(DLDevice device, std::string refusal);
  CapturedRuns(const CapturedRuns&) = delete;
  CapturedRuns& operator=(const CapturedRuns&) = delete;
  ~CapturedRuns();

  // One run with bindings `key` on `stream` (the executor's stream of the device). `run(capturing)`
  // runs the kernels once (recorded, not run, when `capturing`); `check()` is asked after a recorded
  // run whether it did something a replay would not repeat ("" when not; else the reason).
  // `key_refusal`: non-empty when these bindings cannot be captured (e.g. an input in host memory).
  Status Run(std::vector<uint64_t> key, const std::string& key_refusal, TVMStreamHandle stream,
             const std::function<Status(bool capturing)>& run, const std::function<std::string()>& check);

  DeviceGraphReport report() const { return report_; }
  // The owner waited for the streams (Synchronize, SetStream): no replay is in flight any more.
  // Otherwise the destructor and a rebinding wait for the last replay's stream before the graph (and
  // the workspace it owns) goes.
  void StreamsSynchronized() { launched_on_ = nullptr; }

 private:
  Status Uncaptured(const std::function<Status(bool)>& run);
  // Launches the graph on `stream` and counts the replay.
  Status Replay(TVMStreamHandle stream);
  void DropGraph();

  const DLDevice device_;
  const std::string refusal_;
  std::vector<uint64_t> key_;
  bool have_key_ = false;
  int runs_with_key_ = 0;
  std::unique_ptr<DeviceGraph> graph_;
  TVMStreamHandle launched_on_ = nullptr;  // where the last replay was queued, until synchronized
  DeviceGraphReport report_;
};

}  // namespace sorun

#endif  // SORUN_EXECUTOR_CAPTURED_RUNS_H_
