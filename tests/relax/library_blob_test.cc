// relax/library_blob: the three container generations, real TVM 0.27 exports and malformed bytes.
#include "relax/library_blob.h"

#include <gtest/gtest.h>

#include <string>

#include "format/binary_writer.h"
#include "tests/relax/relax_fixtures.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace relax {
namespace {

using testing::FixtureExecutable;

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

StatusOr<LibraryBlob> Parse(const std::string& bytes, const char* symbol = keys::kSymbolFfiLibraryBinV22) {
  return ParseLibraryBlob(Bytes(bytes), bytes.size(), symbol);
}

std::string RealBlob(const std::string& model) {
  return testing::ReadSymbolBytes(sorun::testing::Runfile("testdata/relax/" + model + ".so"),
                                  keys::kSymbolFfiLibraryBinV22);
}

TEST(LibraryBlobTest, GenerationFollowsTheSymbol) {
  EXPECT_EQ(*BlobGenerationForSymbol("__tvm_dev_mblob"), BlobGeneration::kLegacyDevMblob);
  EXPECT_EQ(*BlobGenerationForSymbol("__tvm_ffi_library_bin"), BlobGeneration::kFfiLegacy021);
  EXPECT_EQ(*BlobGenerationForSymbol("__tvm_ffi__library_bin"), BlobGeneration::kFfiTreeFirst);
  EXPECT_ERROR(BlobGenerationForSymbol("__tvm_blob").status(), StatusCode::kNotFound, "__tvm_blob",
               "__tvm_ffi__library_bin");
  EXPECT_FALSE(UsesFfiConstantTags(BlobGeneration::kLegacyDevMblob));
  EXPECT_TRUE(UsesFfiConstantTags(BlobGeneration::kFfiLegacy021));
  EXPECT_TRUE(UsesFfiConstantTags(BlobGeneration::kFfiTreeFirst));
}

TEST(LibraryBlobTest, ReadsRealTvm027Exports) {
  for (const char* model : {"mlp", "dyn_batch"}) {
    SCOPED_TRACE(model);
    const std::string bytes = RealBlob(model);
    auto blob = Parse(bytes);
    ASSERT_TRUE(blob.ok()) << blob.status().ToString();
    EXPECT_EQ(blob->generation, BlobGeneration::kFfiTreeFirst);
    EXPECT_EQ(blob->payload_size + 8, bytes.size());  // the symbol is exactly 8 + nbytes
    ASSERT_EQ(blob->modules.size(), 2u);
    EXPECT_EQ(blob->modules[0].type_key, "relax.VMExecutable");
    EXPECT_EQ(blob->modules[1].type_key, "_lib");
    EXPECT_EQ(blob->lib_index, 1);
    EXPECT_EQ(blob->executable_index, 0);
    EXPECT_EQ(blob->Children(0), std::vector<uint64_t>{1});
    auto root = RootExecutable(*blob);
    ASSERT_TRUE(root.ok());
    // The payload starts with VM magic V2 (TVM 0.23+).
    ASSERT_GE((*root)->payload_size, 8u);
    EXPECT_EQ((*root)->payload, Bytes(bytes) + (*root)->payload_offset);
    EXPECT_EQ((*root)->payload[0], 0x1e);
    EXPECT_EQ((*root)->payload[7], 0xd2);
  }
}

TEST(LibraryBlobTest, ReadsHandBuiltContainersOfEveryGeneration) {
  const std::string payload = FixtureExecutable::Small(true, false).Serialize();
  auto tree_first = Parse(testing::WrapTreeFirst(payload));
  ASSERT_TRUE(tree_first.ok()) << tree_first.status().ToString();
  EXPECT_EQ(tree_first->modules[0].payload_size, payload.size());
  // prefix 8 + indptr (8 + 24) + child_indices (8 + 8) + kind (8 + 18) + length (8): payload at 90.
  EXPECT_EQ(tree_first->modules[0].payload_offset, 90u);

  for (const char* symbol : {keys::kSymbolDevMblob, keys::kSymbolFfiLibraryBin}) {
    SCOPED_TRACE(symbol);
    const std::string legacy = testing::WrapLegacy(payload, "relax.Executable");
    auto blob = Parse(legacy, symbol);
    ASSERT_TRUE(blob.ok()) << blob.status().ToString();
    ASSERT_EQ(blob->modules.size(), 2u);
    EXPECT_EQ(blob->modules[0].type_key, "relax.Executable");
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(blob->modules[0].payload), blob->modules[0].payload_size),
              payload);
    EXPECT_TRUE(blob->has_import_tree);
    EXPECT_EQ(blob->lib_index, 1);
    EXPECT_TRUE(RootExecutable(*blob).ok());
  }
  // A container of one generation is not readable as another.
  EXPECT_FALSE(Parse(testing::WrapLegacy(payload), keys::kSymbolFfiLibraryBinV22).ok());
  EXPECT_FALSE(Parse(testing::WrapTreeFirst(payload), keys::kSymbolDevMblob).ok());
}

