#include "graph_executor/shared_weights.h"

#include <map>
#include <string_view>
#include <vector>

#include "runtime/data_type.h"

namespace sorun {

StatusOr<ObjectPtr<SharedWeights>> SharedWeights::Create(NamedTensors params, std::string source,
                                                         std::vector<uint64_t> offsets) {
  if (!offsets.empty() && offsets.size() != params.size()) {
    return InvalidArgument("SharedWeights: " + std::to_string(offsets.size()) + " offsets for " +
                           std::to_string(params.size()) + " params");
  }
  ObjectPtr<SharedWeights> w = ObjectPtr<SharedWeights>::FromRaw(new SharedWeights());
  w->source_ = std::move(source);
  w->offsets_ = std::move(offsets);
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& t = params[i].second;
    if (!t.defined()) return InvalidArgument("param '" + params[i].first + "' is undefined");
    if (t.device().device_type != kDLCPU) {
      return InvalidArgument("param '" + params[i].first + "' must be a CPU tensor, got " + t.Describe());
    }
    if (!w->index_.emplace(params[i].first, i).second) {
      return InvalidArgument((w->source_.empty() ? "" : w->source_ + ": ") + "param '" + params[i].first +
                             "' is given twice");
    }
  }
  std::vector<Tensor> tensors;
  std::vector<std::string> names;
  for (const auto& [name, tensor] : params) {
    tensors.push_back(tensor);
    names.push_back("param '" + name + "'");
  }
  w->device_copies_ = std::make_unique<DeviceWeightCache>(std::move(tensors), std::move(names));
  w->params_ = std::move(params);
  return w;
}

Status CheckParamsAgainstGraph(const GraphSpec& graph, const std::vector<ParamSignature>& params,
                               ParamsOutsideGraph outside, const std::string& source, const std::string& graph_name) {
  std::map<std::string_view, uint32_t> inputs;  // name -> entry id
  for (uint32_t nid : graph.arg_nodes) inputs.emplace(graph.nodes[nid].name, graph.entry_id(nid, 0));
  for (const ParamSignature& p : params) {
    const std::string prefix = p.offset != ParamSignature::kNoOffset
                                   ? source + " byte " + std::to_string(p.offset) + ": "
                               : source.empty() ? ""
                                                : source + ": ";
    auto it = inputs.find(p.name);
    if (it == inputs.end()) {
      if (outside == ParamsOutsideGraph::kIgnored) continue;
      std::string names;
      for (const auto& kv : inputs) names += (names.empty() ? "" : ", ") + std::string(kv.first);
      return InvalidArgument(prefix + "param '" + std::string(p.name) + "' is not an input of " + graph_name +
                             " (inputs: " + names + ")");
    }
    const uint32_t eid = it->second;
    if (p.dtype != graph.dltype[eid] || *p.shape != graph.shape[eid]) {
      return InvalidArgument(prefix + "param '" + std::string(p.name) + "' is " + DTypeToString(p.dtype) +
                             ShapeToString(p.shape->data(), static_cast<int>(p.shape->size())) +
                             (p.device != nullptr ? " on " + DeviceToString(*p.device) : "") + " but " + graph_name +
                             " input expects " + DTypeToString(graph.dltype[eid]) +
                             ShapeToString(graph.shape[eid].data(), static_cast<int>(graph.shape[eid].size())));
    }
  }
  return Status::Ok();
}

Status CheckParamsAgainstGraph(const GraphSpec& graph, const NamedTensors& params, ParamsOutsideGraph outside,
                               const std::string& source, const std::string& graph_name,
                               const std::vector<uint64_t>& offsets) {
  std::vector<ParamSignature> signatures;
  std::vector<DLDevice> devices;
  devices.reserve(params.size());  // no reallocation: signatures point into it
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& tensor = params[i].second;
    devices.push_back(tensor.device());
    signatures.push_back(ParamSignature{params[i].first, tensor.dtype(), &tensor.shape(), &devices.back(),
                                        i < offsets.size() ? offsets[i] : ParamSignature::kNoOffset});
  }
  return CheckParamsAgainstGraph(graph, signatures, outside, source, graph_name);
}

Status SharedWeights::CheckAgainstGraph(const GraphSpec& graph, ParamsOutsideGraph outside,
                                        const std::string& graph_name) const {
  return CheckParamsAgainstGraph(graph, params_, outside, source_, graph_name, offsets_);
}

const Tensor* SharedWeights::Find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &params_[it->second].second;
}

StatusOr<Tensor> SharedWeights::OnDevice(const std::string& name, DLDevice device) {
  auto it = index_.find(name);
  if (it == index_.end()) return NotFound("no param named '" + name + "'");
  return device_copies_->Get(it->second, device);
}

}  // namespace sorun
