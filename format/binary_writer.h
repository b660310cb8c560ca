// BinaryWriter: appends the little-endian dmlc::Stream encoding (docs/spec/FORMAT.md section 2.1) to a
// growable byte buffer it owns. The counterpart of BinaryReader; used by every SaveToBinary hook and
// by the serializer. Not thread-safe.
#ifndef SORUN_FORMAT_BINARY_WRITER_H_
#define SORUN_FORMAT_BINARY_WRITER_H_

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sorun {

class BinaryWriter {
 public:
  // `origin`: the distance of this writer's first byte from a 64-byte aligned address in the final
  // artifact (8 for a blob payload after its length prefix; 0 for a params file). Writers that align
  // data, such as the factory's parameter layout, use AbsolutePosition().
  explicit BinaryWriter(uint64_t origin = 0) : origin_(origin) {}

  uint64_t origin() const { return origin_; }
  uint64_t AbsolutePosition() const { return origin_ + bytes_.size(); }

  void WriteU8(uint8_t v);
  void WriteU16(uint16_t v);
  void WriteU32(uint32_t v);
  void WriteI32(int32_t v);
  void WriteU64(uint64_t v);
  void WriteI64(int64_t v);
  void WriteF64(double v);
  void WriteDataType(DLDataType v);
  void WriteDevice(DLDevice v);
  void WriteString(std::string_view s);
  void WriteStringVector(const std::vector<std::string>& v);
  void WriteU64Vector(const std::vector<uint64_t>& v);
  void WriteDataTypeVector(const std::vector<DLDataType>& v);
  void WriteBytes(const void* data, size_t n);
  // Overwrites 8 bytes at `position` (for back-patched counts).
  void PatchU64(size_t position, uint64_t v);

  size_t size() const { return bytes_.size(); }
  const std::string& bytes() const { return bytes_; }
  std::string TakeBytes() { return std::move(bytes_); }
  void Reserve(size_t n) { bytes_.reserve(n); }

 private:
  uint64_t origin_ = 0;
  std::string bytes_;
};

}  // namespace sorun

#endif  // SORUN_FORMAT_BINARY_WRITER_H_
