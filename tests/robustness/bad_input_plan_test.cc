// Bad-input catalogue, class 3: storage plans, inputs and names the executor cannot trust.
// Each case runs through BadInputCatalogueTest (tests/robustness/catalogue.h).
// The rule: graph_executor/plan_validation.h (ValidateExecutionPlan, run by GraphSpec::Parse).
#include <cctype>
#include <functional>
#include <string>
#include <vector>

#include "graph_executor/graph_json.h"
#include "tests/robustness/catalogue.h"

namespace sorun {
namespace catalogue {
namespace {

// The good graph (0 'data', 1 'w', 2 'b' -> 3 'fc' -> 4 'softmax', storage ids 0..4) after `edit`.
std::string GoodGraphWith(const std::function<void(GraphSpec&)>& edit) {
  auto g = GraphSpec::Parse(CatalogueEnv::Get().good_json);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  if (!g.ok()) return std::string();
  edit(*g);
  return g->ToJson();
}

// Loads a packed model with graph `json` and the good params, then creates a CPU executor.
Status LoadGraph(const std::string& json, const std::string& name) {
  CatalogueEnv& env = CatalogueEnv::Get();
  auto model = Load(env.WithFactory(json, env.params, name + ".so"));
  if (!model.ok()) return model.status();
  return CreateExecutor(*model, {CpuDevice()}).status();
}

std::vector<CatalogueCase> PlanCases() {
  std::vector<CatalogueCase> cases;
  auto add = [&](std::string name, std::function<void(GraphSpec&)> edit, std::string expected) {
    std::string file = name;
    for (char& c : file) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    cases.push_back(CatalogueCase{std::move(name), [edit, file] { return LoadGraph(GoodGraphWith(edit), file); },
                                  std::move(expected)});
  };
  add(
      "param and input share a storage id",
      [](GraphSpec& g) {
        g.storage_id = {0, 0, 2, 3, 4};
      },
      "storage id 0 is shared by entry 0 (node 0 'data', input) and entry 1 (node 1 'w', input) which are alive at "
      "the same time (both are inputs, which keep their values for every run)");
  add(
      "input overwritten after its last reader",
      [](GraphSpec& g) {
        g.storage_id = {0, 1, 2, 3, 0};
      },
      "storage id 0 is shared by entry 0 (node 0 'data', input) and entry 4 (node 4 'softmax') which are alive at "
      "the same time (node 4 'softmax' writes entry 4 while input 'data' must keep its value for every run)");
  add(
      "operator writes into its input's storage",
      [](GraphSpec& g) {
        g.storage_id = {0, 1, 2, 3, 3};
      },
      "storage id 3 is shared by entry 3 (node 3 'fc') and entry 4 (node 4 'softmax') which are alive at the same "
      "time (node 4 'softmax' runs while node 3 'fc''s value is still read by node 4 'softmax')");
  add(
      "two outputs share a storage id",
      [](GraphSpec& g) {
        g.storage_id = {0, 1, 2, 3, 3};
        g.heads = {GraphEntryRef{3, 0, 0}, GraphEntryRef{4, 0, 0}};
      },
      "storage id 3 is shared by entry 3 (node 3 'fc') and entry 4 (node 4 'softmax') which are alive at the same "
      "time (node 4 'softmax' writes entry 4 after node 3 'fc' wrote graph output 0, which must keep its value "
      "until the run ends)");
  add(
      "input missing from arg_nodes",
      [](GraphSpec& g) {
        g.arg_nodes = {0, 1};
      },
      "graph JSON: node 2 ('b') is an input ('null' op) but arg_nodes does not list it, so nothing could set its "
      "value");
  add(
      "two inputs with one name", [](GraphSpec& g) { g.nodes[2].name = "w"; },
      "graph JSON: arg_nodes[2] node 2 ('w') has the same name as arg_nodes[1] node 1 ('w'): inputs and params are "
      "set by name");
  add(
      "two outputs with one name",
      [](GraphSpec& g) {
        g.nodes[3].name = "softmax";
        g.heads = {GraphEntryRef{3, 0, 0}, GraphEntryRef{4, 0, 0}};
      },
      "graph JSON: heads[1] (output 0 of node 4 ('softmax')) and heads[0] (output 0 of node 3 ('softmax')) are both "
      "named 'softmax:0': outputs are looked up by name");
  add(
      "input named like an alignment pad", [](GraphSpec& g) { g.nodes[2].name = "__sorun_pad_000001"; },
      "graph JSON: node 2 ('__sorun_pad_000001'): input names starting with '__sorun_pad_' are reserved for "
      "alignment pads");
  add(
      "nop output bigger than its input",
      [](GraphSpec& g) {
        g.nodes[4].func_name = "__nop";
        g.nodes[4].name = "grow";
        g.shape[4] = {1, 8};
        g.storage_id[4] = 3;
      },
      "graph JSON: node 4 ('grow'): __nop changes the size of its value (output entry 4 is 32 bytes, input entry 3 "
      "is 16 bytes)");
  cases.push_back(CatalogueCase{"second heads key in the graph",
                                [] {
                                  std::string json = CatalogueEnv::Get().good_json;
                                  const size_t at = json.find("\"heads\":");
                                  if (at == std::string::npos) return InvalidArgument("good graph has no heads key");
                                  json.insert(at, "\"heads\":[[3,0,0]],");
                                  return LoadGraph(json, "second_heads");
                                },
                                "graph JSON: top level: key 'heads' appears twice"});
  return cases;
}

SORUN_CATALOGUE_CASES(Plan, PlanCases());

}  // namespace
}  // namespace catalogue
}  // namespace sorun
