// The boundary between sorun::Status and Triton's TRITONSERVER_Error, and the backend's log lines
// (written to Triton's log with TRITONSERVER_LogMessage, so they appear with the server's own).
// Stateless; thread-safe.
#ifndef SORUN_SERVING_TRITON_TRITON_ERRORS_H_
#define SORUN_SERVING_TRITON_TRITON_ERRORS_H_

#include <string>
#include <string_view>

#include "base/status.h"
#include "serving/triton/triton_backend_api.h"

namespace sorun::triton {

// A new Triton error carrying `status`'s message (nullptr for OK; the caller or Triton owns it).
// Codes: invalid_argument -> INVALID_ARG, not_found -> NOT_FOUND, unavailable -> UNAVAILABLE,
// unimplemented -> UNSUPPORTED, already_exists -> ALREADY_EXISTS, anything else -> INTERNAL.
TRITONSERVER_Error* ToTritonError(const Status& status);

// Takes ownership of `error` (deletes it): OK for nullptr, else a Status with its message prefixed by
// `call` (the Triton function that failed).
Status FromTritonError(TRITONSERVER_Error* error, std::string_view call);

// Writes one line to Triton's log ("sorun backend: " + message).
void LogInfo(const std::string& message);
void LogWarning(const std::string& message);
void LogError(const std::string& message);

}  // namespace sorun::triton

#endif  // SORUN_SERVING_TRITON_TRITON_ERRORS_H_
