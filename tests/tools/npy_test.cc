#include "tools/npy.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "runtime/data_type.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using ::sorun::testing::MakeTempDir;
using ::sorun::testing::ReadFileOrDie;
using ::sorun::testing::Runfile;
using ::sorun::testing::WriteFileOrDie;

using ::sorun::testing::Contains;

std::string Fixture(const std::string& name) { return Runfile("testdata/npy/" + name); }

template <typename T>
std::string Raw(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

template <typename T>
std::string SignedValues() {
  return Raw<T>({std::numeric_limits<T>::min(), -1, 0, 1, 100, std::numeric_limits<T>::max()});
}

template <typename T>
std::string UnsignedValues() {
  return Raw<T>({0, 1, 2, 100, static_cast<T>(std::numeric_limits<T>::max() - 1), std::numeric_limits<T>::max()});
}

// The (2, 3) fixtures of testdata/npy/make_fixtures.py: dtype, descr, and the expected element bytes.
struct DtypeCase {
  std::string name;
  DLDataType dtype;
  std::string descr;
  std::string bytes;
};

std::vector<DtypeCase> DtypeCases() {
  return {
      {"float16", MakeDType(kDLFloat, 16), "<f2", Raw<uint16_t>({0xbe00, 0x0000, 0x3400, 0x4000, 0x63d0, 0xc380})},
      {"float32", Float32(), "<f4", Raw<float>({-1.5f, 0.0f, 0.25f, 2.0f, 1000.0f, -3.75f})},
      {"float64", MakeDType(kDLFloat, 64), "<f8", Raw<double>({-1.5, 0.0, 0.25, 2.0, 1000.0, -3.75})},
      {"int8", MakeDType(kDLInt, 8), "|i1", SignedValues<int8_t>()},
      {"int16", MakeDType(kDLInt, 16), "<i2", SignedValues<int16_t>()},
      {"int32", Int32(), "<i4", SignedValues<int32_t>()},
      {"int64", Int64(), "<i8", SignedValues<int64_t>()},
      {"uint8", UInt8(), "|u1", UnsignedValues<uint8_t>()},
      {"uint16", MakeDType(kDLUInt, 16), "<u2", UnsignedValues<uint16_t>()},
      {"uint32", MakeDType(kDLUInt, 32), "<u4", UnsignedValues<uint32_t>()},
      {"uint64", MakeDType(kDLUInt, 64), "<u8", UnsignedValues<uint64_t>()},
      {"bool", Bool(), "|b1", Raw<uint8_t>({1, 0, 1, 1, 0, 0})},
  };
}

std::string TensorBytes(const Tensor& t) {
  return std::string(static_cast<const char*>(t.data()), static_cast<size_t>(t.nbytes()));
}

// An .npy image with the given header text (not padded unless the caller pads it).
std::string Npy(const std::string& header, const std::string& data, int major = 1, int minor = 0) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += static_cast<char>(minor);
  const uint32_t len = static_cast<uint32_t>(header.size());
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>((len >> 8) & 0xff);
  if (major != 1) {
    out += static_cast<char>((len >> 16) & 0xff);
    out += static_cast<char>(len >> 24);
  }
  return out + header + data;
}

// Parses a heap copy of exactly the image's size, so that AddressSanitizer sees reads past the end.
StatusOr<Tensor> ParseExact(const std::string& bytes, const std::string& name = "x.npy") {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[bytes.empty() ? 1 : bytes.size()]);
  std::memcpy(copy.get(), bytes.data(), bytes.size());
  return ParseNpy(copy.get(), bytes.size(), name);
}

Status ParseStatus(const std::string& bytes) { return ParseExact(bytes).status(); }

const std::string kF4Data = Raw<float>({1.0f, 2.0f});
std::string F4Npy(const std::string& dict) { return Npy(dict, kF4Data); }

// ---------------------------------------------------------------------------------------------------
// Files written by numpy (testdata/npy/make_fixtures.py).

