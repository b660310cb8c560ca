#include "graph_executor/graph_builder.h"

#include <algorithm>
#include <map>

#include "runtime/data_type.h"

namespace sorun {

int GraphBuilder::Input(const std::string& name, std::vector<int64_t> shape, DLDataType dtype) {
  GraphNode n;
  n.op = "null";
  n.name = name;
  g_.nodes.push_back(n);
  g_.arg_nodes.push_back(static_cast<uint32_t>(g_.nodes.size() - 1));
  g_.shape.push_back(std::move(shape));
  g_.dltype.push_back(dtype);
  device_type_.push_back(kDLCPU);
  return static_cast<int>(g_.nodes.size() - 1);
}

int GraphBuilder::Op(const std::string& func_name, const std::vector<int>& inputs, std::vector<int64_t> out_shape,
                     DLDataType dtype, const std::string& name, bool flatten_data) {
  GraphNode n;
  n.op = "tvm_op";
  n.func_name = func_name;
  n.name = name.empty() ? func_name + "_" + std::to_string(g_.nodes.size()) : name;
  for (int in : inputs) n.inputs.push_back(GraphEntryRef{static_cast<uint32_t>(in), 0, 0});
  n.num_inputs = static_cast<uint32_t>(inputs.size());
  n.num_outputs = 1;
  n.flatten_data = flatten_data;
  g_.nodes.push_back(n);
  g_.shape.push_back(std::move(out_shape));
  g_.dltype.push_back(dtype);
  device_type_.push_back(inputs.empty() ? kDLCPU : device_type_[static_cast<size_t>(inputs[0])]);
  return static_cast<int>(g_.nodes.size() - 1);
}

int GraphBuilder::Reshape(int input, std::vector<int64_t> out_shape, const std::string& name) {
  return Op("__nop", {input}, std::move(out_shape), g_.dltype[static_cast<size_t>(input)], name);
}

void GraphBuilder::Output(int node) { g_.heads.push_back(GraphEntryRef{static_cast<uint32_t>(node), 0, 0}); }

void GraphBuilder::SetDeviceType(int node, int device_type) {
  device_type_[static_cast<size_t>(node)] = device_type;
  has_device_ = true;
}

StatusOr<GraphSpec> GraphBuilder::Build() const {
  GraphSpec g = g_;
  const size_t n = g.nodes.size();
  g.node_row_ptr.resize(n + 1);
  for (size_t i = 0; i <= n; ++i) g.node_row_ptr[i] = static_cast<uint32_t>(i);  // one output per node
  if (has_device_) g.device_index.assign(device_type_.begin(), device_type_.end());

  // Liveness: how many readers each node's output has left; heads are pinned.
  std::vector<int> readers(n, 0);
  for (const GraphNode& node : g.nodes) {
    for (const GraphEntryRef& in : node.inputs) ++readers[in.node_id];
  }
  std::vector<bool> pinned(n, false);
  for (const GraphEntryRef& h : g.heads) pinned[h.node_id] = true;
  // Storage ids: inputs unique; op outputs reuse a free id of the same device (best fit by size).
  g.storage_id.assign(n, -1);
  std::vector<uint64_t> sid_bytes;
  std::vector<int> sid_device;
  std::vector<int> sid_users;  // live entries per storage id
  std::multimap<uint64_t, int64_t> free_sids;
  auto release = [&](uint32_t node_id) {
    int64_t sid = g.storage_id[node_id];
    if (--sid_users[static_cast<size_t>(sid)] == 0) free_sids.emplace(sid_bytes[static_cast<size_t>(sid)], sid);
  };
  for (size_t i = 0; i < n; ++i) {
    const GraphNode& node = g.nodes[i];
    uint64_t bytes = g.EntryBytes(static_cast<uint32_t>(i));
    if (node.func_name == "__nop") {
      g.storage_id[i] = g.storage_id[node.inputs[0].node_id];
      ++sid_users[static_cast<size_t>(g.storage_id[i])];
    } else if (node.is_input()) {
      g.storage_id[i] = static_cast<int64_t>(sid_bytes.size());
      sid_bytes.push_back(bytes);
      sid_device.push_back(device_type_[i]);
      sid_users.push_back(1 << 30);  // inputs are never reused
    } else {
      int64_t chosen = -1;
      for (auto it = free_sids.lower_bound(bytes); it != free_sids.end(); ++it) {
        if (sid_device[static_cast<size_t>(it->second)] == device_type_[i]) {
          chosen = it->second;
          free_sids.erase(it);
          break;
        }
      }
      if (chosen < 0) {
        chosen = static_cast<int64_t>(sid_bytes.size());
        sid_bytes.push_back(bytes);
        sid_device.push_back(device_type_[i]);
        sid_users.push_back(0);
      }
      g.storage_id[i] = chosen;
      sid_bytes[static_cast<size_t>(chosen)] = std::max(sid_bytes[static_cast<size_t>(chosen)], bytes);
      sid_users[static_cast<size_t>(chosen)] += pinned[i] ? (1 << 30) : 1;
    }
    // This operator has read its inputs: release those with no readers left.
    for (const GraphEntryRef& in : node.inputs) {
      if (--readers[in.node_id] == 0 && !pinned[in.node_id] && !g.nodes[in.node_id].is_input()) release(in.node_id);
    }
    if (readers[i] == 0 && !pinned[i] && !node.is_input()) release(static_cast<uint32_t>(i));
  }
  // Validate through the real parser.
  std::string json = g.ToJson();
  return GraphSpec::Parse(json);
}

StatusOr<std::string> GraphBuilder::BuildJson() const {
  SORUN_ASSIGN_OR_RETURN(GraphSpec g, Build());
  return g.ToJson();
}

}  // namespace sorun
