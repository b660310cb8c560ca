#include "runtime/tensor_io.h"

#include <cstdio>
#include <cstring>

#include "runtime/data_type.h"
#include "runtime/device_api.h"

namespace sorun {
namespace {

constexpr int kMaxNDim = 64;

std::string PadName(size_t index) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%s%06zu", kAlignmentPadPrefix, index % 1000000);
  return buf;
}

Status CheckWritable(const DLTensor& t) {
  if (t.device.device_type != kDLCPU) {
    return InvalidArgument("only CPU tensors can be serialized, got " + DescribeDLTensor(t));
  }
  if (!IsCompact(t)) return InvalidArgument("only compact tensors can be serialized");
  if (t.dtype.lanes != 1) {
    return InvalidArgument("vector dtype " + DTypeToString(t.dtype) +
                           " cannot be serialized: TVM's NDArray format under-sizes vector tensors");
  }
  return Status::Ok();
}

}  // namespace

bool IsAlignmentPadName(std::string_view name) {
  return name.substr(0, sizeof(kAlignmentPadPrefix) - 1) == kAlignmentPadPrefix;
}

bool IsAlignmentPad(std::string_view name, const NDArrayHeader& h) {
  constexpr size_t kPrefix = sizeof(kAlignmentPadPrefix) - 1;
  if (name.size() != kPrefix + 6 || !IsAlignmentPadName(name)) return false;
  for (char c : name.substr(kPrefix)) {
    if (c < '0' || c > '9') return false;
  }
  return h.dtype == UInt8() && h.shape.size() == 1 && h.shape[0] < static_cast<int64_t>(kAllocAlignment);
}

Status ReadNDArrayHeader(BinaryReader& reader, NDArrayHeader* h) {
  uint64_t start = reader.offset();
  uint64_t magic = 0, reserved = 0;
  SORUN_RETURN_IF_ERROR(reader.ReadU64(&magic));
  if (magic != kNDArrayMagic) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "bad NDArray magic 0x%016llx", static_cast<unsigned long long>(magic));
    return reader.ErrorAt(start, buf);
  }
  SORUN_RETURN_IF_ERROR(reader.ReadU64(&reserved));
  DLDevice device;
  SORUN_RETURN_IF_ERROR(reader.ReadDevice(&device));
  if (device.device_type != kDLCPU) {
    return reader.ErrorAt(start + 16,
                          "NDArray device is " + DeviceToString(device) + "; serialized arrays must be on cpu");
  }
  int32_t ndim = 0;
  SORUN_RETURN_IF_ERROR(reader.ReadI32(&ndim));
  if (ndim < 0 || ndim > kMaxNDim) {
    return reader.ErrorAt(start + 24, "NDArray ndim " + std::to_string(ndim) + " out of range [0, 64]");
  }
  uint64_t dtype_at = reader.offset();
  SORUN_RETURN_IF_ERROR(reader.ReadDataType(&h->dtype));
  if (h->dtype.lanes != 1) {
    return reader.ErrorAt(dtype_at, "vector dtype " + DTypeToString(h->dtype) + " is not supported in NDArrays");
  }
  if (h->dtype.bits == 0 || !(h->dtype.code <= kDLBfloat || h->dtype.code == 6 || h->dtype.code == 7)) {
    return reader.ErrorAt(dtype_at, "NDArray dtype " + DTypeToString(h->dtype) + " is not supported");
  }
  h->shape.assign(static_cast<size_t>(ndim), 0);
  uint64_t shape_at = reader.offset();
  for (auto& d : h->shape) SORUN_RETURN_IF_ERROR(reader.ReadI64(&d));
  auto expected = ShapeByteSize(h->shape.data(), ndim, h->dtype);
  if (!expected.ok()) return reader.ErrorAt(shape_at, expected.status().message());
  uint64_t size_at = reader.offset();
  int64_t data_bytes = 0;
  SORUN_RETURN_IF_ERROR(reader.ReadI64(&data_bytes));
  if (data_bytes < 0 || static_cast<uint64_t>(data_bytes) != *expected) {
    return reader.ErrorAt(size_at, "NDArray data size " + std::to_string(data_bytes) + " does not match " +
                                       DTypeToString(h->dtype) + ShapeToString(h->shape.data(), ndim) + " (" +
                                       std::to_string(*expected) + " bytes)");
  }
  h->data_offset = reader.offset();
  h->data_bytes = static_cast<uint64_t>(data_bytes);
  return reader.ReadBytes(static_cast<size_t>(data_bytes), &h->data, "NDArray data");
}

