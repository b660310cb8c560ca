#include "runtime/data_type.h"

#include <cstdlib>
#include <limits>

namespace sorun {
namespace {

// Parses a decimal integer in [1, max]; false on anything else.
bool ParseSmallInt(std::string_view s, unsigned max, unsigned* out) {
  if (s.empty() || s.size() > 5) return false;
  unsigned v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v == 0 || v > max) return false;
  *out = v;
  return true;
}

}  // namespace

StatusOr<DLDataType> ParseDType(std::string_view text) {
  auto bad = [&](const char* why) {
    return InvalidArgument("unknown dtype '" + std::string(text) + "' (" + why + ")");
  };
  if (text.empty() || text == "void") return MakeDType(kDTypeHandle, 0, 0);
  if (text == "bool") return Bool();
  if (text == "handle") return MakeDType(kDTypeHandle, 64);

  std::string_view body = text;
  unsigned lanes = 1;
  size_t x = body.find('x');
  if (x != std::string_view::npos) {
    if (!ParseSmallInt(body.substr(x + 1), 65535, &lanes)) return bad("bad lane count");
    body = body.substr(0, x);
  }
  struct Prefix {
    const char* name;
    uint8_t code;
  };
  static const Prefix kPrefixes[] = {
      {"e4m3_float", kDTypeE4M3Float},
      {"e5m2_float", kDTypeE5M2Float},
      {"bfloat", kDLBfloat},
      {"float", kDLFloat},
      {"uint", kDLUInt},
      {"int", kDLInt},
  };
  for (const Prefix& p : kPrefixes) {
    std::string_view name(p.name);
    if (body.substr(0, name.size()) != name) continue;
    unsigned bits = 0;
    if (!ParseSmallInt(body.substr(name.size()), 255, &bits)) return bad("bad bit width");
    if (p.code == kDLFloat && bits != 16 && bits != 32 && bits != 64) {
      return bad("float width must be 16, 32 or 64");
    }
    if (p.code == kDLBfloat && bits != 16) return bad("bfloat width must be 16");
    if ((p.code == kDTypeE4M3Float || p.code == kDTypeE5M2Float) && bits != 8) {
      return bad("float8 width must be 8");
    }
    return MakeDType(p.code, static_cast<uint8_t>(bits), static_cast<uint16_t>(lanes));
  }
  return bad("expected int/uint/float/bfloat/bool/handle");
}

std::string DTypeToString(DLDataType t) {
  if (t.code == kDTypeHandle && t.bits == 0 && t.lanes == 0) return "void";
  if (t.code == kDLUInt && t.bits == 1 && t.lanes == 1) return "bool";
  std::string s;
  switch (t.code) {
    case kDLInt: s = "int"; break;
    case kDLUInt: s = "uint"; break;
    case kDLFloat: s = "float"; break;
    case kDLBfloat: s = "bfloat"; break;
    case kDTypeHandle:
      if (t.bits == 64 && t.lanes == 1) return "handle";
      s = "handle";
      break;
    case kDTypeE4M3Float: s = "e4m3_float"; break;
    case kDTypeE5M2Float: s = "e5m2_float"; break;
    default: s = "code" + std::to_string(t.code) + "_"; break;
  }
  s += std::to_string(t.bits);
  if (t.lanes != 1) s += "x" + std::to_string(t.lanes);
  return s;
}

std::string DTypeToString(DLDataType t, DTypeCodes codes) {
  if (codes == DTypeCodes::kTvmLegacy || t.code < kDLPackBoolCode) return DTypeToString(t);
  if (t.code == kDLPackBoolCode && t.bits == 8 && t.lanes == 1) return "bool";
  // DLPack 1.x's codes 7..17, as TVM 0.27 spells them (the bit width is part of the name).
  static const char* const kNames[] = {"float8_e3m4",     "float8_e4m3",   "float8_e4m3b11fnuz", "float8_e4m3fn",
                                       "float8_e4m3fnuz", "float8_e5m2",   "float8_e5m2fnuz",    "float8_e8m0fnu",
                                       "float6_e2m3fn",   "float6_e3m2fn", "float4_e2m1fn"};
  std::string s;
  if (t.code >= 7 && t.code <= 17) {
    s = kNames[t.code - 7];
  } else {
    s = "code" + std::to_string(t.code) + "_" + std::to_string(t.bits);
  }
  if (t.lanes != 1) s += "x" + std::to_string(t.lanes);
  return s;
}

