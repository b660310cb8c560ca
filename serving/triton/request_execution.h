// TRITONBACKEND_ModelInstanceExecute for the sorun backend: checks each request (request_io.h), runs
// the instance's executor, writes each response's outputs, sends the responses, reports statistics
// and releases the requests. Every request gets exactly one response (its outputs or its error) and
// is released, whatever fails; one bad request does not fail the others of its batch.
//
// Batching (docs/serving.md): with max_batch_size 0 each request is one run of the model's fixed
// shapes. With max_batch_size > 0 the model's first dimension is the batch: the rows of all the
// requests Triton hands over (dynamic batching) are laid end to end and run through the executor
// model_batch() rows at a time; a chunk that spans requests (or the zero-padded last chunk, when the
// model's batch is above 1) is gathered into host arrays, a chunk inside one request is read in place.
//
// Statistics: per-request and per-batch timestamps (exec start, compute start, compute end, exec end,
// steady clock in ns, as Triton's own) go to TRITONBACKEND_ModelInstanceReportStatistics and
// TRITONBACKEND_ModelInstanceReportBatchStatistics, so /v2/models/<m>/stats and the metrics endpoint
// count every request. Runs on the instance's execute thread only.
#ifndef SORUN_SERVING_TRITON_REQUEST_EXECUTION_H_
#define SORUN_SERVING_TRITON_REQUEST_EXECUTION_H_

#include <cstdint>

#include "serving/triton/instance_state.h"
#include "serving/triton/triton_backend_api.h"

namespace sorun::triton {

// Takes ownership of the `count` requests (always: it never hands them back to Triton).
void ExecuteRequests(InstanceState& instance, TRITONBACKEND_Request** requests, uint32_t count);

}  // namespace sorun::triton

#endif  // SORUN_SERVING_TRITON_REQUEST_EXECUTION_H_
