// Unit tests of the CLI's pure helpers: flag parsing, one-line errors, latency statistics, --input
// parsing, value formatting and pseudo-random inputs.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cstring>

#include "base/file_checks.h"
#include "runtime/data_type.h"
#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/cli/json_util.h"
#include "tools/cli/latency_stats.h"
#include "tools/cli/model_session.h"
#include "tools/cli/pack_command.h"
#include "tools/cli/text_table.h"

namespace sorun {
namespace cli {
namespace {

const std::vector<FlagSpec> kSpecs = {
    {"--device", "", true, false, "D", "device"},
    {"--input", "", true, true, "N=F", "input"},
    {"--json", "", false, false, "", "json"},
    {"--output", "-o", true, false, "OUT", "output"},
};

TEST(FlagsTest, ParsesValuesRepeatsBooleansAndPositionals) {
  auto f = ParseFlags({"model.so", "--device", "cpu", "--input=a=x.npy", "--input", "b=y.npy", "--json", "-o", "-weird",
                       "--", "--not-a-flag"},
                      kSpecs);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->Value("--device"), "cpu");
  EXPECT_EQ(f->Values("--input"), (std::vector<std::string>{"a=x.npy", "b=y.npy"}));
  EXPECT_TRUE(f->Has("--json"));
  EXPECT_EQ(f->Value("--output"), "-weird");
  EXPECT_EQ(f->positionals(), (std::vector<std::string>{"model.so", "--not-a-flag"}));
  EXPECT_FALSE(f->Has("--nothing"));
}

TEST(FlagsTest, Errors) {
  EXPECT_NE(ParseFlags({"--bogus"}, kSpecs).status().message().find("unknown flag '--bogus'"), std::string::npos);
  EXPECT_NE(ParseFlags({"--device"}, kSpecs).status().message().find("--device needs a value"), std::string::npos);
  EXPECT_NE(ParseFlags({"--json=1"}, kSpecs).status().message().find("takes no value"), std::string::npos);
  EXPECT_NE(ParseFlags({"--device", "a", "--device=b"}, kSpecs).status().message().find("more than once"),
            std::string::npos);
  EXPECT_TRUE(WantsHelp({"x", "--help"}));
  EXPECT_TRUE(WantsHelp({"-h"}));
  EXPECT_FALSE(WantsHelp({"--", "--help"}));
  std::string help = FormatFlagHelp(kSpecs);
  EXPECT_NE(help.find("-o, --output OUT"), std::string::npos) << help;
  EXPECT_NE(help.find("(repeatable)"), std::string::npos) << help;
}

TEST(FlagsTest, Integers) {
  EXPECT_EQ(*ParseIntFlag("--repeat", "50", 1, 100), 50);
  EXPECT_EQ(*ParseIntFlag("--warmup", "0", 0, 100), 0);
  for (const char* bad : {"", "abc", "1.5", "5x", " 5", "-1", "101", "99999999999999999999"}) {
    EXPECT_FALSE(ParseIntFlag("--repeat", bad, 0, 100).ok()) << bad;
  }
  EXPECT_NE(ParseIntFlag("--repeat", "abc", 1, 9).status().message().find("--repeat: 'abc' is not an integer"),
            std::string::npos);
}

TEST(CommandTest, ErrorsAreOneLine) {
  EXPECT_EQ(OneLine("a\nb"), "a | b");
  EXPECT_EQ(OneLine("compiling x.c: x.c:1:2: error: bad\n  1 | int x(\n    |  ^\n"),
            "compiling x.c: x.c:1:2: error: bad | 1 | int x( | |  ^");
  EXPECT_EQ(OneLine("tab\there\r\n"), "tab here");
  std::ostringstream out, err;
  CommandIo io{out, err};
  EXPECT_EQ(UsageError(io, "bad\nflag"), kExitUsageError);
  EXPECT_EQ(ModelError(io, DataLoss("x.so: broken")), kExitModelError);
  EXPECT_EQ(err.str(), "sorun: error: bad | flag\nsorun: error: x.so: broken\n");
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(NamePath(DataLoss("broken"), "m.so").message(), "m.so: broken");
  EXPECT_EQ(NamePath(DataLoss("m.so: broken"), "m.so").message(), "m.so: broken");
}

TEST(LatencyStatsTest, Summaries) {
  LatencyStats s = SummarizeLatencies({5, 1, 4, 2, 3});
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 5);
  EXPECT_EQ(s.median, 3);
  EXPECT_EQ(s.p90, 5);
  EXPECT_EQ(s.mean, 3);
  s = SummarizeLatencies({4, 1, 3, 2});
  EXPECT_EQ(s.median, 2.5);
  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  s = SummarizeLatencies(hundred);
  EXPECT_EQ(s.p90, 90);
  EXPECT_EQ(s.median, 50.5);
  s = SummarizeLatencies({7});
  EXPECT_EQ(s.min, 7);
  EXPECT_EQ(s.p90, 7);
  EXPECT_EQ(SummarizeLatencies({}).max, 0);
}

TEST(InputFlagsTest, Parsing) {
  auto in = ParseInputFlags({"data=x.npy", "b=dir/with=sign.npy"});
  ASSERT_TRUE(in.ok());
  EXPECT_EQ((*in)[0].name, "data");
  EXPECT_EQ((*in)[1].path, "dir/with=sign.npy");
  EXPECT_FALSE(ParseInputFlags({"data"}).ok());
  EXPECT_FALSE(ParseInputFlags({"=x.npy"}).ok());
  EXPECT_FALSE(ParseInputFlags({"data="}).ok());
  EXPECT_FALSE(ParseInputFlags({"a=x.npy", "a=y.npy"}).ok());
  EXPECT_EQ(SidecarFmapPath("dir/kernels.ptx"), "dir/kernels.tvm_meta.json");
  EXPECT_EQ(SidecarFmapPath("k.cl"), "k.tvm_meta.json");
}

TEST(ValuesTest, FormatAndFill) {
  auto t = Tensor::Empty({10}, Float32(), CpuDevice());
  for (int i = 0; i < 10; ++i) t->data_as<float>()[i] = 0.5f * static_cast<float>(i);
  EXPECT_EQ(FormatLeadingValues(*t, 8), "[0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, ...] (10 values)");
  EXPECT_EQ(FormatLeadingValues(*t, 10), "[0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5]");
  auto i8 = Tensor::Empty({3}, MakeDType(kDLInt, 8), CpuDevice());
  ASSERT_TRUE(i8.ok());
  i8->data_as<int8_t>()[0] = -5;
  i8->data_as<int8_t>()[1] = 0;
  i8->data_as<int8_t>()[2] = 7;
  EXPECT_EQ(FormatLeadingValues(*i8, 8), "[-5, 0, 7]");
  auto b = Tensor::Empty({2}, Bool(), CpuDevice());
  b->data_as<uint8_t>()[0] = 1;
  b->data_as<uint8_t>()[1] = 0;
  EXPECT_EQ(FormatLeadingValues(*b, 8), "[true, false]");

  // Deterministic per name, in range.
  auto x = Tensor::Empty({64}, Float32(), CpuDevice());
  auto y = Tensor::Empty({64}, Float32(), CpuDevice());
  FillPseudoRandom(*x, "data");
  FillPseudoRandom(*y, "data");
  EXPECT_EQ(std::memcmp(x->data(), y->data(), 256), 0);
  for (int i = 0; i < 64; ++i) {
    EXPECT_GE(x->data_as<float>()[i], -1.0f);
    EXPECT_LT(x->data_as<float>()[i], 1.0f);
  }
  FillPseudoRandom(*y, "other");
  EXPECT_NE(std::memcmp(x->data(), y->data(), 256), 0);
  auto ints = Tensor::Empty({32}, Int64(), CpuDevice());
  FillPseudoRandom(*ints, "ids");
  for (int i = 0; i < 32; ++i) {
    EXPECT_GE(ints->data_as<int64_t>()[i], 0);
    EXPECT_LT(ints->data_as<int64_t>()[i], 10);
  }
}

// Issue 13 class 5: `bench` filled an int1x8 input one byte per lane (8x its size). Every dtype's
// fill and display stays inside the tensor's DTypeBytes-sized storage; the bytes after a view are a
// guard that must stay untouched (and ASan sees any overflow of the 64-byte allocation).
TEST(ValuesTest, FillAndFormatStayInsideSubByteAndVectorDtypes) {
  for (const char* name : {"int1x8", "uint1x16", "uint1x4", "int4x2", "int4", "bool", "uint8x3", "float32x4",
                           "float16x2", "int64x2", "int2x3"}) {
    SCOPED_TRACE(name);
    auto dtype = ParseDType(name);
    ASSERT_TRUE(dtype.ok()) << dtype.status().ToString();
    auto whole = Tensor::Empty({64}, UInt8(), CpuDevice());
    ASSERT_TRUE(whole.ok());
    std::memset(whole->data(), 0xAB, 64);
    auto view = whole->View({3}, *dtype);
    ASSERT_TRUE(view.ok()) << view.status().ToString();
    const uint64_t used = view->nbytes();
    ASSERT_EQ(used, 3 * DTypeBytes(*dtype));
    FillPseudoRandom(*view, "data");
    for (uint64_t i = used; i < 64; ++i) ASSERT_EQ(whole->data_as<uint8_t>()[i], 0xAB) << "byte " << i;
    std::string shown = FormatLeadingValues(*view, 100);
    for (uint64_t i = used; i < 64; ++i) std::memset(whole->data_as<uint8_t>() + i, 0, 1);  // poison the tail
    EXPECT_EQ(FormatLeadingValues(*view, 100), shown) << "read past the tensor";
  }
  auto packed = Tensor::Empty({2}, MakeDType(kDLInt, 1, 8), CpuDevice());
  ASSERT_TRUE(packed.ok());
  EXPECT_EQ(FormatLeadingValues(*packed, 8), "(int1x8 values not shown)");
  EXPECT_EQ(DTypeScalarStride(MakeDType(kDLInt, 1, 8)), 0u);
  EXPECT_EQ(DTypeScalarStride(MakeDType(kDLFloat, 32, 4)), 4u);
  EXPECT_EQ(DTypeScalarStride(Bool()), 1u);
  EXPECT_EQ(DTypeScalarStride(MakeDType(kDLInt, 4)), 1u);
}

TEST(JsonTest, StringsFromUntrustedFilesAreValidUtf8) {
  EXPECT_EQ(ValidUtf8("plain"), "plain");
  EXPECT_EQ(ValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(ValidUtf8("a\xff"
                      "b"),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(ValidUtf8("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");                  // overlong
  EXPECT_EQ(ValidUtf8("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // surrogate
  EXPECT_EQ(ValidUtf8("end\xe2\x82"), "end\xef\xbf\xbd\xef\xbf\xbd");            // truncated
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  WriteJsonString(w, std::string("k\x01\xfe\"", 4));
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(buffer.GetString());
  EXPECT_FALSE(doc.HasParseError()) << buffer.GetString();
}

TEST(TextTableTest, Aligns) {
  TextTable t("  ");
  t.AlignRight(1);
  t.AddRow({"a", "1", "x"});
  t.AddRow({"long", "100", ""});
  EXPECT_EQ(t.Render(), "  a       1  x\n  long  100\n");
}

}  // namespace
}  // namespace cli
}  // namespace sorun