const char* DeviceTypeName(int device_type) {
  switch (device_type) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda";
    case kDLCUDAHost: return "cuda_host";
    case kDLOpenCL: return "opencl";
    case kDLVulkan: return "vulkan";
    case kDLMetal: return "metal";
    case kDLVPI: return "vpi";
    case kDLROCM: return "rocm";
    case kDLROCMHost: return "rocm_host";
    case 12: return "ext_dev";
    case 13: return "cuda_managed";
    case 14: return "oneapi";
    case 15: return "webgpu";
    case 16: return "hexagon";
    default: return "unknown_device";
  }
}

StatusOr<DLDevice> MakeDevice(int64_t device_type, int64_t device_id) {
  if (!IsDLDeviceTypeValue(device_type)) {
    return InvalidArgument("unknown device type " + std::to_string(device_type) + " (DLPack device types are 0.." +
                           std::to_string(kMaxDLDeviceTypeValue) + ")");
  }
  if (device_id < INT32_MIN || device_id > INT32_MAX) {
    return InvalidArgument("device id " + std::to_string(device_id) + " does not fit in 32 bits");
  }
  return DLDevice{static_cast<DLDeviceType>(device_type), static_cast<int32_t>(device_id)};
}

std::string DescribeDeviceType(int64_t device_type) {
  if (device_type >= INT32_MIN && device_type <= INT32_MAX) {
    std::string name = DeviceTypeName(static_cast<int>(device_type));
    if (name != "unknown_device") return name;
  }
  return "unknown device type " + std::to_string(device_type);
}

std::string DeviceToString(DLDevice device) {
  std::string name = DeviceTypeName(device.device_type);
  if (name == "unknown_device") name = "device_type_" + std::to_string(device.device_type);
  return name + ":" + std::to_string(device.device_id);
}

StatusOr<DLDevice> ParseDevice(std::string_view text) {
  std::string_view kind = text;
  int id = 0;
  size_t colon = text.find(':');
  if (colon != std::string_view::npos) {
    kind = text.substr(0, colon);
    std::string_view id_text = text.substr(colon + 1);
    unsigned v = 0;
    if (id_text == "0") {
      v = 0;
    } else if (!ParseSmallInt(id_text, 1024, &v)) {
      return InvalidArgument("bad device '" + std::string(text) + "': id must be 0..1024");
    }
    id = static_cast<int>(v);
  }
  DLDeviceType type;
  if (kind == "cpu" || kind == "llvm") {
    type = kDLCPU;
  } else if (kind == "cuda" || kind == "gpu") {
    type = kDLCUDA;
  } else if (kind == "opencl" || kind == "cl") {
    type = kDLOpenCL;
  } else {
    return InvalidArgument("bad device '" + std::string(text) + "': expected cpu, opencl or cuda, optionally with :N");
  }
  return DLDevice{type, id};
}

StatusOr<int64_t> ShapeNumElements(const int64_t* shape, int ndim) {
  if (ndim < 0) return InvalidArgument("negative ndim " + std::to_string(ndim));
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] < 0) {
      return InvalidArgument("negative dimension " + std::to_string(shape[i]) + " in shape " +
                             ShapeToString(shape, ndim));
    }
    if (shape[i] != 0 && n > std::numeric_limits<int64_t>::max() / shape[i]) {
      return InvalidArgument("shape " + ShapeToString(shape, ndim) + " has too many elements");
    }
    n *= shape[i];
  }
  return n;
}

StatusOr<uint64_t> ShapeByteSize(const int64_t* shape, int ndim, DLDataType dtype) {
  SORUN_ASSIGN_OR_RETURN(int64_t n, ShapeNumElements(shape, ndim));
  uint64_t elem = DTypeBytes(dtype);
  if (elem != 0 && static_cast<uint64_t>(n) > std::numeric_limits<uint64_t>::max() / 2 / elem) {
    return InvalidArgument("shape " + ShapeToString(shape, ndim) + " of " + DTypeToString(dtype) + " is too large");
  }
  return static_cast<uint64_t>(n) * elem;
}

std::string ShapeToString(const int64_t* shape, int ndim) {
  std::string s = "[";
  for (int i = 0; i < ndim; ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string SignatureShapeToString(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += dims[i] < 0 ? std::string("?") : std::to_string(dims[i]);
  }
  return s + "]";
}

}  // namespace sorun
