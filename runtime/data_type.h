// Helpers over DLPack's DLDataType and DLDevice: TVM's dtype strings ("float32", "int8x4", "bool"),
// element sizes, device names ("cpu", "opencl:1"). Pure functions; thread-safe.
#ifndef SORUN_RUNTIME_DATA_TYPE_H_
#define SORUN_RUNTIME_DATA_TYPE_H_

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

// Equality of the (global-namespace) DLPack structs, found by argument-dependent lookup.
inline bool operator==(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
inline bool operator!=(DLDataType a, DLDataType b) { return !(a == b); }
inline bool operator==(DLDevice a, DLDevice b) { return a.device_type == b.device_type && a.device_id == b.device_id; }
inline bool operator!=(DLDevice a, DLDevice b) { return !(a == b); }

namespace sorun {

// TVM's extra dtype codes beyond DLPack's int/uint/float/bfloat.
inline constexpr uint8_t kDTypeHandle = 3;     // "handle" (opaque pointer)
inline constexpr uint8_t kDTypeE4M3Float = 6;  // "e4m3_float8"
inline constexpr uint8_t kDTypeE5M2Float = 7;  // "e5m2_float8"

inline DLDataType MakeDType(uint8_t code, uint8_t bits, uint16_t lanes = 1) {
  DLDataType t;
  t.code = code;
  t.bits = bits;
  t.lanes = lanes;
  return t;
}
inline DLDataType Float32() { return MakeDType(kDLFloat, 32); }
inline DLDataType Int32() { return MakeDType(kDLInt, 32); }
inline DLDataType Int64() { return MakeDType(kDLInt, 64); }
inline DLDataType UInt8() { return MakeDType(kDLUInt, 8); }
inline DLDataType Bool() { return MakeDType(kDLUInt, 1); }

// How an artifact numbers the dtype codes above bfloat (4). TVM up to the tvm-ffi refactor, with its
// graph JSON, params and legacy Relax executables, uses 6 / 7 for e4m3 / e5m2 float8 and spells bool
// uint1 (sorun's API spells it so too: Bool()). tvm-ffi (TVM 0.21+) follows DLPack 1.x: 6 is bool with
// 8 bits (what TVM 0.23+ writes for bool; numpy's DLPack export too), 7..17 the float8/6/4 kinds.
enum class DTypeCodes { kTvmLegacy, kDLPack };
inline constexpr uint8_t kDLPackBoolCode = 6;
inline DLDataType DLPackBool() { return MakeDType(kDLPackBoolCode, 8); }
// True for either spelling of bool a caller may hand over: Bool() (uint1) or DLPackBool().
inline bool IsBoolDType(DLDataType t) {
  return t.lanes == 1 && ((t.code == kDLUInt && t.bits == 1) || (t.code == kDLPackBoolCode && t.bits == 8));
}
// True when a caller's tensor of dtype `given` may stand for a model's `expected`: the same dtype, or
// DLPack 1.x's bool (numpy's and torch's DLPack export) for a bool input. Both take one byte per element,
// so the bytes copy or bind as they are while the model keeps its own dtype. The one rule of both executors.
inline bool DTypeAccepts(DLDataType expected, DLDataType given) {
  return given == expected || (expected == Bool() && given == DLPackBool());
}
// `t` as sorun's API spells it: DLPack 1.x's bool (under DTypeCodes::kDLPack) becomes Bool(); any
// other dtype is returned unchanged. Both bools take one byte per element, so data copies as it is.
inline DLDataType ApiDType(DLDataType t, DTypeCodes codes) {
  return codes == DTypeCodes::kDLPack && t.code == kDLPackBoolCode && t.bits == 8 && t.lanes == 1 ? Bool() : t;
}

// Parses a TVM dtype string. Errors name the string.
StatusOr<DLDataType> ParseDType(std::string_view text);
// The TVM spelling of `t` ("float32", "uint8x4", "bool", "handle"), codes numbered as TVM up to 0.20 did.
std::string DTypeToString(DLDataType t);
// The same under `codes`: with DTypeCodes::kDLPack, 6/8 is "bool" and 7..17 are TVM 0.27's names
// ("float8_e4m3fn", "float4_e2m1fn", ...).
std::string DTypeToString(DLDataType t, DTypeCodes codes);
// Bytes per element as TVM's storage planner computes them: (bits * lanes + 7) / 8.
inline size_t DTypeBytes(DLDataType t) { return (static_cast<size_t>(t.bits) * t.lanes + 7) / 8; }

// Bytes between consecutive scalars (lanes) of compact storage, under DTypeBytes' rule: bits / 8 when
// each lane fills whole bytes (float32x4: 4); DTypeBytes(t) for a one-lane sub-byte type (bool, int4:
// one scalar per byte); 0 when several sub-byte lanes share bytes (int1x8, int4x2), which cannot be
// addressed one scalar at a time. A tensor of N bytes holds N / stride addressable scalars. Code that
// walks tensor data scalar by scalar must bound its loop this way, never by elements * lanes.
inline size_t DTypeScalarStride(DLDataType t) {
  if (t.lanes <= 1) return DTypeBytes(t);
  return t.bits % 8 == 0 ? static_cast<size_t>(t.bits / 8) : 0;
}

// "cpu", "cuda", "opencl", ... or "device_type_<n>".
const char* DeviceTypeName(int device_type);
// "cpu:0", "opencl:1".
std::string DeviceToString(DLDevice device);
// Parses "cpu", "cuda:1", "opencl:0", "gpu" (= cuda). Errors name the string.
StatusOr<DLDevice> ParseDevice(std::string_view text);
inline DLDevice CpuDevice() { return DLDevice{kDLCPU, 0}; }
// True when `device_type` can be stored in a DLDevice. DLDeviceType has no fixed underlying type and
// DLPack 0.6's largest enumerator is kDLCUDAManaged = 13, so the enum's values are 0..15 (later DLPack
// versions only add enumerators, which widens the range); converting any other integer to it is
// undefined behaviour. Integers from files and callers are checked with this before they become
// devices (TVM's extension types, AOCL = 32 and up, cannot be represented).
inline constexpr int64_t kMaxDLDeviceTypeValue = 15;
inline bool IsDLDeviceTypeValue(int64_t device_type) {
  return device_type >= 0 && device_type <= kMaxDLDeviceTypeValue;
}

// The one conversion of an integer (from a file, a caller or a C kernel) to a device: InvalidArgument
// "unknown device type 99 (DLPack device types are 0..15)" when IsDLDeviceTypeValue is false.
StatusOr<DLDevice> MakeDevice(int64_t device_type, int64_t device_id);
// DeviceTypeName, or "unknown device type <n>" for a type without a name (messages must show it).
std::string DescribeDeviceType(int64_t device_type);

// Number of elements of `shape`, or an error if a dimension is negative or the product overflows.
StatusOr<int64_t> ShapeNumElements(const int64_t* shape, int ndim);
// Compact byte size of a tensor of `shape` and `dtype` (element count * DTypeBytes), overflow-checked.
StatusOr<uint64_t> ShapeByteSize(const int64_t* shape, int ndim, DLDataType dtype);
// "[1, 3, 224, 224]".
std::string ShapeToString(const int64_t* shape, int ndim);
// A model signature's shape, where a negative dimension is one known only at run time: "[?, 8]".
std::string SignatureShapeToString(const std::vector<int64_t>& dims);

}  // namespace sorun

#endif  // SORUN_RUNTIME_DATA_TYPE_H_
