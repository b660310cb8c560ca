#include "serving/triton/request_execution.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "serving/triton/request_io.h"
#include "serving/triton/triton_errors.h"

namespace sorun::triton {
namespace {

uint64_t NowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// `binding`'s model shape with `rows` as its batch dimension (the model's own shape without batching).
std::vector<int64_t> RunShape(const TensorBinding& binding, bool batching, int64_t rows) {
  std::vector<int64_t> shape = binding.model_shape;
  if (batching) shape[0] = rows;
  return shape;
}

// A DLTensor over `data` with `shape` (which must outlive the view).
DLTensor View(char* data, const TensorBinding& binding, const std::vector<int64_t>& shape, DLDevice device) {
  DLTensor tensor{};
  tensor.data = data;
  tensor.device = device;
  tensor.ndim = static_cast<int32_t>(shape.size());
  tensor.dtype = binding.dtype;
  tensor.shape = const_cast<int64_t*>(shape.data());
  tensor.strides = nullptr;
  tensor.byte_offset = 0;
  return tensor;
}

// Copies `size` bytes starting at byte `offset` of the concatenated host `segments` into `out`.
Status GatherBytes(const std::vector<BufferSegment>& segments, uint64_t offset, uint64_t size, char* out,
                   const std::string& input_name) {
  for (const BufferSegment& segment : segments) {
    if (size == 0) break;
    if (offset >= segment.size) {
      offset -= segment.size;
      continue;
    }
    if (!IsHostMemory(segment)) {
      return Unimplemented("input '" + input_name +
                           "' is in GPU memory and its rows must be gathered across requests; send it in CPU memory "
                           "or use max_batch_size: 0");
    }
    const uint64_t n = std::min(size, segment.size - offset);
    std::memcpy(out, segment.data + offset, n);
    out += n;
    size -= n;
    offset = 0;
  }
  if (size != 0) return Internal("input '" + input_name + "': request buffers end early");
  return Status::Ok();
}

// The rows [first, first + count) of the execute call's batch that belong to `pending`.
struct RowSpan {
  PendingRequest* pending;
  int64_t first;  // in the request's own rows
  int64_t count;
  int64_t chunk_row;  // where they sit in the chunk
};

class BatchRunner {
 public:
  explicit BatchRunner(InstanceState& instance) : instance_(instance), model_(instance.model_state()) {}

  // Runs rows [chunk_start, chunk_start + model_batch) of the batch laid out in `spans`: model_batch()
  // rows (the last chunk padded with zero rows), or exactly the chunk's rows when the batch is dynamic.
  Status RunChunk(const std::vector<RowSpan>& spans) {
    int64_t rows = model_.model_batch();
    if (model_.batch_is_dynamic()) rows = spans.empty() ? 0 : spans.back().chunk_row + spans.back().count;
    rows_ = rows;
    const bool in_place = spans.size() == 1 && spans[0].count == rows;
    for (size_t i = 0; i < model_.inputs().size(); ++i) {
      const TensorBinding& binding = model_.inputs()[i];
      const int index = instance_.input_index(i);
      const std::vector<int64_t> shape = RunShape(binding, model_.batching(), rows);
      if (in_place) {
        const RowSpan& span = spans[0];
        const std::vector<BufferSegment>& segments = span.pending->inputs[i];
        const uint64_t offset = static_cast<uint64_t>(span.first) * binding.row_bytes;
        if (segments.size() == 1) {
          DLTensor view = View(segments[0].data + offset, binding, shape, DeviceOf(segments[0]));
          SORUN_RETURN_IF_ERROR_CTX(instance_.executor().SetInput(index, view), "input '" + binding.name + "'");
          continue;
        }
      }
      const NDArray& staging = instance_.input_staging(i);
      char* out = static_cast<char*>(staging.data());
      if (spans.empty() || spans.back().chunk_row + spans.back().count < rows) {
        std::memset(out, 0, static_cast<uint64_t>(rows) * binding.row_bytes);  // the padded rows of the last chunk
      }
      for (const RowSpan& span : spans) {
        SORUN_RETURN_IF_ERROR(
            GatherBytes(span.pending->inputs[i], static_cast<uint64_t>(span.first) * binding.row_bytes,
                        static_cast<uint64_t>(span.count) * binding.row_bytes,
                        out + static_cast<uint64_t>(span.chunk_row) * binding.row_bytes, binding.name));
      }
      DLTensor view = View(out, binding, shape, staging.device());
      SORUN_RETURN_IF_ERROR_CTX(instance_.executor().SetInput(index, view), "input '" + binding.name + "'");
    }
    SORUN_RETURN_IF_ERROR(instance_.executor().Run());
    instance_.LogGraphRefusalOnce();
    for (const RowSpan& span : spans) {
      for (const OutputTarget& target : span.pending->outputs) {
        SORUN_RETURN_IF_ERROR(WriteOutput(span, target, in_place));
      }
    }
    return Status::Ok();
  }

