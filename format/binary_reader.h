// BinaryReader: the one bounds-checked parser of little-endian bytes in sorun (dmlc::Stream encoding,
// docs/spec/FORMAT.md section 2.1).
//
// A reader borrows a byte range; it never reads past it, never allocates more than the remaining input
// could justify (a vector count is checked against the bytes left before reserving), and reports
// every failure as DataLoss naming the section and the absolute byte offset. The range must outlive
// the reader; `owner` (optional) is an object that keeps the range alive and is handed to whoever
// creates zero-copy views into it (e.g. parameter tensors inside a mapped library).
// Not thread-safe (one reader per parse).
#ifndef SORUN_FORMAT_BINARY_READER_H_
#define SORUN_FORMAT_BINARY_READER_H_

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/object.h"
#include "base/status.h"

namespace sorun {

class BinaryReader {
 public:
  // Reads [data, data + size). `section` names the input in errors ("__tvm_dev_mblob", "params
  // file"); `base_offset` is added to positions in messages (offset of `data` within its file/blob).
  BinaryReader(const uint8_t* data, size_t size, std::string section, uint64_t base_offset = 0,
               ObjectPtr<Object> owner = nullptr);

  // Absolute offset of the next byte (base_offset + position).
  uint64_t offset() const { return base_offset_ + pos_; }
  size_t position() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }
  bool at_end() const { return pos_ == size_; }
  const uint8_t* data() const { return data_; }
  const uint8_t* cursor() const { return data_ + pos_; }
  const std::string& section() const { return section_; }
  const ObjectPtr<Object>& owner() const { return owner_; }

  Status ReadU8(uint8_t* out);
  Status ReadU16(uint16_t* out);
  Status ReadU32(uint32_t* out);
  Status ReadI32(int32_t* out);
  Status ReadU64(uint64_t* out);
  Status ReadI64(int64_t* out);
  Status ReadF64(double* out);
  Status ReadDataType(DLDataType* out);  // {u8 code, u8 bits, u16 lanes}
  Status ReadDevice(DLDevice* out);      // {i32 device_type, i32 device_id}; type must fit DLDeviceType

  // u64 length + bytes. `what` names the field in errors ("type key").
  Status ReadString(std::string* out, std::string_view what = "string");
  // Same, without copying: the view points into the input.
  Status ReadStringView(std::string_view* out, std::string_view what = "string");
  // u64 count + strings.
  Status ReadStringVector(std::vector<std::string>* out, std::string_view what = "string list");
  // u64 count + count * 8 bytes.
  Status ReadU64Vector(std::vector<uint64_t>* out, std::string_view what = "u64 list");
  // u64 count + count * 4-byte DLDataType.
  Status ReadDataTypeVector(std::vector<DLDataType>* out, std::string_view what = "dtype list");
  // Borrows the next `n` bytes.
  Status ReadBytes(size_t n, const uint8_t** out, std::string_view what = "bytes");
  Status Skip(size_t n, std::string_view what = "bytes");

  // DataLoss "<section> byte <offset>: <message>" at the current position.
  Status Error(std::string_view message) const;
  Status ErrorAt(uint64_t absolute_offset, std::string_view message) const;

 private:
  Status Need(size_t n, std::string_view what);
  template <typename T>
  Status ReadLe(T* out, std::string_view what);

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  std::string section_;
  uint64_t base_offset_;
  ObjectPtr<Object> owner_;
};

}  // namespace sorun

#endif  // SORUN_FORMAT_BINARY_READER_H_