TEST(NpyTest, ReadsEveryDtypeWrittenByNumpy) {
  for (const DtypeCase& c : DtypeCases()) {
    SCOPED_TRACE(c.name);
    auto t = ReadNpyFile(Fixture(c.name + ".npy"));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->dtype(), c.dtype);
    EXPECT_EQ(t->shape(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(t->device(), CpuDevice());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % 64, 0u);
    EXPECT_EQ(TensorBytes(*t), c.bytes);
    auto descr = DTypeToNpyDescr(c.dtype);
    ASSERT_TRUE(descr.ok()) << descr.status().ToString();
    EXPECT_EQ(*descr, c.descr);
  }
  auto f = ReadNpyFile(Fixture("float32.npy"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->data_as<float>()[4], 1000.0f);
  auto i = ReadNpyFile(Fixture("int64.npy"));
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(i->data_as<int64_t>()[0], std::numeric_limits<int64_t>::min());
}

TEST(NpyTest, WritesTheSameBytesAsNumpySave) {
  for (const std::string name :
       {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "bool", "scalar_float64", "vector_int32", "empty_float32", "rank5_uint8"}) {
    SCOPED_TRACE(name);
    const std::string file = ReadFileOrDie(Fixture(name + ".npy"));
    auto t = ParseNpy(file, name);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    auto bytes = SerializeNpy(*t->dl());
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    EXPECT_EQ(*bytes, file);
  }
}

TEST(NpyTest, ScalarVectorEmptyAndHighRankShapes) {
  auto scalar = ReadNpyFile(Fixture("scalar_float64.npy"));
  ASSERT_TRUE(scalar.ok()) << scalar.status().ToString();
  EXPECT_EQ(scalar->ndim(), 0);
  EXPECT_EQ(scalar->num_elements(), 1);
  EXPECT_EQ(scalar->data_as<double>()[0], 3.25);
  auto vector = ReadNpyFile(Fixture("vector_int32.npy"));
  ASSERT_TRUE(vector.ok()) << vector.status().ToString();
  EXPECT_EQ(vector->shape(), (std::vector<int64_t>{5}));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(vector->data_as<int32_t>()[i], i);
  auto empty = ReadNpyFile(Fixture("empty_float32.npy"));
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->shape(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(empty->nbytes(), 0u);
  auto rank5 = ReadNpyFile(Fixture("rank5_uint8.npy"));
  ASSERT_TRUE(rank5.ok()) << rank5.status().ToString();
  EXPECT_EQ(rank5->shape(), (std::vector<int64_t>{1, 2, 1, 3, 1}));
  EXPECT_EQ(rank5->data_as<uint8_t>()[5], 5);
}

TEST(NpyTest, ReadsVersion2And3Headers) {
  for (const std::string name : {"v2_float32.npy", "v3_float32.npy"}) {
    SCOPED_TRACE(name);
    const std::string file = ReadFileOrDie(Fixture(name));
    auto header = ParseNpyHeader(reinterpret_cast<const uint8_t*>(file.data()), file.size(), name);
    ASSERT_TRUE(header.ok()) << header.status().ToString();
    EXPECT_EQ(header->major_version, name[1] - '0');
    EXPECT_EQ(header->minor_version, 0);
    EXPECT_EQ(header->descr, "<f4");
    EXPECT_EQ(header->data_offset % 64, 0u);
    EXPECT_EQ(header->data_size, 24u);
    auto t = ReadNpyFile(Fixture(name));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(TensorBytes(*t), Raw<float>({0, 1, 2, 3, 4, 5}));
  }
}

TEST(NpyTest, UnsupportedNumpyFilesAreClearErrors) {
  EXPECT_ERROR(ReadNpyFile(Fixture("fortran_float32.npy")).status(), StatusCode::kUnimplemented,
               "fortran_float32.npy byte 44", "fortran-order arrays are not supported");
  EXPECT_ERROR(ReadNpyFile(Fixture("bigendian_float32.npy")).status(), StatusCode::kUnimplemented,
               "bigendian_float32.npy byte 20", "big-endian", "'>f4'");
  EXPECT_ERROR(ReadNpyFile(Fixture("complex64.npy")).status(), StatusCode::kUnimplemented,
               "unsupported dtype descr '<c8'");
  EXPECT_ERROR(ReadNpyFile(Fixture("structured.npy")).status(), StatusCode::kUnimplemented, "byte 20",
               "structured dtypes");
}

TEST(NpyTest, ReadNpyFileReportsMissingFilesAndDirectories) {
  EXPECT_ERROR(ReadNpyFile("/nonexistent/x.npy").status(), StatusCode::kNotFound, "/nonexistent/x.npy");
  const std::string dir = MakeTempDir("npy");
  EXPECT_ERROR(ReadNpyFile(dir).status(), StatusCode::kInvalidArgument, "not a regular file");
  WriteFileOrDie(dir + "/empty.npy", "");
  EXPECT_ERROR(ReadNpyFile(dir + "/empty.npy").status(), StatusCode::kDataLoss, "empty.npy byte 0", "not an .npy file");
}

// ---------------------------------------------------------------------------------------------------
// Round trips through our writer.

TEST(NpyTest, RoundTripsEveryDtypeAndShape) {
  const std::string dir = MakeTempDir("npy");
  std::mt19937 rng(7);
  for (const DtypeCase& c : DtypeCases()) {
    for (const std::vector<int64_t>& shape :
         std::vector<std::vector<int64_t>>{{}, {0}, {7}, {3, 0, 2}, {2, 3, 4}, {1, 1, 1, 1, 5}}) {
      SCOPED_TRACE(c.name + " " + ShapeToString(shape.data(), static_cast<int>(shape.size())));
      auto t = Tensor::Empty(shape, c.dtype, CpuDevice());
      ASSERT_TRUE(t.ok()) << t.status().ToString();
      uint8_t* p = t->data_as<uint8_t>();
      for (uint64_t i = 0; i < t->nbytes(); ++i) p[i] = static_cast<uint8_t>(rng());
      if (c.dtype == Bool()) {
        for (uint64_t i = 0; i < t->nbytes(); ++i) p[i] &= 1;
      }
      auto bytes = SerializeNpy(*t->dl());
      ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
      auto header = ParseNpyHeader(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size(), "mem");
      ASSERT_TRUE(header.ok()) << header.status().ToString();
      EXPECT_EQ(header->major_version, 1);
      EXPECT_EQ(header->data_offset % 64, 0u);
      EXPECT_EQ(header->descr, c.descr);
      auto back = ParseExact(*bytes);
      ASSERT_TRUE(back.ok()) << back.status().ToString();
      EXPECT_EQ(back->shape(), shape);
      EXPECT_EQ(back->dtype(), c.dtype);
      EXPECT_EQ(TensorBytes(*back), TensorBytes(*t));
      // Through a file too.
      const std::string path = dir + "/" + c.name + ".npy";
      ASSERT_TRUE(WriteNpyFile(path, *t->dl()).ok());
      EXPECT_EQ(ReadFileOrDie(path), *bytes);
      auto from_file = ReadNpyFile(path);
      ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
      EXPECT_EQ(TensorBytes(*from_file), TensorBytes(*t));
    }
  }
}

TEST(NpyTest, HeaderLayoutMatchesNumpy) {
  auto t = Tensor::Empty({2, 3}, Float32(), CpuDevice());
  ASSERT_TRUE(t.ok());
  auto header = NpyHeaderFor(*t->dl());
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  ASSERT_EQ(header->size(), 128u);
  EXPECT_EQ(header->substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));  // 118 bytes of header text
  EXPECT_EQ(header->substr(10, dict.size()), dict);
  EXPECT_EQ(header->substr(10 + dict.size()), std::string(128 - 11 - dict.size(), ' ') + "\n");
}

TEST(NpyTest, WriterHonoursByteOffsetAndCopiesFromViews) {
  auto base = Tensor::Empty({8}, Int32(), CpuDevice());
  ASSERT_TRUE(base.ok());
  for (int i = 0; i < 8; ++i) base->data_as<int32_t>()[i] = i * 10;
  auto view = base->View({2, 2}, Int32(), 16);
  ASSERT_TRUE(view.ok());
  auto bytes = SerializeNpy(*view->dl());
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto back = ParseNpy(*bytes, "view");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(TensorBytes(*back), Raw<int32_t>({40, 50, 60, 70}));
}

TEST(NpyTest, WriterRejectsWhatNpyCannotHold) {
  float storage[4] = {0, 1, 2, 3};
  int64_t shape[2] = {2, 2};
  int64_t strides[2] = {1, 2};  // transposed: not compact
  DLTensor t{storage, CpuDevice(), 2, Float32(), shape, strides, 0};
  EXPECT_ERROR(SerializeNpy(t).status(), StatusCode::kInvalidArgument, "non-compact");
  t.strides = nullptr;
  t.dtype = MakeDType(kDLBfloat, 16);
  EXPECT_ERROR(SerializeNpy(t).status(), StatusCode::kUnimplemented, "bfloat16", "no .npy equivalent");
  t.dtype = MakeDType(kDLFloat, 32, 4);
  EXPECT_ERROR(SerializeNpy(t).status(), StatusCode::kUnimplemented, "float32x4");
  t.dtype = MakeDType(kDTypeHandle, 64);
  EXPECT_ERROR(SerializeNpy(t).status(), StatusCode::kUnimplemented, "handle");
  t.dtype = MakeDType(kDLInt, 4);
  EXPECT_ERROR(SerializeNpy(t).status(), StatusCode::kUnimplemented, "int4");
  t.dtype = Float32();
  t.ndim = 65;
  EXPECT_ERROR(SerializeNpy(t).status(), StatusCode::kInvalidArgument, "ndim 65");
  t.ndim = -1;
  EXPECT_ERROR(SerializeNpy(t).status(), StatusCode::kInvalidArgument, "ndim -1");
  t.ndim = 2;
  t.shape = nullptr;
  EXPECT_ERROR(SerializeNpy(t).status(), StatusCode::kInvalidArgument, "no shape");
  t.shape = shape;
  shape[0] = -2;
  EXPECT_ERROR(SerializeNpy(t).status(), StatusCode::kInvalidArgument, "negative dimension");
  shape[0] = 2;
  t.data = nullptr;
  EXPECT_ERROR(SerializeNpy(t).status(), StatusCode::kInvalidArgument, "no data");
  t.data = storage;
  EXPECT_ERROR(WriteNpyFile("/nonexistent/dir/x.npy", t), StatusCode::kFailedPrecondition, "/nonexistent/dir/x.npy");
}

TEST(NpyTest, DescrMapping) {
  EXPECT_EQ(*NpyDescrToDType("<f4"), Float32());
  EXPECT_EQ(*NpyDescrToDType("=f4"), Float32());
  EXPECT_EQ(*NpyDescrToDType("|f4"), Float32());
  EXPECT_EQ(*NpyDescrToDType("f4"), Float32());
  EXPECT_EQ(*NpyDescrToDType("|u1"), UInt8());
  EXPECT_EQ(*NpyDescrToDType(">u1"), UInt8());  // byte order is moot for one byte
  EXPECT_EQ(*NpyDescrToDType("<b1"), Bool());
  EXPECT_EQ(*NpyDescrToDType("<i8"), Int64());
  EXPECT_EQ(*NpyDescrToDType("<f2"), MakeDType(kDLFloat, 16));
  for (const std::string bad :
       {"", "<", "f", "<f3", "<f16", "<c8", "<U5", "|O", "<M8[ns]", "<V4", "<i16", "|b2", "<f4x", "<f99999999999"}) {
    EXPECT_ERROR(NpyDescrToDType(bad).status(), StatusCode::kUnimplemented, "unsupported dtype descr '" + bad + "'");
  }
  EXPECT_ERROR(NpyDescrToDType(">f8").status(), StatusCode::kUnimplemented, "big-endian", "'>f8'");
  EXPECT_ERROR(NpyDescrToDType(">i2").status(), StatusCode::kUnimplemented, "big-endian");
}

// ---------------------------------------------------------------------------------------------------
// Robust header parsing.

TEST(NpyTest, HeaderDictVariantsAreAccepted) {
  const std::vector<std::string> dicts = {
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
      "{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}",  // other order, no trailing comma
      "{ 'descr' : '<f4' ,\n\t'fortran_order' :False,'shape':( 2 , ) , }   \n",
      "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }\n",  // Python 2
      "{'descr': '=f4', 'fortran_order': False, 'shape': (+2,), }",
      "\n  {'descr': '|f4', 'fortran_order': False, 'shape': (2,),}\r\n",
  };
  for (const std::string& dict : dicts) {
    SCOPED_TRACE(dict);
    auto t = ParseExact(F4Npy(dict));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->shape(), (std::vector<int64_t>{2}));
    EXPECT_EQ(TensorBytes(*t), kF4Data);
  }
  auto scalar = ParseExact(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': ()}", Raw<float>({7.0f})));
  ASSERT_TRUE(scalar.ok()) << scalar.status().ToString();
  EXPECT_EQ(scalar->ndim(), 0);
  auto matrix = ParseExact(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2,)}", kF4Data));
  ASSERT_TRUE(matrix.ok()) << matrix.status().ToString();
  EXPECT_EQ(matrix->shape(), (std::vector<int64_t>{1, 2}));
  // Versions 2.0 and 3.0 with a u32 header length.
  for (int major : {2, 3}) {
    auto t = ParseExact(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", kF4Data, major));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
  }
}

// ---------------------------------------------------------------------------------------------------
// Malformed files: each is an error naming the cause and the byte offset.

TEST(NpyTest, BadMagicAndVersion) {
  EXPECT_ERROR(ParseStatus(""), StatusCode::kDataLoss, "x.npy byte 0: not an .npy file");
  EXPECT_ERROR(ParseStatus("\x93NUMPX\x01\x00"), StatusCode::kDataLoss, "x.npy byte 0: not an .npy file");
  EXPECT_ERROR(ParseStatus("PK\x03\x04 a zip file"), StatusCode::kDataLoss, "not an .npy file");
  EXPECT_ERROR(ParseStatus("\x93NUMPY"), StatusCode::kDataLoss, "x.npy byte 6: truncated");
  EXPECT_ERROR(ParseStatus(std::string("\x93NUMPY\x01", 7)), StatusCode::kDataLoss, "x.npy byte 7: truncated");
  EXPECT_ERROR(ParseStatus(std::string("\x93NUMPY\x01\x00\x10", 9)), StatusCode::kDataLoss,
               "x.npy byte 8: truncated: u16 needs 2 bytes but only 1 remain");
  EXPECT_ERROR(ParseStatus(std::string("\x93NUMPY\x02\x00\x10\x00\x00", 11)), StatusCode::kDataLoss,
               "x.npy byte 8: truncated: u32");
  EXPECT_ERROR(ParseStatus(Npy("{}", "", 4)), StatusCode::kUnimplemented, "x.npy byte 6",
               "version 4.0 is not supported");
  EXPECT_ERROR(ParseStatus(Npy("{}", "", 1, 1)), StatusCode::kUnimplemented, "version 1.1");
  EXPECT_ERROR(ParseStatus(Npy("{}", "", 0)), StatusCode::kUnimplemented, "version 0.0");
}

TEST(NpyTest, HeaderLengthPastTheEnd) {
  std::string v1 = Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", kF4Data);
  v1[8] = '\xff';
  v1[9] = '\x7f';
  EXPECT_ERROR(ParseStatus(v1), StatusCode::kDataLoss, "x.npy byte 8: header length 32767 exceeds the");
  std::string v2 = Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", kF4Data, 2);
  v2.replace(8, 4, "\xff\xff\xff\xff");
  EXPECT_ERROR(ParseStatus(v2), StatusCode::kDataLoss, "x.npy byte 8: header length 4294967295 exceeds the");
  // Truncated inside the header.
  const std::string whole = ReadFileOrDie(Fixture("float32.npy"));
  EXPECT_ERROR(ParseStatus(whole.substr(0, 50)), StatusCode::kDataLoss,
               "byte 8: header length 118 exceeds the 40 bytes left");
}

TEST(NpyTest, MalformedHeaderDicts) {
  struct Case {
    std::string dict;
    StatusCode code;
    std::string message;  // includes "byte N" where N = 10 + position in the dict
  };
  const std::vector<Case> cases = {
      {"", StatusCode::kDataLoss, "byte 10: header: expected the header dict to start with '{' but the header ends"},
      {"[1, 2]", StatusCode::kDataLoss, "byte 10: header: expected the header dict to start with '{' but found '['"},
      {"{'descr': '<f4', 'fortran_order': False}", StatusCode::kDataLoss, "byte 50: header: missing key 'shape'"},
      {"{'fortran_order': False, 'shape': (2,)}", StatusCode::kDataLoss, "byte 49: header: missing key 'descr'"},
      {"{'descr': '<f4', 'shape': (2,)}", StatusCode::kDataLoss, "byte 41: header: missing key 'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'foo': 1}", StatusCode::kDataLoss,
       "byte 66: header: unexpected key 'foo'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", StatusCode::kDataLoss,
       "byte 27: header: duplicate key 'descr'"},
      {"{'descr': 5, 'fortran_order': False, 'shape': (2,)}", StatusCode::kDataLoss,
       "byte 20: header: expected a quoted string for 'descr' but found '5'"},
      {"{'descr': 'abc', 'fortran_order': False, 'shape': (2,)}", StatusCode::kUnimplemented,
       "byte 20: header: unsupported dtype descr 'abc'"},
      {"{'descr': '<U5', 'fortran_order': False, 'shape': (2,)}", StatusCode::kUnimplemented,
       "byte 20: header: unsupported dtype descr '<U5'"},
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}", StatusCode::kUnimplemented,
       "byte 20: header: big-endian arrays"},
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (2,)}", StatusCode::kUnimplemented,
       "byte 44: header: fortran-order arrays are not supported"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", StatusCode::kDataLoss,
       "byte 44: header: expected True or False for 'fortran_order' but found '0'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", StatusCode::kDataLoss,
       "byte 61: header: negative dimension in 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", StatusCode::kDataLoss,
       "byte 60: header: expected a tuple for 'shape' but found '['"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", StatusCode::kDataLoss,
       "byte 60: header: 'shape' is a parenthesised integer, not a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, x)}", StatusCode::kDataLoss,
       "byte 64: header: expected an integer dimension in 'shape' but found 'x'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", StatusCode::kDataLoss,
       "byte 65: header: expected ',' or ')' in 'shape' but the header ends"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", StatusCode::kDataLoss,
       "byte 61: header: dimension 99999999999999999999 in 'shape' exceeds int64"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775807, 9223372036854775807)}",
       StatusCode::kDataLoss,
       "byte 60: header: shape (9223372036854775807, 9223372036854775807) of '<f4' is too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,)}", StatusCode::kDataLoss,
       "byte 60: header: shape (4611686018427387904,) of '<f4' is too large"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", StatusCode::kDataLoss,
       "byte 26: header: expected ',' or '}' after the value of 'descr' but found '''"},
      {"{'descr: '<f4', 'fortran_order': False, 'shape': (2,)}", StatusCode::kDataLoss,
       "byte 20: header: expected ':' after key 'descr: ' but found '<'"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", StatusCode::kUnimplemented,
       "byte 20: header: unsupported dtype descr '<f4, '"},
      {"{'descr': '<f4", StatusCode::kDataLoss, "byte 20: header: unterminated string"},
      {"{'descr': '<\\x66', 'fortran_order': False, 'shape': (2,)}", StatusCode::kDataLoss,
       "byte 22: header: escape sequences in strings are not supported"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} xyz", StatusCode::kDataLoss,
       "byte 66: header: unexpected text after the header dict but found 'x'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}\0", StatusCode::kDataLoss,
       "byte 65: header: unexpected text after the header dict but found byte 0"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", StatusCode::kDataLoss,
       "byte 64: header: expected ',' or '}' after the value of 'shape' but the header ends"},
      {"{1: 2}", StatusCode::kDataLoss, "byte 11: header: expected a quoted key or '}' but found '1'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.dict);
    std::string dict = c.dict;
    if (c.message.find("found byte 0") != std::string::npos) dict += std::string(1, '\0');
    EXPECT_ERROR(ParseStatus(F4Npy(dict)), c.code, "x.npy " + c.message);
  }
  // Too many dimensions.
  std::string many = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 65; ++i) many += "1, ";
  EXPECT_ERROR(ParseStatus(F4Npy(many + ")}")), StatusCode::kDataLoss, "more than 64 dimensions");
}

