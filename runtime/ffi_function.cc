#include "runtime/ffi_function.h"

#include <cstring>
#include <vector>

#include "runtime/last_error.h"

namespace sorun {

std::string FfiErrorMessage(const char* kind, const char* const* parts, int32_t num_parts) {
  constexpr size_t kMaxBytes = 64 * 1024;  // a runaway message from generated code stays bounded
  std::string message = kind != nullptr ? kind : "Error";
  message += ": ";
  for (int32_t i = 0; parts != nullptr && i < num_parts && message.size() < kMaxBytes; ++i) {
    if (parts[i] == nullptr) continue;
    message.append(parts[i], strnlen(parts[i], kMaxBytes - message.size()));
  }
  return message;
}

std::string FfiTypeIndexName(int32_t type_index) {
  switch (type_index) {
    case kTVMFFINone: return "None";
    case kTVMFFIInt: return "int";
    case kTVMFFIBool: return "bool";
    case kTVMFFIFloat: return "float";
    case kTVMFFIOpaquePtr: return "void*";
    case kTVMFFIDataType: return "dtype";
    case kTVMFFIDevice: return "device";
    case kTVMFFIDLTensorPtr: return "DLTensor*";
    case kTVMFFIRawStr: return "str";
    case kTVMFFIByteArrayPtr: return "bytes";
    case kTVMFFISmallStr: return "small str";
    case kTVMFFISmallBytes: return "small bytes";
    default: return "object(" + std::to_string(type_index) + ")";
  }
}

Status CallPackedWithFfiArgs(const PackedFuncNode& f, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  if (num_args < 0 || (num_args > 0 && args == nullptr)) {
    return InvalidArgument("call of '" + f.name() + "' through TVMFFIFunctionCall: bad argument array");
  }
  // Device-kernel launches pass a handful of arguments: no heap allocation up to 16.
  PackedArgArrays<16> arrays(static_cast<size_t>(num_args));
  TVMValue* values = arrays.values();
  int* codes = arrays.codes();
  for (int32_t i = 0; i < num_args; ++i) {
    const TVMFFIAny& a = args[i];
    switch (a.type_index) {
      case kTVMFFINone:
        values[i].v_handle = nullptr;
        codes[i] = kTVMNullptr;
        break;
      case kTVMFFIInt:
        values[i].v_int64 = a.v_int64;
        codes[i] = kTVMArgInt;
        break;
      case kTVMFFIBool:
        values[i].v_int64 = a.v_int64 != 0;
        codes[i] = kTVMArgInt;
        break;
      case kTVMFFIFloat:
        values[i].v_float64 = a.v_float64;
        codes[i] = kTVMArgFloat;
        break;
      case kTVMFFIOpaquePtr:
        values[i].v_handle = a.v_ptr;
        codes[i] = a.v_ptr == nullptr ? kTVMNullptr : kTVMOpaqueHandle;
        break;
      case kTVMFFIDataType:
        values[i].v_type = a.v_dtype;
        codes[i] = kTVMDataType;
        break;
      case kTVMFFIDevice:
        values[i].v_device = a.v_device;
        codes[i] = kTVMDLDevice;
        break;
      case kTVMFFIDLTensorPtr:
        values[i].v_handle = a.v_ptr;
        codes[i] = kTVMDLTensorHandle;
        break;
      case kTVMFFIRawStr:
        values[i].v_str = a.v_c_str;
        codes[i] = kTVMStr;
        break;
      default:
        return InvalidArgument("call of '" + f.name() + "' through TVMFFIFunctionCall: argument " + std::to_string(i) +
                               " is a " + FfiTypeIndexName(a.type_index) +
                               " (sorun passes None, int, bool, float, void*, dtype, device, DLTensor* and str)");
    }
  }
  Value ret;
  SORUN_RETURN_IF_ERROR(f.Call(PackedArgs(values, codes, num_args), &ret));
  if (result == nullptr) return Status::Ok();
  *result = FfiNone();
  switch (ret.type_code()) {
    case kTVMNullptr: return Status::Ok();
    case kTVMArgInt: *result = FfiInt(ret.raw().v_int64); return Status::Ok();
    case kTVMArgBool:
      *result = FfiInt(ret.raw().v_int64 != 0);
      result->type_index = kTVMFFIBool;
      return Status::Ok();
    case kTVMArgFloat: *result = FfiFloat(ret.raw().v_float64); return Status::Ok();
    default:
      return InvalidArgument("call of '" + f.name() + "' through TVMFFIFunctionCall returned a " +
                             TypeCodeName(ret.type_code()) + ", which cannot cross the tvm-ffi ABI here");
  }
}

Status FfiKernel::Call(const TVMFFIAny* args, int32_t num_args) const {
  TVMFFIAny result = FfiNone();
  int rc = fn_(nullptr, args, num_args, &result);
  if (rc != 0) return KernelError(name_, rc);
  return Status::Ok();
}

}  // namespace sorun
