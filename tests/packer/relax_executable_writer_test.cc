// packer/relax_executable_writer: the writer is the parser's inverse. On the real TVM 0.27 exports
// (testdata/relax/*.so) write(parse(x)) == x byte for byte and parse(write(parse(x))) == parse(x); the
// same on hand-assembled executables in both tag dialects and both magics (V2 with a scope map).
#include "packer/relax_executable_writer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "relax/library_blob.h"
#include "runtime/registry_keys.h"
#include "tests/relax/relax_fixtures.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace relax {
namespace {

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

ConstantTagDialect Dialect(bool ffi_tags) {
  return ffi_tags ? ConstantTagDialect::kFfiTypeIndex : ConstantTagDialect::kLegacyEnum;
}

// The executable payload of a real export.
std::string RealPayload(const std::string& model) {
  const std::string symbol = testing::ReadSymbolBytes(sorun::testing::Runfile("testdata/relax/" + model + ".so"),
                                                      keys::kSymbolFfiLibraryBinV22);
  auto blob = ParseLibraryBlob(Bytes(symbol), symbol.size(), keys::kSymbolFfiLibraryBinV22);
  EXPECT_TRUE(blob.ok()) << blob.status().ToString();
  auto root = RootExecutable(*blob);
  EXPECT_TRUE(root.ok()) << root.status().ToString();
  return symbol.substr(static_cast<size_t>((*root)->payload_offset), static_cast<size_t>((*root)->payload_size));
}

// Field-by-field equality of two parsed executables (offsets aside: they are positions, not content).
void ExpectSameExecutable(const VmExecutable& a, const VmExecutable& b) {
  EXPECT_EQ(a.magic, b.magic);
  EXPECT_EQ(a.version, b.version);
  ASSERT_EQ(a.functions.size(), b.functions.size());
  for (size_t i = 0; i < a.functions.size(); ++i) {
    const VmFunction &x = a.functions[i], &y = b.functions[i];
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.start_instr, y.start_instr);
    EXPECT_EQ(x.end_instr, y.end_instr);
    EXPECT_EQ(x.num_args, y.num_args);
    EXPECT_EQ(x.register_file_size, y.register_file_size);
    EXPECT_EQ(x.param_names, y.param_names);
  }
  ASSERT_EQ(a.scopes.size(), b.scopes.size());
  for (size_t i = 0; i < a.scopes.size(); ++i) {
    EXPECT_EQ(a.scopes[i].const_index, b.scopes[i].const_index);
    EXPECT_EQ(a.scopes[i].scope, b.scopes[i].scope);
  }
  ASSERT_EQ(a.constants.size(), b.constants.size());
  for (size_t i = 0; i < a.constants.size(); ++i) {
    const VmConstant &x = a.constants[i], &y = b.constants[i];
    SCOPED_TRACE("constant " + std::to_string(i));
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.tag, y.tag);
    EXPECT_EQ(x.dtype.code, y.dtype.code);
    EXPECT_EQ(x.dtype.bits, y.dtype.bits);
    EXPECT_EQ(x.shape, y.shape);
    ASSERT_EQ(x.data_bytes, y.data_bytes);
    if (x.data_bytes) {
      EXPECT_EQ(0, std::memcmp(x.data, y.data, x.data_bytes));
    }
    EXPECT_EQ(x.str, y.str);
    EXPECT_EQ(x.int_value, y.int_value);
    EXPECT_EQ(x.float_value, y.float_value);
  }
  EXPECT_EQ(a.instr_offset, b.instr_offset);
  EXPECT_EQ(a.instr_data, b.instr_data);
  EXPECT_EQ(a.instructions.size(), b.instructions.size());
}

void ExpectRoundTrip(const std::string& payload, ConstantTagDialect dialect) {
  auto parsed = ParseVmExecutable(Bytes(payload), payload.size(), dialect);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  BinaryWriter w;
  ASSERT_TRUE(WriteVmExecutable(*parsed, dialect, &w).ok());
  EXPECT_EQ(w.bytes().size(), payload.size());
  EXPECT_TRUE(w.bytes() == payload) << "write(parse(x)) differs from x";
  auto again = ParseVmExecutable(Bytes(w.bytes()), w.bytes().size(), dialect);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ExpectSameExecutable(*parsed, *again);
}

TEST(RelaxExecutableWriterTest, RealTvm027ExportsRoundTripByteForByte) {
  for (const char* model : {"mlp", "dyn_batch"}) {
    SCOPED_TRACE(model);
    const std::string payload = RealPayload(model);
    ASSERT_GT(payload.size(), 1000u);
    ExpectRoundTrip(payload, ConstantTagDialect::kFfiTypeIndex);
  }
}

TEST(RelaxExecutableWriterTest, BothDialectsAndMagicsRoundTrip) {
  for (bool ffi_tags : {true, false}) {
    for (bool v2 : {false, true}) {
      SCOPED_TRACE(std::string(ffi_tags ? "ffi tags" : "enum tags") + (v2 ? ", V2" : ", V1"));
      const auto fixture = testing::FixtureExecutable::Small(ffi_tags, v2);
      ExpectRoundTrip(fixture.Serialize(), Dialect(ffi_tags));
    }
  }
}

TEST(RelaxExecutableWriterTest, TagsFollowTheDialect) {
  // The same model written in the other dialect parses only in that dialect.
  const std::string payload = testing::FixtureExecutable::Small(/*ffi_tags=*/true, false).Serialize();
  auto parsed = ParseVmExecutable(Bytes(payload), payload.size(), ConstantTagDialect::kFfiTypeIndex);
  ASSERT_TRUE(parsed.ok());
  BinaryWriter w;
  ASSERT_TRUE(WriteVmExecutable(*parsed, ConstantTagDialect::kLegacyEnum, &w).ok());
  EXPECT_EQ(w.bytes(), testing::FixtureExecutable::Small(/*ffi_tags=*/false, false).Serialize());
}

TEST(RelaxExecutableWriterTest, RefusesInconsistentModels) {
  const std::string payload = testing::FixtureExecutable::Small(true, false).Serialize();
  auto parsed = ParseVmExecutable(Bytes(payload), payload.size(), ConstantTagDialect::kFfiTypeIndex);
  ASSERT_TRUE(parsed.ok());
  VmExecutable scoped = *parsed;
  scoped.scopes.push_back({2, "global"});
  BinaryWriter w1;
  EXPECT_ERROR(WriteVmExecutable(scoped, ConstantTagDialect::kFfiTypeIndex, &w1), StatusCode::kInvalidArgument,
               "V1 executable has no scope section");
  VmExecutable short_tensor = *parsed;
  short_tensor.constants[2].data_bytes = 12;  // float32[4] needs 16
  BinaryWriter w2;
  EXPECT_ERROR(WriteVmExecutable(short_tensor, ConstantTagDialect::kFfiTypeIndex, &w2), StatusCode::kInvalidArgument,
               "constant 2", "12 data bytes", "needs 16");
  VmExecutable bad_magic = *parsed;
  bad_magic.magic = 42;
  BinaryWriter w3;
  EXPECT_ERROR(WriteVmExecutable(bad_magic, ConstantTagDialect::kFfiTypeIndex, &w3), StatusCode::kInvalidArgument,
               "magic");
}

}  // namespace
}  // namespace relax
}  // namespace sorun
