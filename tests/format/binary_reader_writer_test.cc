#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "format/binary_reader.h"
#include "format/binary_writer.h"
#include "runtime/data_type.h"

namespace sorun {
namespace {

BinaryReader ReaderOver(const std::string& bytes, uint64_t base = 0) {
  return BinaryReader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "test blob", base);
}

TEST(BinaryIoTest, RoundTripsEveryEncoding) {
  BinaryWriter w;
  w.WriteU64(0x1122334455667788ull);
  w.WriteI32(-5);
  w.WriteF64(2.5);
  w.WriteDataType(MakeDType(kDLFloat, 16, 4));
  w.WriteDevice(DLDevice{kDLOpenCL, 3});
  w.WriteString("hello");
  w.WriteStringVector({"a", "", "ccc"});
  w.WriteU64Vector({1, 2, 3});
  w.WriteDataTypeVector({Float32(), Int32()});
  BinaryReader r = ReaderOver(w.bytes());
  uint64_t u64;
  int32_t i32;
  double f64;
  DLDataType dt;
  DLDevice dev;
  std::string s;
  std::vector<std::string> sv;
  std::vector<uint64_t> uv;
  std::vector<DLDataType> dv;
  ASSERT_TRUE(r.ReadU64(&u64).ok());
  ASSERT_TRUE(r.ReadI32(&i32).ok());
  ASSERT_TRUE(r.ReadF64(&f64).ok());
  ASSERT_TRUE(r.ReadDataType(&dt).ok());
  ASSERT_TRUE(r.ReadDevice(&dev).ok());
  ASSERT_TRUE(r.ReadString(&s).ok());
  ASSERT_TRUE(r.ReadStringVector(&sv).ok());
  ASSERT_TRUE(r.ReadU64Vector(&uv).ok());
  ASSERT_TRUE(r.ReadDataTypeVector(&dv).ok());
  EXPECT_TRUE(r.at_end());
  EXPECT_EQ(u64, 0x1122334455667788ull);
  EXPECT_EQ(i32, -5);
  EXPECT_EQ(f64, 2.5);
  EXPECT_EQ(dt, MakeDType(kDLFloat, 16, 4));
  EXPECT_EQ(dev.device_type, kDLOpenCL);
  EXPECT_EQ(dev.device_id, 3);
  EXPECT_EQ(s, "hello");
  EXPECT_EQ(sv, (std::vector<std::string>{"a", "", "ccc"}));
  EXPECT_EQ(uv, (std::vector<uint64_t>{1, 2, 3}));
  ASSERT_EQ(dv.size(), 2u);
  EXPECT_EQ(dv[1], Int32());
}

TEST(BinaryIoTest, BytesAreLittleEndianAsInTheSpec) {
  BinaryWriter w;
  w.WriteString("_lib");
  const std::string expected("\x04\x00\x00\x00\x00\x00\x00\x00_lib", 12);
  EXPECT_EQ(w.bytes(), expected);
}

TEST(BinaryIoTest, TruncationNamesSectionAndOffset) {
  std::string bytes("\x01\x02\x03", 3);
  BinaryReader r = ReaderOver(bytes, 100);
  uint64_t v;
  Status s = r.ReadU64(&v);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "test blob byte 100: truncated: u64 needs 8 bytes but only 3 remain");
}

TEST(BinaryIoTest, StringLengthPastEndIsRejectedWithoutAllocating) {
  BinaryWriter w;
  w.WriteU64(~0ull);  // absurd length
  w.WriteBytes("abc", 3);
  BinaryReader r = ReaderOver(w.bytes());
  std::string s;
  Status st = r.ReadString(&s, "type key");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("type key length 18446744073709551615 exceeds the 3 bytes left"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("byte 0"), std::string::npos);
}

TEST(BinaryIoTest, HugeVectorCountsAreRejected) {
  BinaryWriter w;
  w.WriteU64(1ull << 62);
  BinaryReader r = ReaderOver(w.bytes());
  std::vector<uint64_t> v;
  Status st = r.ReadU64Vector(&v, "row_ptr");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("row_ptr count"), std::string::npos) << st.message();

  BinaryReader r2 = ReaderOver(w.bytes());
  std::vector<std::string> sv;
  EXPECT_FALSE(r2.ReadStringVector(&sv).ok());
  BinaryReader r3 = ReaderOver(w.bytes());
  std::vector<DLDataType> dv;
  EXPECT_FALSE(r3.ReadDataTypeVector(&dv).ok());
}

TEST(BinaryIoTest, DeviceTypesOutsideDLDeviceTypeAreRejected) {
  // Storing 47 in a DLDeviceType is undefined behaviour (found by fuzzing params files).
  for (int32_t type : {16, 32, 47, -1, 0x7fffffff}) {
    BinaryWriter w;
    w.WriteI32(type);
    w.WriteI32(0);
    BinaryReader r = ReaderOver(w.bytes(), 100);
    DLDevice dev;
    Status s = r.ReadDevice(&dev);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << type;
    EXPECT_NE(
        s.message().find("test blob byte 100: device type " + std::to_string(type) + " is not a DLPack device type"),
        std::string::npos)
        << s.message();
  }
  BinaryWriter w;
  w.WriteDevice(DLDevice{static_cast<DLDeviceType>(15), 2});
  BinaryReader r = ReaderOver(w.bytes());
  DLDevice dev;
  ASSERT_TRUE(r.ReadDevice(&dev).ok());
  EXPECT_EQ(static_cast<int>(dev.device_type), 15);
  EXPECT_TRUE(IsDLDeviceTypeValue(kDLCUDAManaged));
  EXPECT_FALSE(IsDLDeviceTypeValue(32));  // TVM's kDLAOCL
}

TEST(BinaryIoTest, ZeroCopyViewsPointIntoInput) {
  BinaryWriter w;
  w.WriteString("payload");
  const std::string bytes = w.bytes();
  BinaryReader r = ReaderOver(bytes);
  std::string_view view;
  ASSERT_TRUE(r.ReadStringView(&view).ok());
  EXPECT_EQ(view, "payload");
  EXPECT_EQ(view.data(), bytes.data() + 8);
}

TEST(BinaryIoTest, UnalignedReads) {
  std::string bytes("\xff\x2a\x00\x00\x00\x00\x00\x00\x00", 9);
  BinaryReader r = ReaderOver(bytes);
  ASSERT_TRUE(r.Skip(1).ok());
  uint64_t v;
  ASSERT_TRUE(r.ReadU64(&v).ok());
  EXPECT_EQ(v, 42u);
}

TEST(BinaryIoTest, PatchU64) {
  BinaryWriter w;
  w.WriteU64(0);
  w.WriteString("x");
  w.PatchU64(0, 7);
  BinaryReader r = ReaderOver(w.bytes());
  uint64_t v;
  ASSERT_TRUE(r.ReadU64(&v).ok());
  EXPECT_EQ(v, 7u);
}

}  // namespace
}  // namespace sorun
