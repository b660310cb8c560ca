#include "graph_executor/graph_json.h"

#include <gtest/gtest.h>

#include <string>

#include "graph_executor/graph_builder.h"
#include "runtime/data_type.h"

namespace sorun {
namespace {

// A small valid graph in TVM's exact layout (string attrs, 3-element refs, device_index).
const char kValid[] = R"({
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "p0", "inputs": []},
    {"op": "tvm_op", "name": "dense0", "attrs": {"func_name": "sorun_dense", "num_inputs": "2",
      "num_outputs": "1", "flatten_data": "0", "hash": "abc"}, "inputs": [[0, 0, 0], [1, 0, 0]]},
    {"op": "tvm_op", "name": "reshape_nop", "attrs": {"func_name": "__nop", "num_inputs": "1",
      "num_outputs": "1", "flatten_data": "0"}, "inputs": [[2, 0, 0]]}
  ],
  "arg_nodes": [0, 1],
  "heads": [[3, 0, 0]],
  "attrs": {
    "dltype": ["list_str", ["float32", "float32", "float32", "float32"]],
    "storage_id": ["list_int", [0, 1, 2, 2]],
    "shape": ["list_shape", [[1, 4], [3, 4], [1, 3], [3]]],
    "device_index": ["list_int", [1, 1, 1, 1]]
  },
  "node_row_ptr": [0, 1, 2, 3, 4]
})";

TEST(GraphJsonTest, ParsesTvmLayout) {
  auto g = GraphSpec::Parse(kValid);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->nodes.size(), 4u);
  EXPECT_EQ(g->num_entries(), 4u);
  EXPECT_EQ(g->nodes[2].func_name, "sorun_dense");
  EXPECT_EQ(g->nodes[2].num_inputs, 2u);
  EXPECT_EQ(g->nodes[2].extra_attrs.size(), 1u);
  EXPECT_EQ(g->heads[0].node_id, 3u);
  EXPECT_EQ(g->device_index.size(), 4u);
  EXPECT_EQ(g->EntryBytes(1), 48u);
  // Round trip through ToJson.
  auto again = GraphSpec::Parse(g->ToJson());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->ToJson(), g->ToJson());
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  size_t pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) s.replace(pos, from.size(), to);
  return s;
}

struct BadCase {
  const char* label;
  std::string json;
  const char* expected;  // substring of the message
};

