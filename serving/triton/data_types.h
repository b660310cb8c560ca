// The one mapping between sorun's tensor element types (DLPack DLDataType) and Triton's
// (TRITONSERVER_DataType, spelled "FP32" on the wire and "TYPE_FP32" in config.pbtxt). Pure
// functions; thread-safe.
#ifndef SORUN_SERVING_TRITON_DATA_TYPES_H_
#define SORUN_SERVING_TRITON_DATA_TYPES_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "serving/triton/triton_backend_api.h"

namespace sorun::triton {

// Triton's type for a sorun dtype: float16/32/64, bfloat16, int8..64, uint8..64 and bool
// (uint1). Unimplemented naming the dtype for anything else (vector lanes, float8, handle): Triton
// has no such tensor type.
StatusOr<TRITONSERVER_DataType> ToTritonDataType(DLDataType dtype);

// "FP32" (the KServe v2 protocol name); "INVALID" for an out-of-range value.
const char* TritonDataTypeName(TRITONSERVER_DataType type);
// "TYPE_FP32" (the config.pbtxt / model config JSON name).
std::string ConfigDataTypeName(TRITONSERVER_DataType type);
// The inverse of ConfigDataTypeName; TRITONSERVER_TYPE_INVALID for anything else.
TRITONSERVER_DataType ParseConfigDataType(std::string_view text);

// Bytes of one element of `dtype` in a compact tensor ((bits * lanes + 7) / 8: bool is one byte,
// as in Triton).
uint64_t ElementBytes(DLDataType dtype);

// "[1, 64]".
std::string ShapeString(const std::vector<int64_t>& shape);

}  // namespace sorun::triton

#endif  // SORUN_SERVING_TRITON_DATA_TYPES_H_
