#include "runtime/last_error.h"

namespace sorun {
namespace {

std::string& LastError() {
  thread_local std::string last_error;
  return last_error;
}

}  // namespace

void SetLastError(std::string_view message) { LastError().assign(message.data(), message.size()); }
const std::string& GetLastErrorMessage() { return LastError(); }
void ClearLastError() { LastError().clear(); }

Status KernelError(std::string_view fn_name, int rc) {
  std::string message = "function '" + std::string(fn_name) + "' failed (returned " + std::to_string(rc) + ")";
  std::string& last = LastError();
  if (!last.empty()) {
    message += ": " + last;
    last.clear();
  } else {
    message += " without setting an error message";
  }
  return Aborted(std::move(message));
}

int StatusToReturnCode(const Status& status) {
  if (status.ok()) return 0;
  SetLastError(status.message());
  return -1;
}

}  // namespace sorun
