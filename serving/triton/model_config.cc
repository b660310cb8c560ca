#include "serving/triton/model_config.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <cerrno>
#include <cstdlib>

#include "serving/triton/data_types.h"

namespace sorun::triton {
namespace {

using rapidjson::Value;

// An integer field: a JSON number or a decimal string (protobuf's JSON mapping of int64).
StatusOr<int64_t> ReadInt(const Value& value, const std::string& where) {
  if (value.IsInt64()) return value.GetInt64();
  if (value.IsString()) {
    const char* text = value.GetString();
    char* end = nullptr;
    errno = 0;
    long long parsed = std::strtoll(text, &end, 10);
    if (errno == 0 && end != text && *end == '\0') return static_cast<int64_t>(parsed);
  }
  return DataLoss("model config: " + where + " is not an integer");
}

StatusOr<std::string> ReadString(const Value& object, const char* key, const std::string& where) {
  auto it = object.FindMember(key);
  if (it == object.MemberEnd() || it->value.IsNull()) return std::string();
  if (!it->value.IsString()) return DataLoss("model config: " + where + "." + key + " is not a string");
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

// The integer array `key` of `object` (absent or null: empty, as protobuf's JSON leaves out an empty list).
StatusOr<std::vector<int64_t>> ReadDims(const Value& object, const std::string& where, const char* key = "dims") {
  std::vector<int64_t> out;
  auto it = object.FindMember(key);
  if (it == object.MemberEnd() || it->value.IsNull()) return out;
  if (!it->value.IsArray()) return DataLoss("model config: " + where + "." + key + " is not an array");
  for (rapidjson::SizeType d = 0; d < it->value.Size(); ++d) {
    SORUN_ASSIGN_OR_RETURN(int64_t dim, ReadInt(it->value[d], where + "." + key + "[" + std::to_string(d) + "]"));
    out.push_back(dim);
  }
  return out;
}

// `input` or `output`: an array of tensor entries (absent or null: none).
StatusOr<std::vector<ConfigTensor>> ReadTensors(const Value& config, const char* key) {
  std::vector<ConfigTensor> out;
  auto it = config.FindMember(key);
  if (it == config.MemberEnd() || it->value.IsNull()) return out;
  if (!it->value.IsArray()) return DataLoss(std::string("model config: '") + key + "' is not an array");
  for (rapidjson::SizeType i = 0; i < it->value.Size(); ++i) {
    const Value& entry = it->value[i];
    std::string where = std::string(key) + "[" + std::to_string(i) + "]";
    if (!entry.IsObject()) return DataLoss("model config: " + where + " is not an object");
    ConfigTensor tensor;
    SORUN_ASSIGN_OR_RETURN(tensor.name, ReadString(entry, "name", where));
    where = std::string(key) + " '" + tensor.name + "'";
    SORUN_ASSIGN_OR_RETURN(std::string type_name, ReadString(entry, "data_type", where));
    tensor.data_type = ParseConfigDataType(type_name);
    if (tensor.data_type == TRITONSERVER_TYPE_INVALID) {
      return InvalidArgument("model config: " + where + " has data_type '" + type_name +
                             "'; expected TYPE_FP32, TYPE_INT64, ... (config.pbtxt names)");
    }
    SORUN_ASSIGN_OR_RETURN(tensor.dims, ReadDims(entry, where));
    auto reshape = entry.FindMember("reshape");
    if (reshape != entry.MemberEnd() && !reshape->value.IsNull()) {
      if (!reshape->value.IsObject()) return DataLoss("model config: " + where + ".reshape is not an object");
      tensor.has_reshape = true;
      SORUN_ASSIGN_OR_RETURN(tensor.reshape, ReadDims(reshape->value, where + ".reshape", "shape"));
    }
    out.push_back(std::move(tensor));
  }
  return out;
}

bool HasObject(const Value& config, const char* key) {
  auto it = config.FindMember(key);
  return it != config.MemberEnd() && it->value.IsObject();
}

}  // namespace

int64_t ModelConfig::CpuInstanceCount() const {
  int64_t count = 0;
  for (const ConfigInstanceGroup& group : instance_groups) {
    if (group.kind != "KIND_GPU") count += group.count;
  }
  return count > 0 ? count : 1;
}

StatusOr<ModelConfig> ParseModelConfig(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return DataLoss("model config JSON: " + std::string(rapidjson::GetParseError_En(doc.GetParseError())) +
                    " at byte " + std::to_string(doc.GetErrorOffset()));
  }
  if (!doc.IsObject()) return DataLoss("model config JSON is not an object");

  ModelConfig config;
  SORUN_ASSIGN_OR_RETURN(config.name, ReadString(doc, "name", "config"));
  auto mbs = doc.FindMember("max_batch_size");
  if (mbs != doc.MemberEnd() && !mbs->value.IsNull()) {
    SORUN_ASSIGN_OR_RETURN(config.max_batch_size, ReadInt(mbs->value, "max_batch_size"));
    if (config.max_batch_size < 0) {
      return InvalidArgument("model config: max_batch_size is " + std::to_string(config.max_batch_size) +
                             "; it must be 0 (no batching) or positive");
    }
  }
  SORUN_ASSIGN_OR_RETURN(config.inputs, ReadTensors(doc, "input"));
  SORUN_ASSIGN_OR_RETURN(config.outputs, ReadTensors(doc, "output"));
  SORUN_ASSIGN_OR_RETURN(config.default_model_filename, ReadString(doc, "default_model_filename", "config"));
  config.dynamic_batching = HasObject(doc, "dynamic_batching");
  config.sequence_batching = HasObject(doc, "sequence_batching");

  auto params = doc.FindMember("parameters");
  if (params != doc.MemberEnd() && !params->value.IsNull()) {
    if (!params->value.IsObject()) return DataLoss("model config: 'parameters' is not an object");
    for (auto it = params->value.MemberBegin(); it != params->value.MemberEnd(); ++it) {
      std::string key(it->name.GetString(), it->name.GetStringLength());
      if (!it->value.IsObject()) return DataLoss("model config: parameters '" + key + "' is not an object");
      SORUN_ASSIGN_OR_RETURN(std::string value, ReadString(it->value, "string_value", "parameters '" + key + "'"));
      config.parameters[key] = value;
    }
  }

  auto groups = doc.FindMember("instance_group");
  if (groups != doc.MemberEnd() && !groups->value.IsNull()) {
    if (!groups->value.IsArray()) return DataLoss("model config: 'instance_group' is not an array");
    for (rapidjson::SizeType i = 0; i < groups->value.Size(); ++i) {
      const Value& entry = groups->value[i];
      std::string where = "instance_group[" + std::to_string(i) + "]";
      if (!entry.IsObject()) return DataLoss("model config: " + where + " is not an object");
      ConfigInstanceGroup group;
      SORUN_ASSIGN_OR_RETURN(group.kind, ReadString(entry, "kind", where));
      auto count = entry.FindMember("count");
      if (count != entry.MemberEnd() && !count->value.IsNull()) {
        SORUN_ASSIGN_OR_RETURN(group.count, ReadInt(count->value, where + ".count"));
      }
      auto gpus = entry.FindMember("gpus");
      if (gpus != entry.MemberEnd() && gpus->value.IsArray()) group.gpu_count = gpus->value.Size();
      config.instance_groups.push_back(std::move(group));
    }
  }
  return config;
}

}  // namespace sorun::triton
