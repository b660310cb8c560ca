// OpenCL error codes as sorun Status values: the error's name (CL_OUT_OF_RESOURCES), the call that
// failed (clEnqueueNDRangeKernel) and the caller's context ("kernel 'vadd'").
//
// Internal to //backends/opencl. Pure functions; thread-safe.
#ifndef SORUN_BACKENDS_OPENCL_OPENCL_STATUS_H_
#define SORUN_BACKENDS_OPENCL_OPENCL_STATUS_H_

#include <CL/cl.h>

#include <string_view>

#include "base/status.h"

namespace sorun {
namespace opencl {

// "CL_OUT_OF_RESOURCES", or "CL_UNKNOWN_ERROR" for codes the headers do not name.
const char* ClErrorName(cl_int err);

// OK for CL_SUCCESS; else an error "<context>: <call> failed: CL_NAME (code)" (no "<context>: " when
// context is empty). Allocation failures map to ResourceExhausted, missing devices/compilers to
// Unavailable, build failures and CL_INVALID_* to
// InvalidArgument, the rest to Internal.
Status ClStatus(cl_int err, std::string_view call, std::string_view context = {});

}  // namespace opencl
}  // namespace sorun

#endif  // SORUN_BACKENDS_OPENCL_OPENCL_STATUS_H_
