#include "serving/triton/triton_errors.h"

namespace sorun::triton {
namespace {

void Log(TRITONSERVER_LogLevel level, const std::string& message) {
  if (!TRITONSERVER_LogIsEnabled(level)) return;
  const std::string line = "sorun backend: " + message;
  TRITONSERVER_Error* error = TRITONSERVER_LogMessage(level, __FILE__, __LINE__, line.c_str());
  if (error != nullptr) TRITONSERVER_ErrorDelete(error);
}

}  // namespace

TRITONSERVER_Error* ToTritonError(const Status& status) {
  if (status.ok()) return nullptr;
  TRITONSERVER_Error_Code code = TRITONSERVER_ERROR_INTERNAL;
  switch (status.code()) {
    case StatusCode::kInvalidArgument: code = TRITONSERVER_ERROR_INVALID_ARG; break;
    case StatusCode::kNotFound: code = TRITONSERVER_ERROR_NOT_FOUND; break;
    case StatusCode::kUnavailable: code = TRITONSERVER_ERROR_UNAVAILABLE; break;
    case StatusCode::kUnimplemented: code = TRITONSERVER_ERROR_UNSUPPORTED; break;
    case StatusCode::kAlreadyExists: code = TRITONSERVER_ERROR_ALREADY_EXISTS; break;
    default: break;
  }
  return TRITONSERVER_ErrorNew(code, status.message().c_str());
}

Status FromTritonError(TRITONSERVER_Error* error, std::string_view call) {
  if (error == nullptr) return Status::Ok();
  const TRITONSERVER_Error_Code triton_code = TRITONSERVER_ErrorCode(error);
  const char* text = TRITONSERVER_ErrorMessage(error);
  std::string message = std::string(call) + ": " + (text != nullptr ? text : "(no message)");
  TRITONSERVER_ErrorDelete(error);
  switch (triton_code) {
    case TRITONSERVER_ERROR_INVALID_ARG: return InvalidArgument(std::move(message));
    case TRITONSERVER_ERROR_NOT_FOUND: return NotFound(std::move(message));
    case TRITONSERVER_ERROR_UNAVAILABLE: return Unavailable(std::move(message));
    case TRITONSERVER_ERROR_UNSUPPORTED: return Unimplemented(std::move(message));
    default: return Internal(std::move(message));
  }
}

void LogInfo(const std::string& message) { Log(TRITONSERVER_LOG_INFO, message); }
void LogWarning(const std::string& message) { Log(TRITONSERVER_LOG_WARN, message); }
void LogError(const std::string& message) { Log(TRITONSERVER_LOG_ERROR, message); }

}  // namespace sorun::triton