TEST(LibraryBlobTest, EveryTruncationOfARealBlobIsRefused) {
  const std::string bytes = RealBlob("mlp");
  for (size_t cut = 0; cut < bytes.size(); cut += (cut < 200 ? 1 : 97)) {
    std::string truncated = bytes.substr(0, cut);
    if (cut >= 8) {  // keep the prefix consistent so the walk itself meets the end
      BinaryWriter w;
      w.WriteU64(cut - 8);
      truncated.replace(0, 8, w.bytes());
    }
    auto blob = Parse(truncated);
    EXPECT_FALSE(blob.ok()) << "cut at " << cut;
    if (!blob.ok()) {
      EXPECT_EQ(blob.status().code(), StatusCode::kDataLoss) << blob.status().ToString();
    }
  }
}

TEST(LibraryBlobTest, RefusesMalformedContainersWithOffsets) {
  const std::string payload = FixtureExecutable::Small(true, false).Serialize();
  const std::string good = testing::WrapTreeFirst(payload);

  std::string bad_prefix = good;
  bad_prefix[0] = static_cast<char>(bad_prefix[0] + 1);
  EXPECT_ERROR(Parse(bad_prefix).status(), StatusCode::kDataLoss, "__tvm_ffi__library_bin", "length prefix");

  std::string bad_child = good;  // child_indices[0] at 8 + 32 + 8
  bad_child[48] = 5;
  EXPECT_ERROR(Parse(bad_child).status(), StatusCode::kDataLoss, "imports module 5, out of range");

  std::string self_import = good;
  self_import[48] = 0;
  EXPECT_ERROR(Parse(self_import).status(), StatusCode::kDataLoss, "imports itself");

  std::string long_payload = good;  // the payload length at byte 82
  long_payload[82 + 4] = 1;
  EXPECT_ERROR(Parse(long_payload).status(), StatusCode::kDataLoss, "byte 82", "payload length",
               "module 0 ('relax.VMExecutable'");

  std::string trailing = good + "xx";
  BinaryWriter w;
  w.WriteU64(trailing.size() - 8);
  trailing.replace(0, 8, w.bytes());
  EXPECT_ERROR(Parse(trailing).status(), StatusCode::kDataLoss, "2 trailing bytes");

  BinaryWriter empty_tree;
  empty_tree.WriteU64(16);
  empty_tree.WriteU64Vector({});
  empty_tree.WriteU64Vector({});
  EXPECT_ERROR(Parse(empty_tree.bytes()).status(), StatusCode::kDataLoss, "indptr is empty");

  EXPECT_ERROR(Parse(std::string("\x01\x00", 2)).status(), StatusCode::kDataLoss, "fewer than the 8-byte");
}

TEST(LibraryBlobTest, LegacyLayoutNeedsAParserForOtherPayloads) {
  BinaryWriter w;
  w.WriteU64(0);
  w.WriteU64(1);
  w.WriteString("cuda");
  w.WriteString("ptx");
  w.PatchU64(0, w.bytes().size() - 8);
  auto blob = Parse(w.bytes(), keys::kSymbolDevMblob);
  EXPECT_ERROR(blob.status(), StatusCode::kUnimplemented, "'cuda' payload", "entry 0");
  auto handled = ParseLibraryBlob(Bytes(w.bytes()), w.bytes().size(), keys::kSymbolDevMblob,
                                  [](size_t, const std::string&, BinaryReader& r) {
                                    std::string fmt;
                                    return r.ReadString(&fmt);
                                  });
  ASSERT_TRUE(handled.ok()) << handled.status().ToString();
  EXPECT_EQ(handled->modules[0].type_key, "cuda");
  EXPECT_EQ(handled->executable_index, -1);
  EXPECT_ERROR(RootExecutable(*handled).status(), StatusCode::kNotFound, "'cuda'", "not a Relax VM executable");
}

TEST(LibraryBlobTest, RefusesASecondLibAndAGraphExecutorRoot) {
  BinaryWriter w;
  w.WriteU64(0);
  w.WriteU64Vector({0, 1, 1, 1});
  w.WriteU64Vector({1});
  w.WriteString("relax.VMExecutable");
  w.WriteString("x");
  w.WriteString("_lib");
  w.WriteString("_lib");
  w.PatchU64(0, w.bytes().size() - 8);
  EXPECT_ERROR(Parse(w.bytes()).status(), StatusCode::kDataLoss, "second _lib", "module 2");
}

}  // namespace
}  // namespace relax
}  // namespace sorun