 private:
  Status WriteOutput(const RowSpan& span, const OutputTarget& target, bool in_place) {
    const TensorBinding& binding = model_.outputs()[target.binding];
    const int index = instance_.output_index(target.binding);
    const uint64_t offset = static_cast<uint64_t>(span.first) * binding.row_bytes;
    if (in_place) {
      const std::vector<int64_t> shape = RunShape(binding, model_.batching(), rows_);
      DLTensor view = View(target.buffer.data + offset, binding, shape, DeviceOf(target.buffer));
      SORUN_RETURN_IF_ERROR_CTX(instance_.executor().CopyOutputTo(index, view), "output '" + binding.name + "'");
      return Status::Ok();
    }
    if (!IsHostMemory(target.buffer)) {
      return Unimplemented("output '" + binding.name +
                           "' is requested in GPU memory and its rows must be scattered across requests; request it "
                           "in CPU memory or use max_batch_size: 0");
    }
    SORUN_ASSIGN_OR_RETURN(NDArray output, instance_.executor().GetOutput(index));
    if (output.nbytes() != static_cast<uint64_t>(rows_) * binding.row_bytes) {
      return Internal("output '" + binding.name + "' is " + output.Describe() + " after a run of " +
                      std::to_string(rows_) + " row(s); config.pbtxt promises " + std::to_string(binding.row_bytes) +
                      " bytes per row");
    }
    if (output.device().device_type != kDLCPU) {
      SORUN_ASSIGN_OR_RETURN(output, output.CopyTo(DLDevice{kDLCPU, 0}));
    }
    std::memcpy(target.buffer.data + offset,
                static_cast<const char*>(output.data()) + static_cast<uint64_t>(span.chunk_row) * binding.row_bytes,
                static_cast<uint64_t>(span.count) * binding.row_bytes);
    return Status::Ok();
  }

