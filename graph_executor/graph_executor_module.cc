#include "graph_executor/graph_executor_module.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "runtime/data_type.h"
#include "runtime/registry_keys.h"

namespace sorun {
namespace {

// Resolves an input/output selector given as an index or a name.
StatusOr<int> Selector(const PackedArgs& args, int i, GraphExecutor& e, bool output) {
  if (args.code(i) == kTVMStr) {
    SORUN_ASSIGN_OR_RETURN(std::string_view name, args.GetStr(i));
    return output ? e.GetOutputIndex(name) : e.GetInputIndex(name);
  }
  SORUN_ASSIGN_OR_RETURN(int64_t index, args.GetInt(i));
  return static_cast<int>(index);
}

// The owner to keep alive for a tensor argument (NDArray handles), else null.
ObjectPtr<Object> ArgOwner(const PackedArgs& args, int i) {
  if (args.code(i) != kTVMNDArrayHandle) return nullptr;
  return ObjectPtr<Object>::FromRaw(TensorNode::FromDLTensor(static_cast<DLTensor*>(args.value(i).v_handle)));
}

const char* const kFunctionNames[] = {
    "set_input",
    "set_input_zero_copy",
    "set_output_zero_copy",
    "run",
    "get_output",
    "get_input",
    "get_num_outputs",
    "get_num_inputs",
    "get_input_index",
    "get_input_info",
    "get_output_info",
    "load_params",
    "share_params",
    "run_individual",
    "profile",
    "get_memory_plan",
};

}  // namespace

const char* GraphExecutorModuleNode::type_key() const { return keys::kTypeKeyGraphExecutor; }

std::vector<std::string> GraphExecutorModuleNode::ListFunctionNames() const {
  return std::vector<std::string>(std::begin(kFunctionNames), std::end(kFunctionNames));
}

PackedFunc GraphExecutorModuleNode::GetFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) {
  GraphExecutor* e = executor_.get();
  auto make = [&](PackedFunc::Body body) {
    // Capturing `self` keeps the executor alive as long as the function.
    return PackedFunc::FromBody(std::string(name),
                                [self, body = std::move(body)](PackedArgs a, Value* r) { return body(a, r); });
  };
  if (name == "set_input" || name == "set_input_zero_copy") {
    bool zero_copy = name == "set_input_zero_copy";
    return make([e, zero_copy](PackedArgs args, Value* ret) -> Status {
      SORUN_RETURN_IF_ERROR(args.ExpectCount(2, zero_copy ? "set_input_zero_copy" : "set_input"));
      SORUN_ASSIGN_OR_RETURN(int index, Selector(args, 0, *e, false));
      SORUN_ASSIGN_OR_RETURN(DLTensor * t, args.GetDLTensor(1));
      return zero_copy ? e->SetInputZeroCopy(index, *t, ArgOwner(args, 1)) : e->SetInput(index, *t);
    });
  }
  if (name == "set_output_zero_copy") {
    return make([e](PackedArgs args, Value* ret) -> Status {
      SORUN_RETURN_IF_ERROR(args.ExpectCount(2, "set_output_zero_copy"));
      SORUN_ASSIGN_OR_RETURN(int index, Selector(args, 0, *e, true));
      SORUN_ASSIGN_OR_RETURN(DLTensor * t, args.GetDLTensor(1));
      return e->SetOutputZeroCopy(index, *t, ArgOwner(args, 1));
    });
  }
  if (name == "run") {
    return make([e](PackedArgs args, Value* ret) -> Status { return e->Run(); });
  }
  if (name == "get_output" || name == "get_input") {
    bool output = name == "get_output";
    return make([e, output](PackedArgs args, Value* ret) -> Status {
      SORUN_RETURN_IF_ERROR(args.ExpectCountAtLeast(1, output ? "get_output" : "get_input"));
      SORUN_ASSIGN_OR_RETURN(int index, Selector(args, 0, *e, output));
      if (output && args.size() == 2) {
        SORUN_ASSIGN_OR_RETURN(DLTensor * out, args.GetDLTensor(1));
        return e->CopyOutputTo(index, *out);
      }
      SORUN_ASSIGN_OR_RETURN(Tensor t, output ? e->GetOutput(index) : e->GetInput(index));
      *ret = Value::FromTensor(std::move(t));
      return Status::Ok();
    });
  }
  if (name == "get_num_outputs" || name == "get_num_inputs") {
    bool output = name == "get_num_outputs";
    return make([e, output](PackedArgs args, Value* ret) -> Status {
      *ret = Value::Int(output ? e->num_outputs() : e->num_inputs());
      return Status::Ok();
    });
  }
  if (name == "get_input_index") {
    return make([e](PackedArgs args, Value* ret) -> Status {
      SORUN_RETURN_IF_ERROR(args.ExpectCount(1, "get_input_index"));
      SORUN_ASSIGN_OR_RETURN(std::string_view input, args.GetStr(0));
      auto index = e->GetInputIndex(input);
      *ret = Value::Int(index.ok() ? *index : -1);  // TVM returns -1 for an unknown name
      return Status::Ok();
    });
  }
  if (name == "get_input_info" || name == "get_output_info") {
    bool output = name == "get_output_info";
    return make([e, output](PackedArgs args, Value* ret) -> Status {
      *ret = Value::Str(TensorInfoToJson(output ? e->OutputInfo() : e->InputInfo(/*include_params=*/true)));
      return Status::Ok();
    });
  }
  if (name == "load_params") {
    return make([e](PackedArgs args, Value* ret) -> Status {
      SORUN_RETURN_IF_ERROR(args.ExpectCount(1, "load_params"));
      SORUN_ASSIGN_OR_RETURN(std::string_view bytes, args.GetStr(0));
      return e->LoadParams(bytes);
    });
  }
  if (name == "share_params") {
    return make([e](PackedArgs args, Value* ret) -> Status {
      SORUN_RETURN_IF_ERROR(args.ExpectCount(2, "share_params"));
      SORUN_ASSIGN_OR_RETURN(Module other, args.GetModule(0));
      GraphExecutor* o = AsGraphExecutor(other);
      if (o == nullptr) return InvalidArgument("share_params: argument 0 is not a graph executor");
      SORUN_ASSIGN_OR_RETURN(std::string_view bytes, args.GetStr(1));
      return e->ShareParams(*o, bytes);
    });
  }
  if (name == "run_individual" || name == "profile") {
    return make([e](PackedArgs args, Value* ret) -> Status {
      int64_t repeat = 1;
      if (args.size() >= 1) {
        SORUN_ASSIGN_OR_RETURN(repeat, args.GetInt(0));
      }
      SORUN_ASSIGN_OR_RETURN(std::vector<NodeProfile> prof, e->Profile(static_cast<int>(repeat)));
      rapidjson::StringBuffer buf;
      rapidjson::Writer<rapidjson::StringBuffer> w(buf);
      w.StartArray();
      for (const NodeProfile& p : prof) {
        w.StartObject();
        w.Key("node_id");
        w.Uint(p.node_id);
        w.Key("name");
        w.String(p.name.c_str());
        w.Key("func_name");
        w.String(p.func_name.c_str());
        w.Key("mean_us");
        w.Double(p.mean_us);
        w.Key("min_us");
        w.Double(p.min_us);
        w.EndObject();
      }
      w.EndArray();
      *ret = Value::Str(buf.GetString());
      return Status::Ok();
    });
  }
  if (name == "get_memory_plan") {
    return make([e](PackedArgs args, Value* ret) -> Status {
      *ret = Value::Str(MemoryPlanToJson(e->memory_plan()));
      return Status::Ok();
    });
  }
  return PackedFunc();
}

