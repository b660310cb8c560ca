// GraphSpec: a graph-executor graph (TVM graph JSON, docs/spec/FORMAT.md section 6.1) parsed with
// RapidJSON and validated completely, so the executor never meets an inconsistency at run time:
// node kinds and attributes, input references (in range, topological), node_row_ptr, arg_nodes,
// heads and every per-entry attribute list (length, dtype strings, shapes, storage ids, device
// types, storage scopes), duplicate keys in any object, and the execution plan (inputs, names,
// __nop aliasing, storage liveness: ValidateExecutionPlan, plan_validation.h). Errors name the key and
// the node (index and name).
// Immutable once parsed; shared by all executors of a factory; thread-safe to read.
#ifndef SORUN_GRAPH_EXECUTOR_GRAPH_JSON_H_
#define SORUN_GRAPH_EXECUTOR_GRAPH_JSON_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace sorun {

// A reference to output `index` of node `node_id`.
struct GraphEntryRef {
  uint32_t node_id = 0;
  uint32_t index = 0;
  uint32_t version = 0;
};

struct GraphNode {
  std::string op;    // "null" (graph input) or "tvm_op"
  std::string name;  // unique-ish display name ("data", "p0", "tvmgen_default_fused_add")
  std::vector<GraphEntryRef> inputs;
  // tvm_op attributes (all strings in the JSON).
  std::string func_name;  // kernel symbol, "__nop" or "__copy"
  uint32_t num_inputs = 0;
  uint32_t num_outputs = 1;
  bool flatten_data = false;
  std::vector<std::pair<std::string, std::string>> extra_attrs;  // kept, ignored
  std::vector<uint32_t> control_deps;

  bool is_input() const { return op == "null"; }
};

struct GraphSpec {
  std::vector<GraphNode> nodes;
  std::vector<uint32_t> arg_nodes;     // graph inputs (user inputs and params), input-index order
  std::vector<uint32_t> node_row_ptr;  // nodes + 1
  std::vector<GraphEntryRef> heads;    // outputs
  // Per entry (entry id = node_row_ptr[node] + output index):
  std::vector<DLDataType> dltype;
  std::vector<int64_t> storage_id;
  std::vector<std::vector<int64_t>> shape;
  std::vector<int32_t> device_index;       // DLDeviceType per entry; empty when absent
  std::vector<std::string> storage_scope;  // empty when absent
  // Other attrs of type list_int / size_t, kept for round trips.
  std::vector<std::pair<std::string, std::vector<int64_t>>> extra_int_attrs;

  // Parses and validates `json`. `source` names the input in errors ("model.so: graph JSON").
  static StatusOr<GraphSpec> Parse(std::string_view json);
  // Serializes back to TVM's graph JSON.
  std::string ToJson() const;

  uint32_t num_entries() const { return node_row_ptr.empty() ? 0 : node_row_ptr.back(); }
  uint32_t entry_id(uint32_t node_id, uint32_t index) const { return node_row_ptr[node_id] + index; }
  uint32_t entry_id(const GraphEntryRef& e) const { return entry_id(e.node_id, e.index); }
  // "node 3 ('p0')" for messages.
  std::string DescribeNode(uint32_t node_id) const;
  // Compact byte size of entry `eid` (validated not to overflow at parse time).
  uint64_t EntryBytes(uint32_t eid) const;
};

}  // namespace sorun

#endif  // SORUN_GRAPH_EXECUTOR_GRAPH_JSON_H_
