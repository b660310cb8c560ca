// One Triton request as the sorun backend sees it during TRITONBACKEND_ModelInstanceExecute: its
// checked inputs (where each input's bytes are), its response and the output buffers of that
// response (where each requested output's bytes go), and its first error.
//
// PrepareRequest checks the request against the model (names, datatypes, shapes, byte sizes; errors
// name the input and say what the model takes) and allocates the response's outputs; nothing runs.
// A PendingRequest borrows Triton's request, response and buffers: valid until the response is sent
// and the request released (request_execution.cc). Used by one execute thread.
#ifndef SORUN_SERVING_TRITON_REQUEST_IO_H_
#define SORUN_SERVING_TRITON_REQUEST_IO_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "serving/triton/model_state.h"
#include "serving/triton/triton_backend_api.h"

namespace sorun::triton {

// A contiguous piece of a tensor's bytes (Triton may split an input into several buffers).
struct BufferSegment {
  char* data = nullptr;
  uint64_t size = 0;
  TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
  int64_t memory_type_id = 0;
};

// Where one requested output goes: the response's buffer for model_state.outputs()[binding].
struct OutputTarget {
  size_t binding = 0;
  BufferSegment buffer;
};

struct PendingRequest {
  TRITONBACKEND_Request* request = nullptr;
  TRITONBACKEND_Response* response = nullptr;      // null once sent, or when it could not be created
  int64_t rows = 1;                                // batch rows (1 without batching)
  int64_t first_row = 0;                           // position of the first row in the execute call's batch
  std::vector<std::vector<BufferSegment>> inputs;  // per model_state.inputs() binding
  std::vector<OutputTarget> outputs;               // the outputs the client asked for
  Status status;                                   // the first error; sent in the response
  bool cancelled = false;                          // the client cancelled the request
  bool ok() const { return status.ok() && !cancelled; }
};

// Creates `pending.response` and fills `pending` from `pending.request`. Records an error in
// `pending.status` (never aborts); a request that fails here is answered with that error.
void PrepareRequest(const ModelState& model, PendingRequest& pending);

// The DLDevice of Triton memory (CPU and pinned host memory: cpu:0; GPU: cuda:<id>).
DLDevice DeviceOf(const BufferSegment& segment);
bool IsHostMemory(const BufferSegment& segment);

}  // namespace sorun::triton

#endif  // SORUN_SERVING_TRITON_REQUEST_IO_H_
