// The blob format at the byte level: blobs assembled by hand straight from docs/spec/FORMAT.md section 2
// (independent of the serializer), the serializer's output for several trees, and a catalogue of
// corruptions, each rejected with a message naming the cause and the byte offset.
#include "serialization/module_blob.h"

#include <gtest/gtest.h>

#include "format/binary_writer.h"
#include "packer/host_code_module.h"
#include "packer/module_serializer.h"
#include "tests/util/test_module.h"

namespace sorun {
namespace {

using testing::MakeTestValue;

// Little-endian byte assembly, independent of BinaryWriter.
struct Bytes {
  std::string s;
  Bytes& U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return *this;
  }
  Bytes& I64(int64_t v) { return U64(static_cast<uint64_t>(v)); }
  Bytes& Str(const std::string& v) {
    U64(v.size());
    s += v;
    return *this;
  }
  Bytes& U64s(const std::vector<uint64_t>& v) {
    U64(v.size());
    for (uint64_t x : v) U64(x);
    return *this;
  }
  Bytes& TestValue(const std::string& name, int64_t v) { return Str("sorun_test_value").Str(name).I64(v); }
};

// Reads "sorun_test_value" payloads; anything else is unknown.
Status Handler(size_t, const std::string& key, BinaryReader& r) {
  if (key != "sorun_test_value") return NotFound("no loader for '" + key + "'");
  std::string name;
  int64_t v;
  SORUN_RETURN_IF_ERROR(r.ReadString(&name));
  return r.ReadI64(&v);
}

Status Parse(const std::string& payload, BlobLayout* layout) {
  BinaryReader r(reinterpret_cast<const uint8_t*>(payload.data()), payload.size(), "blob", 8);
  return ParseModuleBlob(r, Handler, layout);
}

TEST(ModuleBlobTest, ParsesTheSpecLayout) {
  // root value(0) -> _lib -> {value(2), value(3)}: count = 4 modules + 1.
  Bytes b;
  b.U64(5).TestValue("root", 10).Str("_lib").TestValue("a", 1).TestValue("b", 2);
  b.Str("_import_tree").U64s({0, 1, 3, 3, 3}).U64s({1, 2, 3});
  BlobLayout layout;
  Status s = Parse(b.s, &layout);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(layout.modules.size(), 4u);
  EXPECT_EQ(layout.lib_index, 1);
  EXPECT_TRUE(layout.has_import_tree);
  EXPECT_EQ(layout.Children(1), (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(layout.modules[0].key_offset, 16u);  // after the 8-byte prefix and the count
  EXPECT_EQ(layout.modules[0].payload_size, 8u + 4 + 8);
  EXPECT_EQ(layout.modules[1].payload_size, 0u);
}

TEST(ModuleBlobTest, LegacyLayoutHasNoTree) {
  Bytes b;
  b.U64(2).TestValue("a", 1).TestValue("b", 2);
  BlobLayout layout;
  ASSERT_TRUE(Parse(b.s, &layout).ok());
  EXPECT_FALSE(layout.has_import_tree);
  EXPECT_EQ(layout.modules.size(), 2u);
  EXPECT_TRUE(layout.Children(0).empty());
}

TEST(ModuleBlobTest, PrefixIsCheckedAgainstTheSymbolSize) {
  const uint8_t blob[16] = {100, 0, 0, 0, 0, 0, 0, 0};
  auto n = ReadBlobPrefix(blob, 16, "m.so: __tvm_dev_mblob");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().message(),
            "m.so: __tvm_dev_mblob byte 0: length prefix claims 100 payload bytes but the symbol holds only 8");
  EXPECT_FALSE(ReadBlobPrefix(blob, 4, "x").ok());
  EXPECT_EQ(*ReadBlobPrefix(blob, 0, "x"), 100u);  // size unknown: trust the prefix
}

struct Corruption {
  const char* label;
  std::string payload;
  const char* expected;
};

TEST(ModuleBlobTest, CorruptionsAreErrorsWithOffsets) {
  auto tree = [](std::vector<uint64_t> row_ptr, std::vector<uint64_t> child) {
    Bytes b;
    b.U64(4).TestValue("r", 0).Str("_lib").TestValue("c", 1).Str("_import_tree").U64s(row_ptr).U64s(child);
    return b.s;
  };
  Bytes good;
  good.U64(4).TestValue("r", 0).Str("_lib").TestValue("c", 1).Str("_import_tree").U64s({0, 1, 2, 2}).U64s({1, 2});
  const Corruption cases[] = {
      {"empty", "", "blob byte 8: truncated: u64 needs 8 bytes but only 0 remain"},
      {"absurd count", Bytes().U64(1ull << 60).s, "blob byte 8: entry count 1152921504606846976 is impossible"},
      {"count past entries", Bytes().U64(3).TestValue("a", 1).s, "entry 1: blob byte 57: truncated: type key"},
      {"key length past end", Bytes().U64(1).U64(1000).s, "type key length 1000 exceeds the 0 bytes left"},
      {"truncated payload", good.s.substr(0, 45), "truncated"},
      {"unknown type key", Bytes().U64(1).Str("mystery").U64(7).s,
       "entry 0 ('mystery', type key at byte 16): no loader for 'mystery'"},
      {"empty type key", Bytes().U64(1).Str("").s, "entry 0 has an empty type key"},
      {"trailing bytes", good.s + "xyz", "3 trailing bytes after the 4 entries"},
      {"two _lib", Bytes().U64(3).Str("_lib").Str("_lib").Str("_import_tree").U64s({0, 1, 1}).U64s({1}).s,
       "multiple DSO modules (_lib entries 0 and 1)"},
      {"two trees", good.s.substr(0, good.s.size()) + "", ""},
      {"_lib without tree", Bytes().U64(1).Str("_lib").s, "_lib entry but no _import_tree"},
      {"row_ptr short", tree({0, 1, 2}, {1, 2}), "row_ptr has 3 entries, expected 4"},
      {"row_ptr start", tree({1, 1, 2, 2}, {1, 2}), "row_ptr[0] is 1, expected 0"},
      {"row_ptr decreasing", tree({0, 2, 1, 2}, {1, 2}), "row_ptr is not monotonic: row_ptr[2] = 1 < row_ptr[1] = 2"},
      {"row_ptr end", tree({0, 1, 2, 3}, {1, 2}), "row_ptr ends at 3 but there are 2 child indices"},
      {"child out of range", tree({0, 1, 2, 2}, {1, 7}), "module 1 imports module 7, out of range (3 modules)"},
      {"self import", tree({0, 1, 2, 2}, {1, 1}), "module 1 imports itself"},
      {"duplicate child", tree({0, 2, 2, 2}, {1, 1}), "module 0 imports module 1 twice"},
      {"cycle", tree({0, 1, 2, 3}, {1, 2, 1}), "import cycle: module 2 imports its ancestor module 1"},
      {"unreachable", tree({0, 1, 1, 1}, {1}), "module 2 ('sorun_test_value') is not reachable from the root module 0"},
      {"huge row_ptr", Bytes().U64(2).TestValue("r", 0).Str("_import_tree").U64(1ull << 61).s, "row_ptr count"},
  };
  for (const Corruption& c : cases) {
    if (std::string(c.label) == "two trees") continue;
    BlobLayout layout;
    Status s = Parse(c.payload, &layout);
    ASSERT_FALSE(s.ok()) << c.label;
    EXPECT_NE(s.message().find(c.expected), std::string::npos) << c.label << ": " << s.message();
  }
  Bytes two;
  two.U64(3).TestValue("r", 0).Str("_import_tree").U64s({0, 0}).U64s({}).Str("_import_tree").U64s({0, 0}).U64s({});
  BlobLayout layout;
  Status s = Parse(two.s, &layout);
  EXPECT_NE(s.message().find("second _import_tree entry"), std::string::npos) << s.message();
}

TEST(ModuleBlobTest, EveryTruncationOfAGoodBlobFails) {
  Bytes good;
  good.U64(4).TestValue("r", 0).Str("_lib").TestValue("c", 1).Str("_import_tree").U64s({0, 1, 2, 2}).U64s({1, 2});
  for (size_t cut = 0; cut < good.s.size(); ++cut) {
    BlobLayout layout;
    Status s = Parse(good.s.substr(0, cut), &layout);
    EXPECT_FALSE(s.ok()) << "cut " << cut;
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << "cut " << cut << ": " << s.ToString();
  }
}

// ---- serializer ----

Module Host() { return MakeHostCodeModule(HostCode{{"unused.c"}, {}, {}}); }

TEST(ModuleSerializerTest, GraphLibDeviceTreeMatchesTvmLayout) {
  // root -> host -> {a, b}: TVM's CUDA example shape (count 4 + tree [0,1,3,3,3]).
  Module root = MakeTestValue("root", 0);
  Module host = Host();
  Module a = MakeTestValue("a", 1);
  Module b = MakeTestValue("b", 2);
  ASSERT_TRUE(host.Import(a).ok());
  ASSERT_TRUE(host.Import(b).ok());
  ASSERT_TRUE(root.Import(host).ok());
  auto tree = SerializeModuleTree(root);
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  EXPECT_TRUE(tree->has_import_tree);
  EXPECT_EQ(tree->type_keys,
            (std::vector<std::string>{"sorun_test_value", "_lib", "sorun_test_value", "sorun_test_value"}));
  EXPECT_EQ(tree->row_ptr, (std::vector<uint64_t>{0, 1, 3, 3, 3}));
  EXPECT_EQ(tree->child_indices, (std::vector<uint64_t>{1, 2, 3}));
  // Byte-identical to a hand-assembled blob; phase-1 DFS pops imports in reverse order, so b gets
  // index 2 and a index 3.
  Bytes expected;
  expected.U64(5).TestValue("root", 0).Str("_lib").TestValue("b", 2).TestValue("a", 1);
  expected.Str("_import_tree").U64s({0, 1, 3, 3, 3}).U64s({1, 2, 3});
  EXPECT_EQ(tree->payload, expected.s);
  BlobLayout layout;
  EXPECT_TRUE(Parse(tree->payload, &layout).ok());
}

TEST(ModuleSerializerTest, LoneHostLibraryHasNoTree) {
  auto tree = SerializeModuleTree(Host());
  ASSERT_TRUE(tree.ok());
  EXPECT_FALSE(tree->has_import_tree);
  EXPECT_EQ(tree->payload, Bytes().U64(0).s);
}

TEST(ModuleSerializerTest, DsoModulesMergeIntoOneLibGroup) {
  // root -> host1 -> host2 -> a : both hosts become one "_lib".
  Module root = MakeTestValue("root", 0);
  Module h1 = Host(), h2 = Host();
  Module a = MakeTestValue("a", 1);
  ASSERT_TRUE(h2.Import(a).ok());
  ASSERT_TRUE(h1.Import(h2).ok());
  ASSERT_TRUE(root.Import(h1).ok());
  auto tree = SerializeModuleTree(root);
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  EXPECT_EQ(tree->type_keys, (std::vector<std::string>{"sorun_test_value", "_lib", "sorun_test_value"}));
  EXPECT_EQ(tree->dso_modules.size(), 2u);
  EXPECT_EQ(tree->row_ptr, (std::vector<uint64_t>{0, 1, 2, 2}));
}

TEST(ModuleSerializerTest, RefusesDsoGroupsThatWouldFormACycle) {
  // host1 -> value -> host2: merging host1 and host2 makes value both child and parent of _lib.
  Module h1 = Host(), h2 = Host();
  Module v = MakeTestValue("v", 1);
  ASSERT_TRUE(v.Import(h2).ok());
  ASSERT_TRUE(h1.Import(v).ok());
  Module root = MakeTestValue("root", 0);
  ASSERT_TRUE(root.Import(h1).ok());
  auto tree = SerializeModuleTree(root);
  ASSERT_FALSE(tree.ok());
  EXPECT_NE(tree.status().message().find("cannot be merged into one library without creating a cycle"),
            std::string::npos)
      << tree.status().message();
}

TEST(ModuleSerializerTest, RefusesModulesThatCannotBeSerialized) {
  class Opaque : public ModuleNode {
    const char* type_key() const override { return "opaque"; }
    PackedFunc GetFunction(std::string_view, const ObjectPtr<ModuleNode>&) override { return PackedFunc(); }
  };
  Module root = MakeTestValue("root", 0);
  ASSERT_TRUE(root.Import(Module(ObjectPtr<ModuleNode>(MakeObject<Opaque>()))).ok());
  auto tree = SerializeModuleTree(root);
  ASSERT_FALSE(tree.ok());
  EXPECT_NE(tree.status().message().find("module 'opaque' is not binary-serializable"), std::string::npos);
}

}  // namespace
}  // namespace sorun
