#include "graph_executor/factory_module.h"

#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "base/mapped_pages.h"
#include "graph_executor/graph_executor_module.h"
#include "runtime/data_type.h"
#include "runtime/device_api.h"
#include "runtime/registry_keys.h"

namespace sorun {

StatusOr<std::vector<DLDevice>> DevicesFromPackedArgs(const PackedArgs& args, int first, std::string_view fn_name) {
  const std::string prefix = std::string(fn_name) + ": ";
  std::vector<DLDevice> devices;
  for (int i = first; i < args.size(); ++i) {
    if (args.code(i) == kTVMDLDevice) {
      devices.push_back(args.value(i).v_device);
    } else {
      // Also accept (device_type, device_id) integer pairs.
      SORUN_ASSIGN_OR_RETURN(int64_t type, args.GetInt(i));
      if (i + 1 >= args.size()) return InvalidArgument(prefix + "device type without a device id");
      SORUN_ASSIGN_OR_RETURN(int64_t id, args.GetInt(i + 1));
      if (!IsDLDeviceTypeValue(type)) {
        return InvalidArgument(prefix + "device type " + std::to_string(type) + " is not a DLPack device type");
      }
      devices.push_back(DLDevice{static_cast<DLDeviceType>(type), static_cast<int32_t>(id)});
      ++i;
    }
  }
  if (devices.empty()) return InvalidArgument(prefix + "no device given");
  return devices;
}

Status ReadFactoryPayload(BinaryReader& reader, bool load_tensors, FactoryPayload* out) {
  std::string_view json;
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadStringView(&json, "graph JSON"), "GraphExecutorFactory");
  out->graph_json.assign(json.data(), json.size());
  uint64_t sz_at = reader.offset();
  uint64_t sz = 0;
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadU64(&sz), "GraphExecutorFactory: param count");
  std::vector<std::string> names;
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadStringVector(&names, "param names"), "GraphExecutorFactory");
  if (names.size() != sz) {
    return reader.ErrorAt(sz_at, "GraphExecutorFactory: param count " + std::to_string(sz) + " does not match " +
                                     std::to_string(names.size()) + " names");
  }
  std::map<std::string, uint64_t> first_offsets;
  std::vector<std::pair<uintptr_t, uintptr_t>> released;  // source pages of copied params
  out->params.clear();
  out->pad_count = 0;
  for (const std::string& name : names) {
    FactoryPayload::Param p;
    p.name = name;
    const uint64_t at = reader.offset();
    p.offset = at;
    Status s = ReadNDArrayHeader(reader, &p.header);
    if (!s.ok()) return std::move(s).Annotate("GraphExecutorFactory: param '" + name + "'");
    if (IsAlignmentPad(name, p.header)) {
      ++out->pad_count;
      continue;
    }
    SORUN_RETURN_IF_ERROR_CTX(RecordParamName(reader, name, at, &first_offsets), "GraphExecutorFactory");
    if (load_tensors) {
      const NDArrayHeader& h = p.header;
      if (reader.owner() && reinterpret_cast<uintptr_t>(h.data) % kAllocAlignment == 0) {
        SORUN_ASSIGN_OR_RETURN(p.tensor, Tensor::Wrap(const_cast<uint8_t*>(h.data), h.data_bytes, h.shape, h.dtype,
                                                      CpuDevice(), reader.owner()));
        p.tensor.node()->read_only = true;
      } else {
        SORUN_ASSIGN_OR_RETURN(p.tensor, Tensor::Empty(h.shape, h.dtype, CpuDevice()));
        if (reader.owner()) {
          released.push_back(CopyAndReleaseSource(static_cast<uint8_t*>(p.tensor.data()), h.data, h.data_bytes));
        } else if (h.data_bytes) {
          std::memcpy(p.tensor.data(), h.data, static_cast<size_t>(h.data_bytes));
        }
      }
    }
    out->params.push_back(std::move(p));
  }
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadString(&out->module_name, "module name"), "GraphExecutorFactory");
  for (const auto& range : released) ReleaseMappedPages(range.first, range.second);
  return Status::Ok();
}

StatusOr<ObjectPtr<GraphExecutorFactoryNode>> GraphExecutorFactoryNode::Create(std::string graph_json,
                                                                               NamedTensors params,
                                                                               std::string module_name,
                                                                               std::string params_source,
                                                                               std::vector<uint64_t> offsets) {
  SORUN_ASSIGN_OR_RETURN(GraphSpec spec, GraphSpec::Parse(graph_json));
  if (module_name.empty()) return InvalidArgument("GraphExecutorFactory: empty module name");
  ObjectPtr<GraphExecutorFactoryNode> node =
      ObjectPtr<GraphExecutorFactoryNode>::FromRaw(new GraphExecutorFactoryNode());
  SORUN_ASSIGN_OR_RETURN(node->weights_,
                         SharedWeights::Create(std::move(params), std::move(params_source), std::move(offsets)));
  SORUN_RETURN_IF_ERROR(node->weights_->CheckAgainstGraph(spec));
  node->graph_ = std::make_shared<const GraphSpec>(std::move(spec));
  node->graph_json_ = std::move(graph_json);
  node->module_name_ = std::move(module_name);
  return node;
}

const char* GraphExecutorFactoryNode::type_key() const { return keys::kTypeKeyGraphExecutorFactory; }

