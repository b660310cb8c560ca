// ValidateExecutionPlan (through GraphSpec::Parse, its caller): inputs, names, __nop aliasing and the
// liveness of storage plans. Plans that reuse storage between values whose lives do not overlap (what
// TVM's planner and GraphBuilder produce) are accepted; every overlap is refused naming both entries.
#include "graph_executor/plan_validation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "graph_executor/graph_builder.h"
#include "graph_executor/graph_json.h"
#include "runtime/data_type.h"

namespace sorun {
namespace {

// Writes graphs by hand (any plan, valid or not): every entry is float32[elems].
class Plan {
 public:
  int In(const std::string& name, int64_t elems = 4) { return Add("null", name, "", {}, 1, elems); }
  int Op(const std::string& name, std::vector<int> inputs, uint32_t outputs = 1, int64_t elems = 4) {
    return Add("tvm_op", name, "k_" + name, std::move(inputs), outputs, elems);
  }
  int Nop(const std::string& name, int input, int64_t elems = 4) {
    return Add("tvm_op", name, "__nop", {input}, 1, elems);
  }
  int Nop2(const std::string& name, int a, int b) { return Add("tvm_op", name, "__nop", {a, b}, 1, 4); }
  void Head(int node, uint32_t index = 0) { g_.heads.push_back(GraphEntryRef{static_cast<uint32_t>(node), index, 0}); }
  void NotAnArg(int node) {
    auto& a = g_.arg_nodes;
    a.erase(std::remove(a.begin(), a.end(), static_cast<uint32_t>(node)), a.end());
  }
  // The JSON with storage ids `sids`, one per entry in entry order.
  std::string Json(const std::vector<int64_t>& sids) const {
    GraphSpec g = g_;
    g.storage_id = sids;
    return g.ToJson();
  }
  StatusOr<GraphSpec> Parse(const std::vector<int64_t>& sids) const { return GraphSpec::Parse(Json(sids)); }