Module MakeGraphExecutorModule(std::unique_ptr<GraphExecutor> executor) {
  return Module(ObjectPtr<ModuleNode>(MakeObject<GraphExecutorModuleNode>(std::move(executor))));
}

GraphExecutor* AsGraphExecutor(const Module& module) {
  auto* node = ModuleNodeAs<GraphExecutorModuleNode>(module);
  return node ? &node->executor() : nullptr;
}

std::string TensorInfoToJson(const std::vector<TensorInfo>& infos) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("shape");
  w.StartObject();
  for (const TensorInfo& t : infos) {
    w.Key(t.name.c_str());
    w.StartArray();
    for (int64_t d : t.shape) w.Int64(d);
    w.EndArray();
  }
  w.EndObject();
  w.Key("dtype");
  w.StartObject();
  for (const TensorInfo& t : infos) {
    w.Key(t.name.c_str());
    w.String(DTypeToString(t.dtype).c_str());
  }
  w.EndObject();
  w.EndObject();
  return buf.GetString();
}

void WriteMemoryPlanJson(rapidjson::Writer<rapidjson::StringBuffer>& w, const std::vector<DeviceMemory>& devices,
                         bool with_workspace) {
  w.StartArray();
  for (const DeviceMemory& d : devices) {
    w.StartObject();
    w.Key("device");
    w.String(DeviceToString(d.device).c_str());
    w.Key("param_bytes");
    w.Uint64(d.weight_bytes);
    w.Key("activation_bytes");
    w.Uint64(d.activation_bytes);
    if (with_workspace) {
      w.Key("workspace_bytes");
      w.Uint64(d.workspace_bytes);
    }
    w.EndObject();
  }
  w.EndArray();
}

std::string MemoryPlanToJson(const MemoryPlan& plan) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("devices");
  WriteMemoryPlanJson(w, plan.devices, /*with_workspace=*/true);
  w.EndObject();
  return buf.GetString();
}

}  // namespace sorun
