#include "packer/relax_executable_writer.h"

#include <string>

#include "runtime/data_type.h"
#include "runtime/tensor_io.h"

namespace sorun {
namespace relax {
namespace {

void WriteFunction(const VmFunction& f, BinaryWriter* w) {
  w->WriteI32(static_cast<int32_t>(f.kind));
  w->WriteString(f.name);
  w->WriteI64(f.start_instr);
  w->WriteI64(f.end_instr);
  w->WriteI64(f.num_args);
  w->WriteI64(f.register_file_size);
  w->WriteStringVector(f.param_names);
}

}  // namespace

Status WriteVmConstant(const VmConstant& c, ConstantTagDialect dialect, BinaryWriter* w) {
  w->WriteI32(VmConstantTag(c.kind, dialect));
  switch (c.kind) {
    case VmConstantKind::kTensor: {
      // The legacy NDArray record, through the one NDArray writer (runtime/tensor_io.h).
      std::vector<int64_t> shape = c.shape;
      DLTensor t{};
      t.data = const_cast<uint8_t*>(c.data);
      t.device = DLDevice{kDLCPU, 0};
      t.ndim = static_cast<int32_t>(shape.size());
      t.dtype = c.dtype;
      t.shape = shape.data();
      // WriteNDArray reads as many bytes as dtype x shape says: check that against what the data holds.
      SORUN_ASSIGN_OR_RETURN(uint64_t nbytes, ShapeByteSize(t.shape, t.ndim, t.dtype));
      if (nbytes != c.data_bytes || (c.data == nullptr && nbytes != 0)) {
        return InvalidArgument("tensor constant holds " + std::to_string(c.data == nullptr ? 0 : c.data_bytes) +
                               " data bytes but " + DTypeToString(c.dtype) + ShapeToString(t.shape, t.ndim) +
                               " needs " + std::to_string(nbytes));
      }
      static const uint8_t kNoData = 0;
      if (t.data == nullptr) t.data = const_cast<uint8_t*>(&kNoData);
      return WriteNDArray(t, w);
    }
    case VmConstantKind::kDataType: w->WriteDataType(c.dtype); return Status::Ok();
    case VmConstantKind::kShape:
      w->WriteU64(c.shape.size());
      for (int64_t d : c.shape) w->WriteI64(d);
      return Status::Ok();
    case VmConstantKind::kString: w->WriteString(c.str); return Status::Ok();
    case VmConstantKind::kInt: w->WriteI64(c.int_value); return Status::Ok();
    case VmConstantKind::kFloat: w->WriteF64(c.float_value); return Status::Ok();
  }
  return InvalidArgument("unknown constant kind " + std::to_string(static_cast<int>(c.kind)));
}

namespace {

void WriteI64Vector(const std::vector<int64_t>& v, BinaryWriter* w) {
  w->WriteU64(v.size());
  for (int64_t x : v) w->WriteI64(x);
}

}  // namespace

uint64_t TensorConstantDataPosition(uint64_t record_position, size_t ndim) {
  return record_position + 4 + NDArrayHeaderBytes(static_cast<int>(ndim));
}

Status WriteVmExecutable(const VmExecutable& exec, ConstantTagDialect dialect, BinaryWriter* w) {
  if (exec.magic != kVmMagicV1 && exec.magic != kVmMagicV2) {
    return InvalidArgument("VM executable magic is neither V1 nor V2");
  }
  if (!exec.has_scope_section() && !exec.scopes.empty()) {
    return InvalidArgument("a V1 executable has no scope section but " + std::to_string(exec.scopes.size()) +
                           " memory scopes were given");
  }
  w->WriteU64(exec.magic);
  w->WriteString(exec.version);
  w->WriteU64(exec.functions.size());
  for (const VmFunction& f : exec.functions) WriteFunction(f, w);
  if (exec.has_scope_section()) {
    w->WriteU64(exec.scopes.size());
    for (const VmConstantScope& s : exec.scopes) {
      w->WriteI64(s.const_index);
      w->WriteString(s.scope);
    }
  }
  w->WriteU64(exec.constants.size());
  for (size_t i = 0; i < exec.constants.size(); ++i) {
    SORUN_RETURN_IF_ERROR_CTX(WriteVmConstant(exec.constants[i], dialect, w), "constant " + std::to_string(i));
  }
  WriteI64Vector(exec.instr_offset, w);
  WriteI64Vector(exec.instr_data, w);
  return Status::Ok();
}

}  // namespace relax
}  // namespace sorun