 private:
  int Add(const std::string& op, const std::string& name, const std::string& func, std::vector<int> inputs,
          uint32_t outputs, int64_t elems) {
    GraphNode n;
    n.op = op;
    n.name = name;
    n.func_name = func;
    for (int in : inputs) n.inputs.push_back(GraphEntryRef{static_cast<uint32_t>(in), 0, 0});
    n.num_inputs = static_cast<uint32_t>(inputs.size());
    n.num_outputs = outputs;
    const int id = static_cast<int>(g_.nodes.size());
    g_.nodes.push_back(n);
    if (op == "null") g_.arg_nodes.push_back(static_cast<uint32_t>(id));
    if (g_.node_row_ptr.empty()) g_.node_row_ptr.push_back(0);
    g_.node_row_ptr.push_back(g_.node_row_ptr.back() + outputs);
    for (uint32_t k = 0; k < outputs; ++k) {
      g_.dltype.push_back(Float32());
      g_.shape.push_back({elems});
    }
    return id;
  }
  GraphSpec g_;
};

void ExpectRefused(const StatusOr<GraphSpec>& g, const std::string& expected) {
  ASSERT_FALSE(g.ok()) << "accepted; expected: " << expected;
  EXPECT_EQ(g.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(g.status().message().find(expected), std::string::npos) << g.status().message();
}

// x -> a -> b -> c -> d (head): a and c are dead when c and d are written.
Plan Chain() {
  Plan p;
  int x = p.In("x");
  int a = p.Op("a", {x});
  int b = p.Op("b", {a});
  int c = p.Op("c", {b});
  int d = p.Op("d", {c});
  p.Head(d);
  return p;
}

TEST(PlanValidationTest, ReusedStorageWithDisjointLifetimesIsAccepted) {
  // a (written 1, last read 2) and c (written 3); b (2..3) and d (4..end).
  auto g = Chain().Parse({0, 1, 2, 1, 2});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_TRUE(ValidateExecutionPlan(*g).ok());
  // An output nobody reads is alive only while its node runs: the next node may take its storage.
  Plan q;
  int x = q.In("x");
  int dead = q.Op("dead", {x});
  int y = q.Op("y", {x});
  q.Head(y);
  (void)dead;
  EXPECT_TRUE(q.Parse({0, 1, 1}).ok()) << q.Parse({0, 1, 1}).status().ToString();
  // The same entry listed twice as an output is one value.
  Plan r;
  int in = r.In("x");
  int o = r.Op("o", {in});
  r.Head(o);
  r.Head(o);
  EXPECT_TRUE(r.Parse({0, 1}).ok());
}

TEST(PlanValidationTest, NopAliasesLiveUntilTheLastReaderOfAnyAlias) {
  // x; a; r = nop(a); b reads r; c reads b and may reuse a's storage: the alias group died at node 3.
  Plan p;
  int x = p.In("x");
  int a = p.Op("a", {x});
  int r = p.Nop("r", a);
  int b = p.Op("b", {r});
  int c = p.Op("c", {b});
  p.Head(c);
  auto ok = p.Parse({0, 1, 1, 2, 1});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  // The same storage written at node 3 while r (a's alias) is still read by node 4.
  Plan q;
  x = q.In("x");
  a = q.Op("a", {x});
  r = q.Nop("r", a);
  b = q.Op("b", {x});
  c = q.Op("c", {r, b});
  q.Head(c);
  ExpectRefused(q.Parse({0, 1, 1, 1, 2}),
                "storage id 1 is shared by entry 1 (node 1 'a') and entry 3 (node 3 'b') which are alive at the same "
                "time (node 3 'b' runs while node 1 'a''s value is still read by node 4 'c')");
}

TEST(PlanValidationTest, GraphBuilderPlansAreAccepted) {
  // Diamond, a nop chain and two outputs: the builder plans like TVM and validates through Parse.
  GraphBuilder b;
  int x = b.Input("x", {1, 8});
  int w = b.Input("w", {8, 8});
  int l = b.Op("sorun_relu", {x}, {1, 8});
  int r = b.Op("sorun_dense", {x, w}, {1, 8});
  int s = b.Op("sorun_add", {l, r}, {1, 8});
  int n1 = b.Reshape(s, {8});
  int n2 = b.Reshape(n1, {2, 4});
  int t = b.Op("sorun_relu", {n2}, {2, 4});
  int u = b.Op("sorun_relu", {t}, {2, 4});
  int v = b.Op("sorun_relu", {u}, {2, 4});
  b.Output(v);
  b.Output(t);
  auto g = b.Build();
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->storage_id[static_cast<size_t>(n2)], g->storage_id[static_cast<size_t>(s)]);
  EXPECT_TRUE(ValidateExecutionPlan(*g).ok());
}

TEST(PlanValidationTest, OverlappingLivesAreRefusedNamingBothEntries) {
  // Two inputs (a param and a data input) in one storage.
  Plan p;
  int x = p.In("x");
  int w = p.In("w");
  int y = p.Op("y", {x, w});
  p.Head(y);
  ExpectRefused(p.Parse({0, 0, 1}),
                "storage id 0 is shared by entry 0 (node 0 'x', input) and entry 1 (node 1 'w', input) which are "
                "alive at the same time (both are inputs, which keep their values for every run)");
  // An input overwritten after its last reader: the next run would read garbage.
  ExpectRefused(Chain().Parse({1, 2, 3, 1, 2}),
                "storage id 1 is shared by entry 0 (node 0 'x', input) and entry 3 (node 3 'c') which are alive at "
                "the same time (node 3 'c' writes entry 3 while input 'x' must keep its value for every run)");
  // An operator writing into its own input's storage (in place): alive together while it runs.
  ExpectRefused(Chain().Parse({0, 1, 1, 2, 3}),
                "(node 2 'b' runs while node 1 'a''s value is still read by node 2 'b')");
  // Two outputs in one storage: the first is overwritten before the run ends.
  Plan q;
  x = q.In("x");
  int o1 = q.Op("o1", {x});
  int o2 = q.Op("o2", {x});
  q.Head(o1);
  q.Head(o2);
  ExpectRefused(q.Parse({0, 1, 1}),
                "storage id 1 is shared by entry 1 (node 1 'o1') and entry 2 (node 2 'o2') which are alive at the "
                "same time (node 2 'o2' writes entry 2 after node 1 'o1' wrote graph output 0, which must keep its "
                "value until the run ends)");
  // Two outputs of one node.
  Plan m;
  x = m.In("x");
  int two = m.Op("two", {x}, 2);
  m.Head(two, 0);
  m.Head(two, 1);
  ExpectRefused(m.Parse({0, 1, 1}),
                "entry 1 (node 1 'two' output 0) and entry 2 (node 1 'two' output 1) which are "
                "alive at the same time (node 1 'two' writes both)");
}

TEST(PlanValidationTest, InputsAndNamesMustBeUnambiguous) {
  Plan p;
  int x = p.In("x");
  int orphan = p.In("orphan");
  int y = p.Op("y", {x, orphan});
  p.Head(y);
  p.NotAnArg(orphan);
  ExpectRefused(
      p.Parse({0, 1, 2}),
      "node 1 ('orphan') is an input ('null' op) but arg_nodes does not list it, so nothing could set its value");

  Plan d;
  x = d.In("x");
  int x2 = d.In("x");
  y = d.Op("y", {x, x2});
  d.Head(y);
  ExpectRefused(d.Parse({0, 1, 2}), "arg_nodes[1] node 1 ('x') has the same name as arg_nodes[0] node 0 ('x')");

  Plan o;
  x = o.In("x");
  int y1 = o.Op("y", {x});
  int y2 = o.Op("y", {x});
  o.Head(y1);
  o.Head(y2);
  ExpectRefused(o.Parse({0, 1, 2}),
                "heads[1] (output 0 of node 2 ('y')) and heads[0] (output 0 of node 1 ('y')) are "
                "both named 'y:0': outputs are looked up by name");

  Plan r;
  x = r.In("__sorun_pad_000001");
  y = r.Op("y", {x});
  r.Head(y);
  ExpectRefused(r.Parse({0, 1}),
                "node 0 ('__sorun_pad_000001'): input names starting with '__sorun_pad_' are reserved");
}

TEST(PlanValidationTest, NopMustAliasOneInputOfTheSameSize) {
  Plan big;
  int x = big.In("x", 4);
  int a = big.Op("a", {x}, 1, 4);
  int r = big.Nop("r", a, 8);  // 32 bytes out of a 16-byte value
  big.Head(r);
  ExpectRefused(big.Parse({0, 1, 1}),
                "node 2 ('r'): __nop changes the size of its value (output entry 2 is 32 bytes, "
                "input entry 1 is 16 bytes)");
  Plan small;
  x = small.In("x", 4);
  a = small.Op("a", {x}, 1, 4);
  r = small.Nop("r", a, 2);
  small.Head(r);
  ExpectRefused(small.Parse({0, 1, 1}), "__nop changes the size of its value");
  Plan other;
  x = other.In("x");
  a = other.Op("a", {x});
  r = other.Nop("r", a);
  other.Head(r);
  ExpectRefused(other.Parse({0, 1, 2}), "node 2 ('r'): __nop output must share storage with its input");
  Plan two;
  x = two.In("x");
  a = two.Op("a", {x});
  int b = two.Op("b", {x});
  r = two.Nop2("r", a, b);
  two.Head(r);
  ExpectRefused(two.Parse({0, 1, 1, 1}), "node 3 ('r'): __nop takes one input and one output (it has 2 and 1)");
}

}  // namespace
}  // namespace sorun
