#include "executor/executor_streams.h"

#include <utility>

#include "runtime/data_type.h"

namespace sorun {

ExecutorStreams::ExecutorStreams(ExecutorStreams&& other) noexcept : entries_(std::move(other.entries_)) {
  other.entries_.clear();
}

ExecutorStreams& ExecutorStreams::operator=(ExecutorStreams&& other) noexcept {
  if (this != &other) {
    FreeOwn();
    entries_ = std::move(other.entries_);
    other.entries_.clear();
  }
  return *this;
}

ExecutorStreams::~ExecutorStreams() { FreeOwn(); }

void ExecutorStreams::FreeOwn() {
  // Work still queued completes; a failure here (the driver shutting down at exit) leaves nothing to do.
  for (Entry& e : entries_) {
    if (e.own != nullptr) (void)e.api->FreeStream(e.device, e.own);
    e.own = nullptr;
  }
  entries_.clear();
}

StatusOr<ExecutorStreams> ExecutorStreams::Create(const std::vector<DLDevice>& devices, StreamOrder order) {
  ExecutorStreams streams;
  for (const DLDevice& device : devices) {
    if (device.device_type == kDLCPU) continue;
    bool seen = false;
    for (const Entry& e : streams.entries_) seen = seen || e.device == device;
    if (seen) continue;
    const std::string what = "the executor's stream on " + DeviceToString(device);
    SORUN_ASSIGN_OR_RETURN(DeviceApi * api, GetDeviceApi(device.device_type));
    Entry entry;
    entry.device = device;
    entry.api = api;
    auto own = api->CreateStream(device, order);
    if (!own.ok()) return std::move(own).status().Annotate(what);
    entry.own = *own;
    streams.entries_.push_back(entry);
  }
  return streams;
}

StatusOr<const ExecutorStreams::Entry*> ExecutorStreams::Find(DLDevice device) const {
  for (const Entry& e : entries_) {
    if (e.device == device) return &e;
  }
  std::string have;
  for (const Entry& e : entries_) have += (have.empty() ? "" : ", ") + DeviceToString(e.device);
  return InvalidArgument("stream of " + DeviceToString(device) + ": not a device of this executor with streams (" +
                         (have.empty() ? std::string("it has none: a CPU executor queues nothing") : "it has " + have) +
                         ")");
}

StatusOr<TVMStreamHandle> ExecutorStreams::Get(DLDevice device) const {
  SORUN_ASSIGN_OR_RETURN(const Entry* e, Find(device));
  return e->in_use();
}

Status ExecutorStreams::Set(DLDevice device, TVMStreamHandle stream) {
  SORUN_ASSIGN_OR_RETURN(const Entry* found, Find(device));
  Entry& e = entries_[static_cast<size_t>(found - entries_.data())];
  if (stream != nullptr && e.own == nullptr) {
    // The backend has no streams: only its default queue exists (refused the same way it refuses).
    SORUN_RETURN_IF_ERROR_CTX(e.api->SetCurrentStream(device, stream), "SetStream");
  }
  // Work queued on the stream given up must finish before the next one is used: the executor's
  // buffers are shared by both.
  SORUN_RETURN_IF_ERROR_CTX(e.api->Sync(device, e.in_use()), "SetStream: waiting for the previous stream");
  e.host = stream;
  return Status::Ok();
}

Status ExecutorStreams::Synchronize() const {
  for (const Entry& e : entries_) SORUN_RETURN_IF_ERROR(e.api->Sync(e.device, e.in_use()));
  return Status::Ok();
}

ExecutorStreams::Scope::Scope(const ExecutorStreams& streams) : streams_(streams) {
  if (streams_.entries_.empty()) return;
  previous_.reserve(streams_.entries_.size());
  for (const Entry& e : streams_.entries_) {
    previous_.push_back(e.api->CurrentStream(e.device));
    // Cannot fail: the device id was checked when the stream was made.
    (void)e.api->SetCurrentStream(e.device, e.in_use());
  }
}

ExecutorStreams::Scope::~Scope() {
  for (size_t i = previous_.size(); i-- > 0;) {
    const Entry& e = streams_.entries_[i];
    (void)e.api->SetCurrentStream(e.device, previous_[i]);
  }
}

}  // namespace sorun
