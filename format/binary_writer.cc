#include "format/binary_writer.h"

#include <cstring>

namespace sorun {
namespace {

template <typename T>
void AppendLe(std::string* out, T value) {
  uint64_t v = 0;
  std::memcpy(&v, &value, sizeof(T));
  char buf[sizeof(T)];
  for (size_t i = 0; i < sizeof(T); ++i) buf[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out->append(buf, sizeof(T));
}

}  // namespace

void BinaryWriter::WriteU8(uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
void BinaryWriter::WriteU16(uint16_t v) { AppendLe(&bytes_, v); }
void BinaryWriter::WriteU32(uint32_t v) { AppendLe(&bytes_, v); }
void BinaryWriter::WriteI32(int32_t v) { AppendLe(&bytes_, v); }
void BinaryWriter::WriteU64(uint64_t v) { AppendLe(&bytes_, v); }
void BinaryWriter::WriteI64(int64_t v) { AppendLe(&bytes_, v); }
void BinaryWriter::WriteF64(double v) { AppendLe(&bytes_, v); }

void BinaryWriter::WriteDataType(DLDataType v) {
  WriteU8(v.code);
  WriteU8(v.bits);
  WriteU16(v.lanes);
}

void BinaryWriter::WriteDevice(DLDevice v) {
  WriteI32(static_cast<int32_t>(v.device_type));
  WriteI32(v.device_id);
}

void BinaryWriter::WriteString(std::string_view s) {
  WriteU64(s.size());
  bytes_.append(s.data(), s.size());
}

void BinaryWriter::WriteStringVector(const std::vector<std::string>& v) {
  WriteU64(v.size());
  for (const auto& s : v) WriteString(s);
}

void BinaryWriter::WriteU64Vector(const std::vector<uint64_t>& v) {
  WriteU64(v.size());
  for (uint64_t x : v) WriteU64(x);
}

void BinaryWriter::WriteDataTypeVector(const std::vector<DLDataType>& v) {
  WriteU64(v.size());
  for (DLDataType t : v) WriteDataType(t);
}

void BinaryWriter::WriteBytes(const void* data, size_t n) { bytes_.append(static_cast<const char*>(data), n); }

void BinaryWriter::PatchU64(size_t position, uint64_t v) {
  for (size_t i = 0; i < 8; ++i) bytes_[position + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace sorun
