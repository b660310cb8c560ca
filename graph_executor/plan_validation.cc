#include "graph_executor/plan_validation.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/data_type.h"
#include "runtime/tensor_io.h"

namespace sorun {
namespace {

Status Bad(const std::string& what) { return DataLoss("graph JSON: " + what); }

// One value of the plan: an entry written by an input or an operator, together with the __nop outputs
// that alias it. Node positions: -1 = before the first node (inputs), n = the end of the run.
struct PlanValue {
  uint32_t root = 0;         // the entry that is written
  int64_t start = 0;         // node that writes it (-1 for an input)
  int64_t end = 0;           // last node that needs it (n: alive to the end of the run)
  int64_t last_reader = -1;  // last node reading it (-1: none)
  int64_t head = -1;         // index of a graph output it is (or aliases), -1 if none
  bool is_input = false;
};

class PlanChecker {
 public:
  explicit PlanChecker(const GraphSpec& g) : g_(g), n_(static_cast<int64_t>(g.nodes.size())) {}

  Status Run() {
    SORUN_RETURN_IF_ERROR(CheckInputs());
    SORUN_RETURN_IF_ERROR(CheckOutputNames());
    SORUN_RETURN_IF_ERROR(CheckNops());
    BuildValues();
    return CheckLiveness();
  }

 private:
  // "entry 5 (node 2 'x', input)".
  std::string DescribeEntry(uint32_t eid) const {
    const uint32_t nid = node_of_[eid];
    std::string s = "entry " + std::to_string(eid) + " (node " + std::to_string(nid) + " '" + g_.nodes[nid].name + "'";
    if (g_.nodes[nid].num_outputs > 1) s += " output " + std::to_string(eid - g_.node_row_ptr[nid]);
    if (g_.nodes[nid].is_input()) s += ", input";
    return s + ")";
  }

  std::string NodeRef(int64_t nid) const {
    return "node " + std::to_string(nid) + " '" + g_.nodes[static_cast<size_t>(nid)].name + "'";
  }

  Status CheckInputs() {
    std::vector<int64_t> arg_index(g_.nodes.size(), -1);
    for (size_t k = 0; k < g_.arg_nodes.size(); ++k) arg_index[g_.arg_nodes[k]] = static_cast<int64_t>(k);
    std::unordered_map<std::string, size_t> by_name;
    for (uint32_t nid = 0; nid < g_.nodes.size(); ++nid) {
      const GraphNode& node = g_.nodes[nid];
      if (!node.is_input()) continue;
      if (arg_index[nid] < 0) {
        return Bad(g_.DescribeNode(nid) +
                   " is an input ('null' op) but arg_nodes does not list it, so nothing "
                   "could set its value");
      }
      if (IsAlignmentPadName(node.name)) {
        return Bad(g_.DescribeNode(nid) + ": input names starting with '" + kAlignmentPadPrefix +
                   "' are reserved for alignment pads, which params readers skip");
      }
    }
    for (size_t k = 0; k < g_.arg_nodes.size(); ++k) {
      const uint32_t nid = g_.arg_nodes[k];
      auto it = by_name.emplace(g_.nodes[nid].name, k);
      if (!it.second) {
        return Bad("arg_nodes[" + std::to_string(k) + "] " + g_.DescribeNode(nid) + " has the same name as arg_nodes[" +
                   std::to_string(it.first->second) + "] " + g_.DescribeNode(g_.arg_nodes[it.first->second]) +
                   ": inputs and params are set by name");
      }
    }
    return Status::Ok();
  }

  // Outputs are found by "name:index" and, for index 0, by "name" (GraphExecutor::GetOutputIndex): two
  // heads naming different entries must not share a key. The same entry listed twice is fine.
  Status CheckOutputNames() const {
    std::unordered_map<std::string, size_t> by_key;
    for (size_t k = 0; k < g_.heads.size(); ++k) {
      const GraphEntryRef& h = g_.heads[k];
      const std::string& name = g_.nodes[h.node_id].name;
      std::vector<std::string> keys = {name + ":" + std::to_string(h.index)};
      if (h.index == 0) keys.push_back(name);
      for (const std::string& key : keys) {
        auto it = by_key.emplace(key, k);
        if (it.second) continue;
        const GraphEntryRef& other = g_.heads[it.first->second];
        if (g_.entry_id(other) == g_.entry_id(h)) continue;
        return Bad("heads[" + std::to_string(k) + "] (output " + std::to_string(h.index) + " of " +
                   g_.DescribeNode(h.node_id) + ") and heads[" + std::to_string(it.first->second) + "] (output " +
                   std::to_string(other.index) + " of " + g_.DescribeNode(other.node_id) + ") are both named '" + key +
                   "': outputs are looked up by name");
      }
    }
    return Status::Ok();
  }

