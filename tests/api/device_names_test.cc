// Device and dtype names of the public API (api/sorun.h): ParseDevice, DeviceName, DataTypeName,
// ParseDataType, Version.
#include <gtest/gtest.h>

#include <string>

#include "api/sorun.h"
#include "tests/util/status_matchers.h"

namespace sorun {
namespace {

TEST(DeviceNamesTest, ParseDeviceAcceptsTheDocumentedForms) {
  struct Case {
    const char* text;
    DLDeviceType type;
    int id;
    const char* name;
  };
  for (const Case& c :
       {Case{"cpu", kDLCPU, 0, "cpu:0"}, Case{"cpu:0", kDLCPU, 0, "cpu:0"}, Case{"opencl", kDLOpenCL, 0, "opencl:0"},
        Case{"opencl:1", kDLOpenCL, 1, "opencl:1"}, Case{"cuda:0", kDLCUDA, 0, "cuda:0"},
        Case{"gpu", kDLCUDA, 0, "cuda:0"}, Case{"cuda:3", kDLCUDA, 3, "cuda:3"}}) {
    auto d = ParseDevice(c.text);
    ASSERT_TRUE(d.ok()) << c.text << ": " << d.status().ToString();
    EXPECT_EQ(d->device_type, c.type) << c.text;
    EXPECT_EQ(d->device_id, c.id) << c.text;
    EXPECT_EQ(DeviceName(*d), c.name);
    EXPECT_EQ(DeviceName(ParseDevice(DeviceName(*d)).value()), c.name);  // DeviceName parses back
  }
}

TEST(DeviceNamesTest, BadDeviceStringsNameTheTextAndTheAcceptedForms) {
  for (const char* bad : {"tpu", "", "cpu:x", "cuda:-1", "opencl:", "CPU"}) {
    EXPECT_ERROR(ParseDevice(bad).status(), StatusCode::kInvalidArgument, std::string("'") + bad + "'");
  }
  EXPECT_ERROR(ParseDevice("tpu").status(), StatusCode::kInvalidArgument, "cpu, opencl or cuda");
}

TEST(DeviceNamesTest, DataTypeNamesRoundTrip) {
  for (const char* name :
       {"float32", "float16", "float64", "int8", "int64", "uint8", "uint16", "bool", "float32x4", "bfloat16"}) {
    auto t = ParseDataType(name);
    ASSERT_TRUE(t.ok()) << name << ": " << t.status().ToString();
    EXPECT_EQ(DataTypeName(*t), name);
  }
  DLDataType f = ParseDataType("float32").value();
  EXPECT_EQ(f.code, kDLFloat);
  EXPECT_EQ(f.bits, 32);
  EXPECT_EQ(f.lanes, 1);
  DLDataType b = ParseDataType("bool").value();
  EXPECT_EQ(b.code, kDLUInt);
  EXPECT_EQ(b.bits, 1);
}

TEST(DeviceNamesTest, BadDataTypeNamesAreErrors) {
  for (const char* bad : {"float33", "complex64", "int", "float32x", "x4"}) {
    EXPECT_ERROR(ParseDataType(bad).status(), StatusCode::kInvalidArgument, std::string("'") + bad + "'");
  }
  EXPECT_ERROR(ParseDataType("").status(), StatusCode::kInvalidArgument, "empty dtype");
}

TEST(DeviceNamesTest, VersionIsTheRuntimeVersion) { EXPECT_STREQ(Version(), "0.1.0"); }

}  // namespace
}  // namespace sorun
