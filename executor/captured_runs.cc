#include "executor/captured_runs.h"

#include <utility>

namespace sorun {

CapturedRuns::CapturedRuns(DLDevice device, std::string refusal) : device_(device), refusal_(std::move(refusal)) {
  report_.requested = true;
  report_.refusal = refusal_;
}

CapturedRuns::~CapturedRuns() { DropGraph(); }

void CapturedRuns::DropGraph() {
  if (graph_ && launched_on_ != nullptr) {
    auto api = GetDeviceApi(device_.device_type);
    if (api.ok()) (void)(*api)->Sync(device_, launched_on_);  // nothing to report it to; the graph goes anyway
  }
  launched_on_ = nullptr;
  graph_.reset();
  report_.active = false;
  report_.operations = 0;
}

Status CapturedRuns::Uncaptured(const std::function<Status(bool)>& run) {
  ++report_.uncaptured_runs;
  return run(false);
}

Status CapturedRuns::Replay(TVMStreamHandle stream) {
  launched_on_ = stream;
  SORUN_RETURN_IF_ERROR(graph_->Launch(stream));
  ++report_.replays;
  return Status::Ok();
}

Status CapturedRuns::Run(std::vector<uint64_t> key, const std::string& key_refusal, TVMStreamHandle stream,
                         const std::function<Status(bool capturing)>& run, const std::function<std::string()>& check) {
  if (!refusal_.empty()) return Uncaptured(run);
  if (!have_key_ || key != key_) {
    DropGraph();
    key_ = std::move(key);
    have_key_ = true;
    runs_with_key_ = 0;
    report_.refusal = key_refusal;
  }
  if (graph_) return Replay(stream);
  // The first run with these bindings makes the allocations a recording could not.
  if (!report_.refusal.empty() || runs_with_key_++ == 0) return Uncaptured(run);

  SORUN_ASSIGN_OR_RETURN(DeviceApi * api, GetDeviceApi(device_.device_type));
  Status begin = api->BeginCapture(device_, stream);
  if (!begin.ok()) {
    report_.refusal = begin.message();
    return Uncaptured(run);
  }
  Status recorded = run(true);
  const std::string why = recorded.ok() ? check() : std::string();
  auto graph = api->EndCapture(device_, stream);
  if (!recorded.ok() || !why.empty() || !graph.ok()) {
    report_.refusal = !recorded.ok() ? "a step could not be recorded: " + recorded.message()
                      : !why.empty() ? why
                                     : graph.status().message();
    return Uncaptured(run);  // nothing ran while recording: run it for real
  }
  graph_ = std::move(*graph);
  ++report_.captures;
  report_.active = true;
  report_.operations = graph_->num_operations();
  return Replay(stream);
}

}  // namespace sorun