  // A __nop moves no data: its one output is its one input under another shape.
  Status CheckNops() const {
    for (uint32_t nid = 0; nid < g_.nodes.size(); ++nid) {
      const GraphNode& node = g_.nodes[nid];
      if (node.is_input() || node.func_name != "__nop") continue;
      if (node.inputs.size() != 1 || node.num_outputs != 1) {
        return Bad(g_.DescribeNode(nid) + ": __nop takes one input and one output (it has " +
                   std::to_string(node.inputs.size()) + " and " + std::to_string(node.num_outputs) + ")");
      }
      const uint32_t in = g_.entry_id(node.inputs[0]), out = g_.entry_id(nid, 0);
      if (g_.storage_id[in] != g_.storage_id[out]) {
        return Bad(g_.DescribeNode(nid) + ": __nop output must share storage with its input (storage ids " +
                   std::to_string(g_.storage_id[out]) + " and " + std::to_string(g_.storage_id[in]) + ")");
      }
      if (g_.EntryBytes(in) != g_.EntryBytes(out)) {
        return Bad(g_.DescribeNode(nid) + ": __nop changes the size of its value (output entry " + std::to_string(out) +
                   " is " + std::to_string(g_.EntryBytes(out)) + " bytes, input entry " + std::to_string(in) + " is " +
                   std::to_string(g_.EntryBytes(in)) + " bytes); a __nop only reinterprets its input");
      }
    }
    return Status::Ok();
  }

  void BuildValues() {
    const uint32_t entries = g_.num_entries();
    node_of_.assign(entries, 0);
    root_.assign(entries, 0);
    value_of_root_.assign(entries, -1);
    for (uint32_t nid = 0; nid < g_.nodes.size(); ++nid) {
      const GraphNode& node = g_.nodes[nid];
      for (uint32_t k = 0; k < node.num_outputs; ++k) {
        const uint32_t eid = g_.entry_id(nid, k);
        node_of_[eid] = nid;
        if (!node.is_input() && node.func_name == "__nop") {
          root_[eid] = root_[g_.entry_id(node.inputs[0])];  // inputs come first: already resolved
          continue;
        }
        root_[eid] = eid;
        PlanValue v;
        v.root = eid;
        v.is_input = node.is_input();
        v.start = v.is_input ? -1 : static_cast<int64_t>(nid);
        v.end = v.is_input ? n_
                           : static_cast<int64_t>(nid);  // an unread output is still written: alive while its node runs
        value_of_root_[eid] = static_cast<int64_t>(values_.size());
        values_.push_back(v);
      }
      if (node.is_input() || node.func_name == "__nop") continue;
      for (const GraphEntryRef& in : node.inputs) {
        PlanValue& v = ValueOf(g_.entry_id(in));
        v.last_reader = std::max<int64_t>(v.last_reader, nid);
        v.end = std::max<int64_t>(v.end, nid);
      }
    }
    for (size_t k = 0; k < g_.heads.size(); ++k) {
      PlanValue& v = ValueOf(g_.entry_id(g_.heads[k]));
      v.end = n_;
      if (v.head < 0) v.head = static_cast<int64_t>(k);
    }
  }

  PlanValue& ValueOf(uint32_t eid) { return values_[static_cast<size_t>(value_of_root_[root_[eid]])]; }

  Status CheckLiveness() const {
    std::map<int64_t, std::vector<const PlanValue*>> by_sid;
    for (const PlanValue& v : values_) by_sid[g_.storage_id[v.root]].push_back(&v);
    for (auto& kv : by_sid) {
      std::vector<const PlanValue*>& vs = kv.second;
      if (vs.size() < 2) continue;
      std::stable_sort(vs.begin(), vs.end(),
                       [](const PlanValue* a, const PlanValue* b) { return a->start < b->start; });
      const PlanValue* open = vs[0];  // the value with the latest end among those seen
      for (size_t i = 1; i < vs.size(); ++i) {
        if (vs[i]->start <= open->end) return Conflict(kv.first, *open, *vs[i]);
        if (vs[i]->end > open->end) open = vs[i];
      }
    }
    return Status::Ok();
  }

  // `a` started no later than `b` and is still alive when `b` is written.
  Status Conflict(int64_t sid, const PlanValue& a, const PlanValue& b) const {
    std::string why;
    if (a.is_input && b.is_input) {
      why = "both are inputs, which keep their values for every run";
    } else if (a.is_input) {
      why = NodeRef(b.start) + " writes entry " + std::to_string(b.root) + " while input '" +
            g_.nodes[node_of_[a.root]].name + "' must keep its value for every run";
    } else if (a.start == b.start) {
      why = NodeRef(b.start) + " writes both";
    } else if (a.head >= 0) {
      why = NodeRef(b.start) + " writes entry " + std::to_string(b.root) + " after " + NodeRef(a.start) +
            " wrote graph output " + std::to_string(a.head) + ", which must keep its value until the run ends";
    } else {
      why =
          NodeRef(b.start) + " runs while " + NodeRef(a.start) + "'s value is still read by " + NodeRef(a.last_reader);
    }
    return Bad("storage id " + std::to_string(sid) + " is shared by " + DescribeEntry(a.root) + " and " +
               DescribeEntry(b.root) + " which are alive at the same time (" + why + ")");
  }

  const GraphSpec& g_;
  const int64_t n_;
  std::vector<uint32_t> node_of_;       // entry -> node writing it
  std::vector<uint32_t> root_;          // entry -> the entry it aliases through __nop (itself if none)
  std::vector<int64_t> value_of_root_;  // root entry -> index in values_
  std::vector<PlanValue> values_;
};

}  // namespace

Status ValidateExecutionPlan(const GraphSpec& graph) { return PlanChecker(graph).Run(); }

}  // namespace sorun