std::vector<std::string> GraphExecutorFactoryNode::ListFunctionNames() const {
  return {module_name_, "get_graph_json", "get_graph_params", "remove_params", "debug_create"};
}

StatusOr<std::unique_ptr<GraphExecutor>> GraphExecutorFactoryNode::CreateExecutor(
    const std::vector<DLDevice>& devices) const {
  if (imports().empty()) {
    return FailedPrecondition("GraphExecutorFactory has no kernel library (it imports no module)");
  }
  return GraphExecutor::Create(graph_, imports()[0], devices, weights_);
}

Status GraphExecutorFactoryNode::SaveToBinary(BinaryWriter* writer) const {
  writer->WriteString(graph_json_);
  SORUN_RETURN_IF_ERROR(WriteNamedTensorSection(weights_->params(), writer, /*align_data=*/true,
                                                /*leading_count=*/true));
  writer->WriteString(module_name_);
  return Status::Ok();
}

PackedFunc GraphExecutorFactoryNode::GetFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) {
  GraphExecutorFactoryNode* f = this;
  auto make = [&](PackedFunc::Body body) {
    return PackedFunc::FromBody(std::string(name),
                                [self, body = std::move(body)](PackedArgs a, Value* r) { return body(a, r); });
  };
  if (name == module_name_) {
    return make([f](PackedArgs args, Value* ret) -> Status {
      SORUN_ASSIGN_OR_RETURN(std::vector<DLDevice> devices, DevicesFromPackedArgs(args, 0, f->module_name_));
      SORUN_ASSIGN_OR_RETURN(std::unique_ptr<GraphExecutor> e, f->CreateExecutor(devices));
      *ret = Value::FromModule(MakeGraphExecutorModule(std::move(e)));
      return Status::Ok();
    });
  }
  if (name == "debug_create") {
    return make([f](PackedArgs args, Value* ret) -> Status {
      SORUN_RETURN_IF_ERROR(args.ExpectCountAtLeast(2, "debug_create"));
      SORUN_ASSIGN_OR_RETURN(std::string_view module_name, args.GetStr(0));
      if (module_name != f->module_name_) {
        return InvalidArgument("debug_create: module name '" + std::string(module_name) + "' is not '" +
                               f->module_name_ + "'");
      }
      SORUN_ASSIGN_OR_RETURN(std::vector<DLDevice> devices, DevicesFromPackedArgs(args, 1, "debug_create"));
      SORUN_ASSIGN_OR_RETURN(std::unique_ptr<GraphExecutor> e, f->CreateExecutor(devices));
      *ret = Value::FromModule(MakeGraphExecutorModule(std::move(e)));
      return Status::Ok();
    });
  }
  if (name == "get_graph_json") {
    return make([f](PackedArgs args, Value* ret) -> Status {
      *ret = Value::Str(f->graph_json_);
      return Status::Ok();
    });
  }
  if (name == "get_graph_params") {
    // TVM returns Map<String, NDArray>; sorun returns the params file bytes (section 5.2).
    return make([f](PackedArgs args, Value* ret) -> Status {
      BinaryWriter w;
      SORUN_RETURN_IF_ERROR(WriteParamsDict(f->weights_->params(), &w, /*align_data=*/false));
      *ret = Value::Bytes(w.TakeBytes());
      return Status::Ok();
    });
  }
  if (name == "remove_params") {
    return make([f](PackedArgs args, Value* ret) -> Status {
      if (f->imports().empty()) return FailedPrecondition("remove_params: the factory has no kernel library");
      SORUN_ASSIGN_OR_RETURN(Module m, MakeGraphExecutorFactory(f->graph_json_, {}, f->imports()[0], f->module_name_));
      *ret = Value::FromModule(std::move(m));
      return Status::Ok();
    });
  }
  return PackedFunc();
}

StatusOr<Module> MakeGraphExecutorFactory(std::string graph_json, NamedTensors params, Module kernel_lib,
                                          std::string module_name) {
  SORUN_ASSIGN_OR_RETURN(
      ObjectPtr<GraphExecutorFactoryNode> node,
      GraphExecutorFactoryNode::Create(std::move(graph_json), std::move(params), std::move(module_name)));
  Module m{ObjectPtr<ModuleNode>(node)};
  if (kernel_lib.defined()) SORUN_RETURN_IF_ERROR(m.Import(std::move(kernel_lib)));
  return m;
}

StatusOr<Module> LoadGraphExecutorFactory(BinaryReader& reader) {
  FactoryPayload payload;
  SORUN_RETURN_IF_ERROR(ReadFactoryPayload(reader, /*load_tensors=*/true, &payload));
  NamedTensors params;
  std::vector<uint64_t> offsets;
  params.reserve(payload.params.size());
  for (auto& p : payload.params) {
    params.emplace_back(std::move(p.name), std::move(p.tensor));
    offsets.push_back(p.offset);
  }
  auto node = GraphExecutorFactoryNode::Create(std::move(payload.graph_json), std::move(params),
                                               std::move(payload.module_name), reader.section(), std::move(offsets));
  if (!node.ok()) return std::move(node).status().Annotate("GraphExecutorFactory");
  return Module(ObjectPtr<ModuleNode>(*node));
}

}  // namespace sorun
