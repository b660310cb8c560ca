#include "serving/triton/data_types.h"

#include <gtest/gtest.h>

namespace sorun::triton {
namespace {

DLDataType T(uint8_t code, uint8_t bits, uint16_t lanes = 1) { return DLDataType{code, bits, lanes}; }

TEST(DataTypesTest, SorunToTriton) {
  EXPECT_EQ(*ToTritonDataType(T(kDLFloat, 32)), TRITONSERVER_TYPE_FP32);
  EXPECT_EQ(*ToTritonDataType(T(kDLFloat, 16)), TRITONSERVER_TYPE_FP16);
  EXPECT_EQ(*ToTritonDataType(T(kDLFloat, 64)), TRITONSERVER_TYPE_FP64);
  EXPECT_EQ(*ToTritonDataType(T(kDLBfloat, 16)), TRITONSERVER_TYPE_BF16);
  EXPECT_EQ(*ToTritonDataType(T(kDLInt, 8)), TRITONSERVER_TYPE_INT8);
  EXPECT_EQ(*ToTritonDataType(T(kDLInt, 64)), TRITONSERVER_TYPE_INT64);
  EXPECT_EQ(*ToTritonDataType(T(kDLUInt, 8)), TRITONSERVER_TYPE_UINT8);
  EXPECT_EQ(*ToTritonDataType(T(kDLUInt, 1)), TRITONSERVER_TYPE_BOOL);
}

TEST(DataTypesTest, UnsupportedNamesTheDtype) {
  StatusOr<TRITONSERVER_DataType> lanes = ToTritonDataType(T(kDLFloat, 32, 4));
  ASSERT_FALSE(lanes.ok());
  EXPECT_EQ(lanes.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(lanes.status().message().find("float32x4"), std::string::npos) << lanes.status().ToString();
  EXPECT_FALSE(ToTritonDataType(T(kDLInt, 4)).ok());
}

TEST(DataTypesTest, ConfigNamesRoundTrip) {
  for (int t = TRITONSERVER_TYPE_BOOL; t <= TRITONSERVER_TYPE_BF16; ++t) {
    auto type = static_cast<TRITONSERVER_DataType>(t);
    EXPECT_EQ(ParseConfigDataType(ConfigDataTypeName(type)), type) << ConfigDataTypeName(type);
  }
  EXPECT_EQ(ConfigDataTypeName(TRITONSERVER_TYPE_FP32), "TYPE_FP32");
  EXPECT_EQ(ConfigDataTypeName(TRITONSERVER_TYPE_BYTES), "TYPE_STRING");
  EXPECT_STREQ(TritonDataTypeName(TRITONSERVER_TYPE_INT32), "INT32");
  EXPECT_EQ(ParseConfigDataType("FP32"), TRITONSERVER_TYPE_INVALID);
  EXPECT_EQ(ParseConfigDataType("TYPE_INVALID"), TRITONSERVER_TYPE_INVALID);
}

TEST(DataTypesTest, ElementBytesAndShapes) {
  EXPECT_EQ(ElementBytes(T(kDLFloat, 32)), 4u);
  EXPECT_EQ(ElementBytes(T(kDLUInt, 1)), 1u);  // bool: one byte, as Triton's BOOL
  EXPECT_EQ(ShapeString({1, 64}), "[1, 64]");
  EXPECT_EQ(ShapeString({}), "[]");
}

}  // namespace
}  // namespace sorun::triton