namespace {

// The tensor of a header just read by ReadNDArrayHeader.
StatusOr<Tensor> TensorFromHeader(const BinaryReader& reader, const NDArrayHeader& h, bool allow_zero_copy) {
  if (allow_zero_copy && reader.owner() && reinterpret_cast<uintptr_t>(h.data) % kAllocAlignment == 0) {
    SORUN_ASSIGN_OR_RETURN(Tensor t, Tensor::Wrap(const_cast<uint8_t*>(h.data), h.data_bytes, h.shape, h.dtype,
                                                  CpuDevice(), reader.owner()));
    t.node()->read_only = true;
    return t;
  }
  SORUN_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(h.shape, h.dtype, CpuDevice()));
  if (h.data_bytes) std::memcpy(t.data(), h.data, static_cast<size_t>(h.data_bytes));
  return t;
}

}  // namespace

StatusOr<Tensor> ReadNDArray(BinaryReader& reader, bool allow_zero_copy) {
  NDArrayHeader h;
  SORUN_RETURN_IF_ERROR(ReadNDArrayHeader(reader, &h));
  return TensorFromHeader(reader, h, allow_zero_copy);
}

Status WriteNDArray(const DLTensor& t, BinaryWriter* writer) {
  SORUN_RETURN_IF_ERROR(CheckWritable(t));
  SORUN_ASSIGN_OR_RETURN(uint64_t nbytes, ShapeByteSize(t.shape, t.ndim, t.dtype));
  writer->WriteU64(kNDArrayMagic);
  writer->WriteU64(0);
  writer->WriteDevice(CpuDevice());
  writer->WriteI32(t.ndim);
  writer->WriteDataType(t.dtype);
  for (int i = 0; i < t.ndim; ++i) writer->WriteI64(t.shape[i]);
  writer->WriteI64(static_cast<int64_t>(nbytes));
  writer->WriteBytes(static_cast<const char*>(t.data) + t.byte_offset, static_cast<size_t>(nbytes));
  return Status::Ok();
}

Status WriteNamedTensorSection(const NamedTensors& params, BinaryWriter* writer, bool align_data, bool leading_count) {
  for (const auto& kv : params) {
    if (!kv.second.defined()) return InvalidArgument("param '" + kv.first + "' is undefined");
    SORUN_RETURN_IF_ERROR_CTX(CheckWritable(*kv.second.dl()), "param '" + kv.first + "'");
    // The one rule readers apply (IsAlignmentPad): a tensor that would read back as a pad would be
    // dropped, so it cannot be written; any other name, even with the pad prefix, round-trips.
    NDArrayHeader h;
    h.dtype = kv.second.dtype();
    h.shape = kv.second.shape();
    if (IsAlignmentPad(kv.first, h)) {
      return InvalidArgument("param '" + kv.first + "' is indistinguishable from an alignment pad (" +
                             std::string(kAlignmentPadPrefix) +
                             "NNNNNN, 1-D uint8 under 64 bytes) and would be dropped when read: rename it");
    }
  }
  // Entry list: with alignment, every real tensor is preceded by one pad entry.
  std::vector<std::string> names;
  for (size_t i = 0; i < params.size(); ++i) {
    if (align_data) names.push_back(PadName(i));
    names.push_back(params[i].first);
  }
  if (leading_count) writer->WriteU64(names.size());
  writer->WriteStringVector(names);
  if (!leading_count) writer->WriteU64(names.size());
  for (const auto& kv : params) {
    const DLTensor& t = *kv.second.dl();
    if (align_data) {
      // pad header (1-D uint8) + k bytes + tensor header must end on a 64-byte boundary.
      uint64_t after = writer->AbsolutePosition() + NDArrayHeaderBytes(1) + NDArrayHeaderBytes(t.ndim);
      uint64_t k = (kAllocAlignment - after % kAllocAlignment) % kAllocAlignment;
      std::vector<uint8_t> zeros(static_cast<size_t>(k), 0);
      int64_t pad_shape[1] = {static_cast<int64_t>(k)};
      DLTensor pad;
      pad.data = zeros.data();
      pad.device = CpuDevice();
      pad.ndim = 1;
      pad.dtype = UInt8();
      pad.shape = pad_shape;
      pad.strides = nullptr;
      pad.byte_offset = 0;
      SORUN_RETURN_IF_ERROR(WriteNDArray(pad, writer));
    }
    SORUN_RETURN_IF_ERROR_CTX(WriteNDArray(t, writer), "param '" + kv.first + "'");
  }
  return Status::Ok();
}