TEST(NpyTest, DataSizeMustMatchTheShape) {
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  // The data starts at 10 + 59 = 69.
  EXPECT_ERROR(ParseStatus(Npy(dict, std::string(20, '\0'))), StatusCode::kDataLoss,
               "x.npy byte 69: data is 20 bytes but shape (2, 3) of '<f4' needs 24 (truncated)");
  EXPECT_ERROR(ParseStatus(Npy(dict, std::string(25, '\0'))), StatusCode::kDataLoss,
               "data is 25 bytes but shape (2, 3) of '<f4' needs 24 (trailing bytes)");
  EXPECT_ERROR(ParseStatus(Npy(dict, "")), StatusCode::kDataLoss, "data is 0 bytes");
  // An absurd but representable shape fails on size before anything is allocated.
  EXPECT_ERROR(ParseStatus(Npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 1000)}", "")),
               StatusCode::kDataLoss, "needs 8000000000000000");
  // Zero-size shapes need zero bytes.
  EXPECT_ERROR(ParseStatus(Npy("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 1000000000000)}", "x")),
               StatusCode::kDataLoss, "data is 1 bytes", "needs 0");
  // Every truncation of a real file is an error.
  const std::string file = ReadFileOrDie(Fixture("int16.npy"));
  for (size_t n = 0; n < file.size(); ++n) {
    Status s = ParseStatus(file.substr(0, n));
    ASSERT_FALSE(s.ok()) << n;
    ASSERT_EQ(s.code(), StatusCode::kDataLoss) << s.ToString();
    ASSERT_TRUE(Contains(s.message(), "x.npy byte ")) << s.message();
  }
}

