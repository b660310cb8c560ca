#include "format/binary_reader.h"

#include <cstring>
#include <utility>

namespace sorun {

BinaryReader::BinaryReader(const uint8_t* data, size_t size, std::string section, uint64_t base_offset,
                           ObjectPtr<Object> owner)
    : data_(data),
      size_(data ? size : 0),
      section_(std::move(section)),
      base_offset_(base_offset),
      owner_(std::move(owner)) {}

Status BinaryReader::ErrorAt(uint64_t absolute_offset, std::string_view message) const {
  std::string text = section_;
  text += " byte ";
  text += std::to_string(absolute_offset);
  text += ": ";
  text += message;
  return DataLoss(std::move(text));
}

Status BinaryReader::Error(std::string_view message) const { return ErrorAt(offset(), message); }

Status BinaryReader::Need(size_t n, std::string_view what) {
  if (n <= remaining()) return Status::Ok();
  std::string message = "truncated: ";
  message += what;
  message += " needs ";
  message += std::to_string(n);
  message += " bytes but only ";
  message += std::to_string(remaining());
  message += " remain";
  return Error(message);
}

template <typename T>
Status BinaryReader::ReadLe(T* out, std::string_view what) {
  SORUN_RETURN_IF_ERROR(Need(sizeof(T), what));
  // Assemble little-endian bytes explicitly: no alignment requirement, host-endian independent.
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<uint64_t>(data_[pos_ + i]) << (8 * i);
  std::memcpy(out, &v, sizeof(T));  // little-endian host: low bytes of v hold the value
  pos_ += sizeof(T);
  return Status::Ok();
}

Status BinaryReader::ReadU8(uint8_t* out) { return ReadLe(out, "u8"); }
Status BinaryReader::ReadU16(uint16_t* out) { return ReadLe(out, "u16"); }
Status BinaryReader::ReadU32(uint32_t* out) { return ReadLe(out, "u32"); }
Status BinaryReader::ReadI32(int32_t* out) { return ReadLe(out, "i32"); }
Status BinaryReader::ReadU64(uint64_t* out) { return ReadLe(out, "u64"); }
Status BinaryReader::ReadI64(int64_t* out) { return ReadLe(out, "i64"); }

Status BinaryReader::ReadF64(double* out) {
  uint64_t bits = 0;
  SORUN_RETURN_IF_ERROR(ReadLe(&bits, "f64"));
  std::memcpy(out, &bits, sizeof(bits));
  return Status::Ok();
}

Status BinaryReader::ReadDataType(DLDataType* out) {
  SORUN_RETURN_IF_ERROR(Need(4, "dtype"));
  out->code = data_[pos_];
  out->bits = data_[pos_ + 1];
  out->lanes = static_cast<uint16_t>(data_[pos_ + 2] | (data_[pos_ + 3] << 8));
  pos_ += 4;
  return Status::Ok();
}

Status BinaryReader::ReadDevice(DLDevice* out) {
  const uint64_t start = offset();
  int32_t type = 0;
  int32_t id = 0;
  SORUN_RETURN_IF_ERROR(ReadLe(&type, "device type"));
  SORUN_RETURN_IF_ERROR(ReadLe(&id, "device id"));
  // Converting an integer outside DLDeviceType's values (0..15, see IsDLDeviceTypeValue in
  // runtime/data_type.h, which this low-level library cannot depend on) to it is undefined behaviour.
  if (type < 0 || type > 15) {
    return ErrorAt(start, "device type " + std::to_string(type) + " is not a DLPack device type");
  }
  out->device_type = static_cast<DLDeviceType>(type);
  out->device_id = id;
  return Status::Ok();
}

Status BinaryReader::ReadStringView(std::string_view* out, std::string_view what) {
  uint64_t start = offset();
  uint64_t len = 0;
  SORUN_RETURN_IF_ERROR(ReadLe(&len, what));
  if (len > remaining()) {
    return ErrorAt(start, std::string(what) + " length " + std::to_string(len) + " exceeds the " +
                              std::to_string(remaining()) + " bytes left");
  }
  *out = std::string_view(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(len));
  pos_ += static_cast<size_t>(len);
  return Status::Ok();
}

Status BinaryReader::ReadString(std::string* out, std::string_view what) {
  std::string_view view;
  SORUN_RETURN_IF_ERROR(ReadStringView(&view, what));
  out->assign(view.data(), view.size());
  return Status::Ok();
}

Status BinaryReader::ReadStringVector(std::vector<std::string>* out, std::string_view what) {
  uint64_t start = offset();
  uint64_t count = 0;
  SORUN_RETURN_IF_ERROR(ReadLe(&count, what));
  // Every string takes at least its 8-byte length.
  if (count > remaining() / 8) {
    return ErrorAt(start, std::string(what) + " count " + std::to_string(count) + " is impossible with " +
                              std::to_string(remaining()) + " bytes left");
  }
  out->clear();
  out->reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    std::string s;
    SORUN_RETURN_IF_ERROR(ReadString(&s, what));
    out->push_back(std::move(s));
  }
  return Status::Ok();
}

Status BinaryReader::ReadU64Vector(std::vector<uint64_t>* out, std::string_view what) {
  uint64_t start = offset();
  uint64_t count = 0;
  SORUN_RETURN_IF_ERROR(ReadLe(&count, what));
  if (count > remaining() / 8) {
    return ErrorAt(start, std::string(what) + " count " + std::to_string(count) + " needs " +
                              (count > (UINT64_MAX / 8) ? std::string("more than 2^64") : std::to_string(count * 8)) +
                              " bytes but only " + std::to_string(remaining()) + " remain");
  }
  out->resize(static_cast<size_t>(count));
  for (auto& v : *out) SORUN_RETURN_IF_ERROR(ReadLe(&v, what));
  return Status::Ok();
}

Status BinaryReader::ReadDataTypeVector(std::vector<DLDataType>* out, std::string_view what) {
  uint64_t start = offset();
  uint64_t count = 0;
  SORUN_RETURN_IF_ERROR(ReadLe(&count, what));
  if (count > remaining() / 4) {
    return ErrorAt(start, std::string(what) + " count " + std::to_string(count) + " is impossible with " +
                              std::to_string(remaining()) + " bytes left");
  }
  out->resize(static_cast<size_t>(count));
  for (auto& v : *out) SORUN_RETURN_IF_ERROR(ReadDataType(&v));
  return Status::Ok();
}

Status BinaryReader::ReadBytes(size_t n, const uint8_t** out, std::string_view what) {
  SORUN_RETURN_IF_ERROR(Need(n, what));
  *out = data_ + pos_;
  pos_ += n;
  return Status::Ok();
}

Status BinaryReader::Skip(size_t n, std::string_view what) {
  SORUN_RETURN_IF_ERROR(Need(n, what));
  pos_ += n;
  return Status::Ok();
}

}  // namespace sorun