namespace {

// `s`, an error of a tensor read by `reader`, with the tensor named after its position:
// "<section> byte 96: param 'w': bad NDArray magic ...". Errors not of the reader are annotated.
Status InParam(const BinaryReader& reader, Status s, const std::string& name) {
  const std::string context = "param '" + name + "'";
  const std::string& message = s.message();
  const std::string head = reader.section() + " byte ";
  const size_t colon = message.rfind(head, 0) == 0 ? message.find(": ", head.size()) : std::string::npos;
  if (colon == std::string::npos) return std::move(s).Annotate(context);
  return Status(s.code(), message.substr(0, colon + 2) + context + ": " + message.substr(colon + 2));
}

}  // namespace

Status RecordParamName(const BinaryReader& reader, const std::string& name, uint64_t offset,
                       std::map<std::string, uint64_t>* first_offsets) {
  auto [it, inserted] = first_offsets->emplace(name, offset);
  if (inserted) return Status::Ok();
  return reader.ErrorAt(offset,
                        "param '" + name + "' is given twice (first at byte " + std::to_string(it->second) + ")");
}

StatusOr<NamedTensors> ReadParamsDict(BinaryReader& reader, bool allow_zero_copy, std::vector<uint64_t>* offsets) {
  uint64_t start = reader.offset();
  uint64_t magic = 0, reserved = 0;
  SORUN_RETURN_IF_ERROR(reader.ReadU64(&magic));
  if (magic != kNDArrayListMagic) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "bad params magic 0x%016llx (expected 0xf7e58d4f05049cb7)",
                  static_cast<unsigned long long>(magic));
    return reader.ErrorAt(start, buf);
  }
  SORUN_RETURN_IF_ERROR(reader.ReadU64(&reserved));
  std::vector<std::string> names;
  SORUN_RETURN_IF_ERROR(reader.ReadStringVector(&names, "param names"));
  uint64_t count_at = reader.offset();
  uint64_t count = 0;
  SORUN_RETURN_IF_ERROR(reader.ReadU64(&count));
  if (count != names.size()) {
    return reader.ErrorAt(count_at, "params count " + std::to_string(count) + " does not match " +
                                        std::to_string(names.size()) + " names");
  }
  NamedTensors out;
  std::map<std::string, uint64_t> first_offsets;
  if (offsets != nullptr) offsets->clear();
  for (size_t i = 0; i < names.size(); ++i) {
    const uint64_t at = reader.offset();
    NDArrayHeader h;
    Status s = ReadNDArrayHeader(reader, &h);
    if (!s.ok()) return InParam(reader, std::move(s), names[i]);
    if (IsAlignmentPad(names[i], h)) continue;
    SORUN_RETURN_IF_ERROR(RecordParamName(reader, names[i], at, &first_offsets));
    auto t = TensorFromHeader(reader, h, allow_zero_copy);
    if (!t.ok()) return InParam(reader, std::move(t).status(), names[i]);
    out.emplace_back(names[i], std::move(t).value());
    if (offsets != nullptr) offsets->push_back(at);
  }
  return out;
}

Status WriteParamsDict(const NamedTensors& params, BinaryWriter* writer, bool align_data) {
  writer->WriteU64(kNDArrayListMagic);
  writer->WriteU64(0);
  return WriteNamedTensorSection(params, writer, align_data, /*leading_count=*/false);
}

}  // namespace sorun