TEST(NpyTest, RandomCorruptionNeverCrashes) {
  const std::string file = ReadFileOrDie(Fixture("float64.npy"));
  std::mt19937_64 rng(5);
  const std::string alphabet = "{}()[],:' \"0123456789-+LTrueFalsdcihpo<>|=f248\n\x93";
  int failures = 0;
  for (int i = 0; i < 5000; ++i) {
    std::string b = file;
    const int edits = 1 + static_cast<int>(rng() % 5);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % 128;  // the magic and header
      b[at] = rng() % 2 ? alphabet[rng() % alphabet.size()] : static_cast<char>(rng());
    }
    if (rng() % 8 == 0) b.resize(rng() % b.size());
    auto t = ParseExact(b);
    if (!t.ok()) {
      ++failures;
      ASSERT_TRUE(Contains(t.status().message(), "x.npy byte ")) << t.status().message();
      continue;
    }
    ASSERT_LE(t->nbytes(), b.size());
  }
  EXPECT_GT(failures, 2500);
}

// ---------------------------------------------------------------------------------------------------
// Compatibility with numpy itself, when /usr/bin/python3 has it.

bool HaveNumpy() { return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0; }

TEST(NpyTest, NumpyLoadsWhatWeWrite) {
  if (!HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  const std::string dir = MakeTempDir("npy");
  for (const DtypeCase& c : DtypeCases()) {
    auto t = Tensor::Empty({2, 3}, c.dtype, CpuDevice());
    ASSERT_TRUE(t.ok());
    std::memcpy(t->data(), c.bytes.data(), c.bytes.size());
    ASSERT_TRUE(WriteNpyFile(dir + "/" + c.name + ".npy", *t->dl()).ok());
  }
  auto scalar = Tensor::Empty({}, MakeDType(kDLFloat, 64), CpuDevice());
  ASSERT_TRUE(scalar.ok());
  scalar->data_as<double>()[0] = 3.25;
  ASSERT_TRUE(WriteNpyFile(dir + "/scalar.npy", *scalar->dl()).ok());
  // numpy loads each file, checks dtype/shape/values, and re-saves it; the bytes must be identical.
  const std::string script = R"PY(
import sys, numpy as np
d = sys.argv[1]
vals = {'f': [-1.5, 0.0, 0.25, 2.0, 1000.0, -3.75], 'b': [True, False, True, True, False, False]}
for name in ['float16','float32','float64','int8','int16','int32','int64','uint8','uint16','uint32','uint64','bool']:
    a = np.load(d + '/' + name + '.npy')
    assert a.dtype == np.dtype(name) and a.shape == (2, 3), (name, a.dtype, a.shape)
    if a.dtype.kind in 'fb':
        exp = vals[a.dtype.kind]
    else:
        i = np.iinfo(a.dtype)
        exp = [i.min, -1, 0, 1, 100, i.max] if a.dtype.kind == 'i' else [0, 1, 2, 100, i.max - 1, i.max]
    assert (a.ravel() == np.array(exp, dtype=a.dtype)).all(), (name, a)
    np.save(d + '/' + name + '.numpy.npy', a)
s = np.load(d + '/scalar.npy')
assert s.shape == () and s == 3.25
np.save(d + '/scalar.numpy.npy', s)
print('ok')
)PY";
  WriteFileOrDie(dir + "/check.py", script);
  const std::string cmd = "/usr/bin/python3 '" + dir + "/check.py' '" + dir + "' > '" + dir + "/log' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << ReadFileOrDie(dir + "/log");
  for (const DtypeCase& c : DtypeCases()) {
    EXPECT_EQ(ReadFileOrDie(dir + "/" + c.name + ".npy"), ReadFileOrDie(dir + "/" + c.name + ".numpy.npy")) << c.name;
  }
  EXPECT_EQ(ReadFileOrDie(dir + "/scalar.npy"), ReadFileOrDie(dir + "/scalar.numpy.npy"));
}

}  // namespace
}  // namespace sorun
