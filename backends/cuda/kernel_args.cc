#include "backends/cuda/kernel_args.h"

#include <dlpack/dlpack.h>

#include "runtime/data_type.h"
#include "runtime/packed_func.h"

namespace sorun {
namespace {

std::string Where(const std::string& kernel, int index) {
  return "kernel '" + kernel + "' argument " + std::to_string(index);
}

// An integer of `bits` bits accepts values readable as either its signed or its unsigned form
// (uint32 0xffffffff may arrive as 4294967295 or as -1).
bool FitsBits(int64_t v, int bits) {
  if (bits >= 64) return true;
  const int64_t min_signed = -(int64_t{1} << (bits - 1));
  const int64_t max_unsigned = (int64_t{1} << bits) - 1;
  return v >= min_signed && v <= max_unsigned;
}

bool IsCudaVisible(DLDevice device) {
  return device.device_type == kDLCUDA || device.device_type == kDLCUDAHost || device.device_type == kDLCUDAManaged;
}

Status MarshalInt(const std::string& kernel, int index, DLDataType type, const TVMValue& value, int code,
                  KernelArgSlot* slot) {
  if (code != kTVMArgInt && code != kTVMArgBool) {
    return InvalidArgument(Where(kernel, index) + ": expected int for " + DTypeToString(type) + ", got " +
                           TypeCodeName(code));
  }
  int64_t v = value.v_int64;
  if (!FitsBits(v, type.bits)) {
    return InvalidArgument(Where(kernel, index) + ": value " + std::to_string(v) + " does not fit " +
                           DTypeToString(type));
  }
  // Two's-complement truncation: the low `bits` bits, identical for the signed and unsigned forms.
  switch (type.bits) {
    case 8: slot->u8 = static_cast<uint8_t>(static_cast<uint64_t>(v)); break;
    case 16: slot->u16 = static_cast<uint16_t>(static_cast<uint64_t>(v)); break;
    case 32: slot->u32 = static_cast<uint32_t>(static_cast<uint64_t>(v)); break;
    default: slot->i64 = v; break;
  }
  return Status::Ok();
}

Status MarshalFloat(const std::string& kernel, int index, DLDataType type, const TVMValue& value, int code,
                    KernelArgSlot* slot) {
  double v = 0;
  if (code == kTVMArgFloat) {
    v = value.v_float64;
  } else if (code == kTVMArgInt) {
    v = static_cast<double>(value.v_int64);
  } else {
    return InvalidArgument(Where(kernel, index) + ": expected float for " + DTypeToString(type) + ", got " +
                           TypeCodeName(code));
  }
  if (type.bits == 32) {
    slot->f32 = static_cast<float>(v);
  } else {
    slot->f64 = v;
  }
  return Status::Ok();
}

Status MarshalHandle(const std::string& kernel, int index, const TVMValue& value, int code, KernelArgSlot* slot) {
  switch (code) {
    case kTVMOpaqueHandle: slot->u64 = reinterpret_cast<uintptr_t>(value.v_handle); return Status::Ok();
    case kTVMNullptr: slot->u64 = 0; return Status::Ok();
    case kTVMDLTensorHandle:
    case kTVMNDArrayHandle: {
      const DLTensor* t = static_cast<const DLTensor*>(value.v_handle);
      if (t == nullptr) {
        slot->u64 = 0;
        return Status::Ok();
      }
      if (!IsCudaVisible(t->device)) {
        return InvalidArgument(Where(kernel, index) + ": tensor " + DescribeDLTensor(*t) +
                               " is not in CUDA device memory");
      }
      slot->u64 = reinterpret_cast<uintptr_t>(t->data) + t->byte_offset;
      return Status::Ok();
    }
    default:
      return InvalidArgument(Where(kernel, index) + ": expected a device pointer (handle), got " + TypeCodeName(code));
  }
}

}  // namespace

Status MarshalKernelArgs(const std::string& kernel, const FunctionInfo& info, const TVMValue* values, const int* codes,
                         int num_args, KernelArgs* out) {
  const size_t num_params = info.arg_types.size();
  const size_t num_launch = info.launch_param_tags.size();
  if (num_args < 0 || static_cast<size_t>(num_args) != num_params + num_launch) {
    return InvalidArgument("kernel '" + kernel + "' expects " + std::to_string(num_params + num_launch) +
                           " packed arguments (" + std::to_string(num_params) + " parameters + " +
                           std::to_string(num_launch) + " launch values), got " + std::to_string(num_args));
  }
  if (num_args > 0 && (values == nullptr || codes == nullptr)) {
    return InvalidArgument("kernel '" + kernel + "': null argument arrays");
  }
  out->slots.resize(num_params);
  out->pointers.resize(num_params);
  for (size_t i = 0; i < num_params; ++i) {
    const int index = static_cast<int>(i);
    const DLDataType type = info.arg_types[i];
    KernelArgSlot* slot = &out->slots[i];
    slot->u64 = 0;
    out->pointers[i] = slot;
    auto bytes = KernelArgBytes(type);
    if (!bytes.ok()) return InvalidArgument(Where(kernel, index) + ": " + bytes.status().message());
    Status status;
    switch (type.code) {
      case kDLInt:
      case kDLUInt: status = MarshalInt(kernel, index, type, values[i], codes[i], slot); break;
      case kDLFloat: status = MarshalFloat(kernel, index, type, values[i], codes[i], slot); break;
      default:  // kDTypeHandle (the only other type KernelArgBytes accepts)
        status = MarshalHandle(kernel, index, values[i], codes[i], slot);
        break;
    }
    SORUN_RETURN_IF_ERROR(status);
  }
  return Status::Ok();
}

}  // namespace sorun