  InstanceState& instance_;
  const ModelState& model_;
  int64_t rows_ = 0;  // rows of the chunk RunChunk runs (the model's batch dimension in this run)
};

// Runs every request that passed its checks: the batch's rows end to end, model_batch() at a time.
// A failing chunk records its error in each request it holds rows of.
void RunRequests(InstanceState& instance, std::vector<PendingRequest>& pending) {
  const int64_t batch = instance.model_state().model_batch();
  std::vector<PendingRequest*> runnable;
  int64_t total_rows = 0;
  for (PendingRequest& request : pending) {
    if (!request.ok()) continue;
    request.first_row = total_rows;
    total_rows += request.rows;
    runnable.push_back(&request);
  }
  BatchRunner runner(instance);
  size_t next = 0;  // first request with rows at or after chunk_start
  std::vector<RowSpan> spans;
  for (int64_t chunk_start = 0; chunk_start < total_rows; chunk_start += batch) {
    const int64_t chunk_end = std::min(chunk_start + batch, total_rows);
    spans.clear();
    for (size_t r = next; r < runnable.size() && runnable[r]->first_row < chunk_end; ++r) {
      PendingRequest* request = runnable[r];
      const int64_t begin = std::max(chunk_start, request->first_row);
      const int64_t end = std::min(chunk_end, request->first_row + request->rows);
      if (begin < end) spans.push_back(RowSpan{request, begin - request->first_row, end - begin, begin - chunk_start});
    }
    while (next < runnable.size() && runnable[next]->first_row + runnable[next]->rows <= chunk_end) ++next;
    bool any_ok = false;
    for (const RowSpan& span : spans) any_ok = any_ok || span.pending->status.ok();
    if (!any_ok) continue;  // every request of this chunk already failed
    Status status = runner.RunChunk(spans);
    if (!status.ok()) {
      status.Annotate("model '" + instance.model_state().name() + "' instance '" + instance.name() + "'");
      for (const RowSpan& span : spans) {
        if (span.pending->status.ok()) span.pending->status = status;
      }
    }
  }
}

void SendResponse(const ModelState& model, PendingRequest& request) {
  if (request.response == nullptr) return;
  TRITONSERVER_Error* error = nullptr;
  if (request.cancelled) {
    error = TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_CANCELLED,
                                  ("model '" + model.name() + "': the request was cancelled").c_str());
  } else {
    error = ToTritonError(request.status);
  }
  Status sent =
      FromTritonError(TRITONBACKEND_ResponseSend(request.response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, error),
                      "TRITONBACKEND_ResponseSend");
  if (error != nullptr) TRITONSERVER_ErrorDelete(error);
  request.response = nullptr;
  if (!sent.ok()) LogError("model '" + model.name() + "': " + sent.message());
}

}  // namespace

void ExecuteRequests(InstanceState& instance, TRITONBACKEND_Request** requests, uint32_t count) {
  const uint64_t exec_start_ns = NowNs();
  const ModelState& model = instance.model_state();
  std::vector<PendingRequest> pending(count);
  for (uint32_t i = 0; i < count; ++i) {
    pending[i].request = requests[i];
    if (requests[i] == nullptr) {
      pending[i].status = Internal("Triton passed a null request");
      continue;
    }
    PrepareRequest(model, pending[i]);
  }

  const uint64_t compute_start_ns = NowNs();
  RunRequests(instance, pending);
  const uint64_t compute_end_ns = NowNs();

  // Statistics are reported before any response is sent, so a client that has its response already finds its
  // request counted in /v2/models/<name>/stats and /metrics (sending first left a window where it was not).
  const uint64_t exec_end_ns = NowNs();

  uint64_t batch_rows = 0;
  for (PendingRequest& request : pending) {
    if (request.request == nullptr) continue;
    const bool success = request.ok();
    if (success) batch_rows += static_cast<uint64_t>(request.rows);
    Status reported = FromTritonError(
        TRITONBACKEND_ModelInstanceReportStatistics(instance.triton_instance(), request.request, success, exec_start_ns,
                                                    compute_start_ns, compute_end_ns, exec_end_ns),
        "TRITONBACKEND_ModelInstanceReportStatistics");
    if (!reported.ok()) LogError("model '" + model.name() + "': " + reported.message());
  }
  if (batch_rows > 0) {
    Status reported = FromTritonError(
        TRITONBACKEND_ModelInstanceReportBatchStatistics(instance.triton_instance(), batch_rows, exec_start_ns,
                                                         compute_start_ns, compute_end_ns, exec_end_ns),
        "TRITONBACKEND_ModelInstanceReportBatchStatistics");
    if (!reported.ok()) LogError("model '" + model.name() + "': " + reported.message());
  }
  for (PendingRequest& request : pending) SendResponse(model, request);
  for (PendingRequest& request : pending) {
    if (request.request == nullptr) continue;
    Status released = FromTritonError(TRITONBACKEND_RequestRelease(request.request, TRITONSERVER_REQUEST_RELEASE_ALL),
                                      "TRITONBACKEND_RequestRelease");
    if (!released.ok()) LogError("model '" + model.name() + "': " + released.message());
  }
}

}  // namespace sorun::triton
