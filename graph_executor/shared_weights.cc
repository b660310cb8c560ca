#include "graph_executor/shared_weights.h"

#include "runtime/data_type.h"

namespace sorun {

StatusOr<ObjectPtr<SharedWeights>> SharedWeights::Create(NamedTensors params, std::string source) {
  ObjectPtr<SharedWeights> w = ObjectPtr<SharedWeights>::FromRaw(new SharedWeights());
  w->source_ = std::move(source);
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& t = params[i].second;
    if (!t.defined()) return InvalidArgument("param '" + params[i].first + "' is undefined");
    if (t.device().device_type != kDLCPU) {
      return InvalidArgument("param '" + params[i].first + "' must be a CPU tensor, got " + t.Describe());
    }
    if (!w->index_.emplace(params[i].first, i).second) {
      return InvalidArgument("param '" + params[i].first + "' is given twice");
    }
    w->total_bytes_ += t.nbytes();
  }
  w->params_ = std::move(params);
  return w;
}

Status SharedWeights::CheckAgainstGraph(const GraphSpec& graph) const {
  for (uint32_t nid : graph.arg_nodes) {
    const std::string& name = graph.nodes[nid].name;
    const Tensor* w = Find(name);
    if (w == nullptr) continue;
    const uint32_t eid = graph.entry_id(nid, 0);
    if (w->dtype() != graph.dltype[eid] || w->shape() != graph.shape[eid]) {
      return InvalidArgument((source_.empty() ? "" : source_ + ": ") + "param '" + name + "' is " + w->Describe() +
                             " but the graph input expects " +
                             DTypeToString(graph.dltype[eid]) +
                             ShapeToString(graph.shape[eid].data(), static_cast<int>(graph.shape[eid].size())));
    }
  }
  return Status::Ok();
}

const Tensor* SharedWeights::Find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &params_[it->second].second;
}

StatusOr<Tensor> SharedWeights::OnDevice(const std::string& name, DLDevice device) {
  const Tensor* cpu = Find(name);
  if (cpu == nullptr) return NotFound("no param named '" + name + "'");
  if (device.device_type == kDLCPU) return *cpu;
  std::lock_guard<std::mutex> lock(mutex_);
  auto& per_device = uploaded_[{device.device_type, device.device_id}];
  auto it = per_device.find(name);
  if (it != per_device.end()) return it->second;
  auto uploaded = cpu->CopyToDevice(device);
  if (!uploaded.ok()) return std::move(uploaded).status().Annotate("uploading param '" + name + "' to " + DeviceToString(device));
  uploaded->node()->read_only = true;
  per_device.emplace(name, *uploaded);
  return *uploaded;
}

uint64_t SharedWeights::uploaded_bytes(DLDevice device) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = uploaded_.find({device.device_type, device.device_id});
  if (it == uploaded_.end()) return 0;
  uint64_t n = 0;
  for (const auto& kv : it->second) n += kv.second.nbytes();
  return n;
}

}  // namespace sorun
