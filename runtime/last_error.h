// The per-thread "last error" of the C ABI (TVMAPISetLastError / TVMGetLastError) and conversions
// between it and Status. Kernels report failure by setting it and returning -1; the runtime turns
// that into an Aborted Status carrying the kernel's message, and turns a failed Status into -1 + the
// message at every C boundary.
#ifndef SORUN_RUNTIME_LAST_ERROR_H_
#define SORUN_RUNTIME_LAST_ERROR_H_

#include <string>
#include <string_view>

#include "base/status.h"

namespace sorun {

// Stores `message` as the calling thread's last error.
void SetLastError(std::string_view message);
// The calling thread's last error ("" if none).
const std::string& GetLastErrorMessage();
void ClearLastError();

// The Status for a compiled function `fn_name` that returned `rc` != 0: Aborted with the last error
// the kernel set (or a note that it set none). Clears the last error.
Status KernelError(std::string_view fn_name, int rc);
// Sets the last error from `status` and returns -1 (for C entry points).
int StatusToReturnCode(const Status& status);

}  // namespace sorun

#endif  // SORUN_RUNTIME_LAST_ERROR_H_