TEST(GraphJsonTest, EveryInconsistencyIsAnErrorNamingTheCause) {
  const std::string v = kValid;
  const BadCase cases[] = {
      {"syntax", "{\"nodes\": [", "syntax error at byte"},
      {"not object", "[1, 2]", "top level is not an object"},
      {"unknown top key", Replace(v, "\"arg_nodes\"", "\"bogus\": 1, \"arg_nodes\""), "key 'bogus' is not supported"},
      {"missing heads", Replace(v, "\"heads\": [[3, 0, 0]],", ""), "missing required key 'heads'"},
      {"bad op", Replace(v, "\"op\": \"tvm_op\", \"name\": \"dense0\"", "\"op\": \"conv\", \"name\": \"dense0\""),
       "node 2 ('dense0'): op 'conv' is not supported"},
      {"numeric attr", Replace(v, "\"num_inputs\": \"2\"", "\"num_inputs\": 2"),
       "node 2 ('dense0'): attribute 'num_inputs' must be a string"},
      {"missing func_name", Replace(v, "\"func_name\": \"sorun_dense\", ", ""),
       "node 2 ('dense0'): tvm_op needs attribute 'func_name'"},
      {"num_inputs mismatch", Replace(v, "\"num_inputs\": \"2\"", "\"num_inputs\": \"3\""),
       "num_inputs is 3 but the node lists 2 inputs"},
      {"bad flatten", Replace(v, "\"flatten_data\": \"0\", \"hash\"", "\"flatten_data\": \"yes\", \"hash\""),
       "attribute 'flatten_data' must be"},
      {"input out of range", Replace(v, "[[0, 0, 0], [1, 0, 0]]", "[[0, 0, 0], [9, 0, 0]]"),
       "node 2 ('dense0') input 1 refers to node 9, out of range"},
      {"not topological", Replace(v, "[[0, 0, 0], [1, 0, 0]]", "[[0, 0, 0], [3, 0, 0]]"), "does not come before it"},
      {"output index", Replace(v, "[[0, 0, 0], [1, 0, 0]]", "[[0, 0, 0], [1, 2, 0]]"), "refers to output 2"},
      {"negative ref", Replace(v, "[[0, 0, 0], [1, 0, 0]]", "[[0, 0, 0], [-1, 0, 0]]"),
       "entries must be non-negative integers"},
      {"row_ptr length", Replace(v, "[0, 1, 2, 3, 4]", "[0, 1, 2, 3]"), "node_row_ptr has 4 entries, expected 5"},
      {"row_ptr outputs", Replace(v, "[0, 1, 2, 3, 4]", "[0, 1, 2, 4, 5]"),
       "node_row_ptr gives node 2 ('dense0') 2 outputs"},
      {"dltype length", Replace(v, "[\"float32\", \"float32\", \"float32\", \"float32\"]", "[\"float32\"]"),
       "attrs 'dltype' has 1 entries, expected 4"},
      {"unknown dtype",
       Replace(v, "[\"float32\", \"float32\", \"float32\", \"float32\"]",
               "[\"float32\", \"float33\", \"float32\", \"float32\"]"),
       "attrs 'dltype' entry 1: unknown dtype 'float33'"},
      {"negative shape", Replace(v, "[[1, 4], [3, 4]", "[[1, -4], [3, 4]"), "attrs 'shape' entry 0 dimension 1"},
      {"shape length", Replace(v, "[[1, 4], [3, 4], [1, 3], [3]]", "[[1, 4]]"), "attrs 'shape' has 1 entries"},
      {"negative storage", Replace(v, "[0, 1, 2, 2]", "[0, -1, 2, 2]"), "attrs 'storage_id' entry 1 is negative"},
      {"device_index length", Replace(v, "[1, 1, 1, 1]", "[1, 1]"), "attrs 'device_index' has 2 entries"},
      {"device_index type", Replace(v, "[1, 1, 1, 1]", "[1, 0, 1, 1]"),
       "attrs 'device_index' entry 1 is not a device type"},
      {"attr tag", Replace(v, "[\"list_int\", [0, 1, 2, 2]]", "[\"list_str\", [0, 1, 2, 2]]"),
       "attrs 'storage_id' has type 'list_str', expected 'list_int'"},
      {"unskippable attr", Replace(v, "\"device_index\"", "\"weird\": [\"list_float\", [1.0]], \"device_index\""),
       "cannot skip graph attr 'weird'"},
      {"arg node out of range", Replace(v, "\"arg_nodes\": [0, 1]", "\"arg_nodes\": [0, 7]"),
       "arg_nodes[1] = 7 is out of range"},
      {"arg node is op", Replace(v, "\"arg_nodes\": [0, 1]", "\"arg_nodes\": [0, 2]"),
       "arg_nodes[1] is node 2 ('dense0')"},
      {"arg node twice", Replace(v, "\"arg_nodes\": [0, 1]", "\"arg_nodes\": [0, 0]"),
       "arg_nodes lists node 0 ('data') twice"},
      {"bad head", Replace(v, "\"heads\": [[3, 0, 0]]", "\"heads\": [[3, 1, 0]]"),
       "heads[0] refers to a missing node output"},
      {"no heads", Replace(v, "\"heads\": [[3, 0, 0]]", "\"heads\": []"), "the graph has no outputs"},
      {"nop storage", Replace(v, "[0, 1, 2, 2]", "[0, 1, 2, 3]"), "__nop output must share storage"},
      {"input with inputs",
       Replace(v, "{\"op\": \"null\", \"name\": \"p0\", \"inputs\": []}",
               "{\"op\": \"null\", \"name\": \"p0\", \"inputs\": [[0, 0]]}"),
       "node 1 ('p0'): an input node ('null' op) cannot have inputs"},
      {"unknown node key", Replace(v, "\"name\": \"p0\",", "\"name\": \"p0\", \"color\": \"red\","),
       "node 1: unsupported key 'color'"},
      {"overflowing shape", Replace(v, "[[1, 4], [3, 4]", "[[1, 4], [3037000500, 3037000500]"), "entry 1"},
      // Duplicate keys: TVM's reader keeps the last one, RapidJSON both; a second "heads" appended outputs.
      {"duplicate heads", Replace(v, "\"heads\": [[3, 0, 0]],", "\"heads\": [[3, 0, 0]], \"heads\": [[2, 0, 0]],"),
       "graph JSON: top level: key 'heads' appears twice"},
      {"duplicate node key", Replace(v, "\"name\": \"p0\",", "\"name\": \"p0\", \"name\": \"p1\","),
       "graph JSON: node 1: key 'name' appears twice"},
      {"duplicate node attr",
       Replace(v, "\"func_name\": \"sorun_dense\",", "\"func_name\": \"sorun_dense\", \"func_name\": \"sorun_relu\","),
       "graph JSON: node 2 ('dense0') attrs: key 'func_name' appears twice"},
      {"duplicate graph attr",
       Replace(v, "\"device_index\"", "\"storage_id\": [\"list_int\", [0, 1, 2, 2]], \"device_index\""),
       "graph JSON: 'attrs': key 'storage_id' appears twice"},
      {"attrs and attr", Replace(v, "\"inputs\": [[2, 0, 0]]", "\"inputs\": [[2, 0, 0]], \"attr\": {}"),
       "graph JSON: node 3: has both 'attrs' and 'attr'"},
  };
  for (const BadCase& c : cases) {
    auto g = GraphSpec::Parse(c.json);
    ASSERT_FALSE(g.ok()) << c.label;
    EXPECT_EQ(g.status().code(), StatusCode::kDataLoss) << c.label;
    EXPECT_NE(g.status().message().find(c.expected), std::string::npos)
        << c.label << ": got '" << g.status().message() << "'";
  }
}

