#include "runtime/data_type.h"

#include <gtest/gtest.h>

namespace sorun {
namespace {

TEST(DataTypeTest, ParsesTvmSpellings) {
  struct Case {
    const char* text;
    uint8_t code, bits;
    uint16_t lanes;
  };
  const Case cases[] = {
      {"float32", kDLFloat, 32, 1},   {"float16", kDLFloat, 16, 1},
      {"int8", kDLInt, 8, 1},         {"uint8", kDLUInt, 8, 1},
      {"int64", kDLInt, 64, 1},       {"bool", kDLUInt, 1, 1},
      {"float32x4", kDLFloat, 32, 4}, {"handle", kDTypeHandle, 64, 1},
      {"bfloat16", kDLBfloat, 16, 1}, {"e4m3_float8", kDTypeE4M3Float, 8, 1},
  };
  for (const Case& c : cases) {
    auto t = ParseDType(c.text);
    ASSERT_TRUE(t.ok()) << c.text << ": " << t.status().ToString();
    EXPECT_EQ(*t, MakeDType(c.code, c.bits, c.lanes)) << c.text;
    EXPECT_EQ(DTypeToString(*t), c.text);
  }
}

// tvm-ffi executables (TVM 0.21+) number codes as DLPack 1.x: 6 is an 8-bit bool (TVM 0.23+), 7..17 the
// float8/6/4 kinds under TVM 0.27's names; the classic numbering reads the same bits as e4m3_float8.
TEST(DataTypeTest, DLPackCodesNameBoolAndTheNarrowFloats) {
  EXPECT_EQ(DTypeToString(DLPackBool(), DTypeCodes::kDLPack), "bool");
  EXPECT_EQ(DTypeToString(DLPackBool(), DTypeCodes::kTvmLegacy), "e4m3_float8");
  EXPECT_EQ(DTypeToString(Bool(), DTypeCodes::kDLPack), "bool");  // TVM 0.21 / 0.22 still wrote uint1
  EXPECT_EQ(DTypeToString(MakeDType(10, 8), DTypeCodes::kDLPack), "float8_e4m3fn");
  EXPECT_EQ(DTypeToString(MakeDType(12, 8, 4), DTypeCodes::kDLPack), "float8_e5m2x4");
  EXPECT_EQ(DTypeToString(MakeDType(17, 4), DTypeCodes::kDLPack), "float4_e2m1fn");
  EXPECT_EQ(DTypeToString(MakeDType(40, 8), DTypeCodes::kDLPack), "code40_8");
  EXPECT_EQ(DTypeToString(Float32(), DTypeCodes::kDLPack), "float32");

  EXPECT_EQ(ApiDType(DLPackBool(), DTypeCodes::kDLPack), Bool());
  EXPECT_EQ(ApiDType(DLPackBool(), DTypeCodes::kTvmLegacy), DLPackBool());  // e4m3_float8 there
  EXPECT_EQ(ApiDType(Int32(), DTypeCodes::kDLPack), Int32());
  EXPECT_TRUE(IsBoolDType(Bool()));
  EXPECT_TRUE(IsBoolDType(DLPackBool()));
  EXPECT_FALSE(IsBoolDType(UInt8()));
  EXPECT_FALSE(IsBoolDType(MakeDType(kDLPackBoolCode, 8, 4)));
  EXPECT_TRUE(DTypeAccepts(Bool(), DLPackBool()));
  EXPECT_TRUE(DTypeAccepts(Float32(), Float32()));
  EXPECT_FALSE(DTypeAccepts(DLPackBool(), Bool()));  // legacy e4m3_float8 there: only a bool takes both
  EXPECT_FALSE(DTypeAccepts(Bool(), UInt8()));
}

TEST(DataTypeTest, RejectsUnknownWithTheName) {
  for (const char* bad : {"float31", "int", "int0", "qint8", "float32x", "float32x0", "int999", "f32"}) {
    auto t = ParseDType(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_NE(t.status().message().find(std::string("'") + bad + "'"), std::string::npos) << t.status().message();
  }
}

TEST(DataTypeTest, ElementBytesFollowTvmRule) {
  EXPECT_EQ(DTypeBytes(Float32()), 4u);
  EXPECT_EQ(DTypeBytes(Bool()), 1u);
  EXPECT_EQ(DTypeBytes(MakeDType(kDLFloat, 16, 4)), 8u);
  EXPECT_EQ(DTypeBytes(MakeDType(kDLInt, 4, 1)), 1u);
}

TEST(DataTypeTest, Devices) {
  auto d = ParseDevice("opencl:1");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->device_type, kDLOpenCL);
  EXPECT_EQ(d->device_id, 1);
  EXPECT_EQ(DeviceToString(*d), "opencl:1");
  EXPECT_EQ(ParseDevice("cpu")->device_type, kDLCPU);
  EXPECT_EQ(ParseDevice("cuda")->device_type, kDLCUDA);
  EXPECT_FALSE(ParseDevice("tpu").ok());
  EXPECT_FALSE(ParseDevice("cuda:-1").ok());
  EXPECT_FALSE(ParseDevice("cuda:x").ok());
}

TEST(DataTypeTest, ShapeSizesAreOverflowChecked) {
  int64_t ok_shape[] = {2, 3, 4};
  EXPECT_EQ(*ShapeByteSize(ok_shape, 3, Float32()), 96u);
  int64_t neg[] = {2, -1};
  auto n = ShapeNumElements(neg, 2);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("negative dimension -1"), std::string::npos);
  int64_t huge[] = {1ll << 40, 1ll << 40};
  EXPECT_FALSE(ShapeNumElements(huge, 2).ok());
  int64_t big[] = {1ll << 61};
  EXPECT_FALSE(ShapeByteSize(big, 1, Float32()).ok());
  int64_t zero[] = {0, 5};
  EXPECT_EQ(*ShapeByteSize(zero, 2, Float32()), 0u);
}

}  // namespace
}  // namespace sorun
