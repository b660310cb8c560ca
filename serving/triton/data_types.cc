#include "serving/triton/data_types.h"

#include <iterator>

#include "api/sorun.h"

namespace sorun::triton {
namespace {

struct TypeName {
  TRITONSERVER_DataType type;
  const char* name;
};

constexpr TypeName kTypeNames[] = {
    {TRITONSERVER_TYPE_BOOL, "BOOL"},     {TRITONSERVER_TYPE_UINT8, "UINT8"},   {TRITONSERVER_TYPE_UINT16, "UINT16"},
    {TRITONSERVER_TYPE_UINT32, "UINT32"}, {TRITONSERVER_TYPE_UINT64, "UINT64"}, {TRITONSERVER_TYPE_INT8, "INT8"},
    {TRITONSERVER_TYPE_INT16, "INT16"},   {TRITONSERVER_TYPE_INT32, "INT32"},   {TRITONSERVER_TYPE_INT64, "INT64"},
    {TRITONSERVER_TYPE_FP16, "FP16"},     {TRITONSERVER_TYPE_FP32, "FP32"},     {TRITONSERVER_TYPE_FP64, "FP64"},
    {TRITONSERVER_TYPE_BYTES, "BYTES"},   {TRITONSERVER_TYPE_BF16, "BF16"},
};

}  // namespace

StatusOr<TRITONSERVER_DataType> ToTritonDataType(DLDataType dtype) {
  if (dtype.lanes == 1) {
    switch (dtype.code) {
      case kDLFloat:
        if (dtype.bits == 16) return TRITONSERVER_TYPE_FP16;
        if (dtype.bits == 32) return TRITONSERVER_TYPE_FP32;
        if (dtype.bits == 64) return TRITONSERVER_TYPE_FP64;
        break;
      case kDLBfloat:
        if (dtype.bits == 16) return TRITONSERVER_TYPE_BF16;
        break;
      case kDLInt:
        if (dtype.bits == 8) return TRITONSERVER_TYPE_INT8;
        if (dtype.bits == 16) return TRITONSERVER_TYPE_INT16;
        if (dtype.bits == 32) return TRITONSERVER_TYPE_INT32;
        if (dtype.bits == 64) return TRITONSERVER_TYPE_INT64;
        break;
      case kDLUInt:
        if (dtype.bits == 1) return TRITONSERVER_TYPE_BOOL;
        if (dtype.bits == 8) return TRITONSERVER_TYPE_UINT8;
        if (dtype.bits == 16) return TRITONSERVER_TYPE_UINT16;
        if (dtype.bits == 32) return TRITONSERVER_TYPE_UINT32;
        if (dtype.bits == 64) return TRITONSERVER_TYPE_UINT64;
        break;
      default: break;
    }
  }
  return Unimplemented("dtype " + DataTypeName(dtype) +
                       " has no Triton tensor type (supported: bool, int8-64, uint8-64, float16/32/64, bfloat16)");
}

const char* TritonDataTypeName(TRITONSERVER_DataType type) {
  for (const TypeName& entry : kTypeNames) {
    if (entry.type == type) return entry.name;
  }
  return "INVALID";
}

std::string ConfigDataTypeName(TRITONSERVER_DataType type) {
  if (type == TRITONSERVER_TYPE_BYTES) return "TYPE_STRING";  // config.pbtxt's spelling of BYTES
  return std::string("TYPE_") + TritonDataTypeName(type);
}

TRITONSERVER_DataType ParseConfigDataType(std::string_view text) {
  if (text == "TYPE_STRING") return TRITONSERVER_TYPE_BYTES;
  for (const TypeName& entry : kTypeNames) {
    if (text == ConfigDataTypeName(entry.type)) return entry.type;
  }
  return TRITONSERVER_TYPE_INVALID;
}

uint64_t ElementBytes(DLDataType dtype) { return (static_cast<uint64_t>(dtype.bits) * dtype.lanes + 7) / 8; }

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

}  // namespace sorun::triton