TEST(GraphJsonTest, MetadataKeyIsIgnoredAndAttrIsAccepted) {
  std::string v = kValid;
  v = Replace(v, "\"arg_nodes\"", "\"metadata\": {\"x\": 1}, \"arg_nodes\"");
  v = Replace(v, "\"attrs\": {\"func_name\": \"__nop\"", "\"attr\": {\"func_name\": \"__nop\"");
  auto g = GraphSpec::Parse(v);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
}

TEST(GraphJsonTest, DeeplyNestedJsonIsAnErrorNotAStackOverflow) {
  // 200 KB of '[' overflowed the stack of the recursive parser
  // (tests/fuzz/regressions/graph_json_fuzzer/deep_nesting_stack_overflow.json).
  std::string json = "{\"nodes\": " + std::string(2000000, '[');
  auto g = GraphSpec::Parse(json);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(g.status().message().find("syntax error"), std::string::npos) << g.status().ToString();
  // Deep but well-formed nesting under an ignored key parses.
  std::string valid(kValid);
  valid.insert(valid.rfind('}'), ", \"metadata\": " + std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_TRUE(GraphSpec::Parse(valid).ok());
}

TEST(GraphBuilderTest, ReusesDeadIntermediateStorage) {
  GraphBuilder b;
  int x = b.Input("x", {1, 8});
  int a = b.Op("sorun_relu", {x}, {1, 8});
  int c = b.Op("sorun_relu", {a}, {1, 8});
  int d = b.Op("sorun_relu", {c}, {1, 8});  // may reuse a's storage (a is dead)
  b.Output(d);
  auto g = b.Build();
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->storage_id[static_cast<size_t>(d)], g->storage_id[static_cast<size_t>(a)]);
  EXPECT_NE(g->storage_id[static_cast<size_t>(c)], g->storage_id[static_cast<size_t>(a)]);
  EXPECT_NE(g->storage_id[static_cast<size_t>(x)], g->storage_id[static_cast<size_t>(a)]);
}

}  // namespace
}  // namespace sorun
