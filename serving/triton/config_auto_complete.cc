#include "serving/triton/config_auto_complete.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdlib>

#include "serving/triton/data_types.h"

namespace sorun::triton {
namespace {

using rapidjson::Value;

// True when `key` is absent, null or an empty array.
bool IsEmptyArray(const Value& config, const char* key) {
  auto it = config.FindMember(key);
  return it == config.MemberEnd() || it->value.IsNull() || (it->value.IsArray() && it->value.Empty());
}

int64_t ReadMaxBatchSize(const Value& config) {
  auto it = config.FindMember("max_batch_size");
  if (it == config.MemberEnd()) return 0;
  if (it->value.IsInt64()) return it->value.GetInt64();
  if (it->value.IsString()) return std::atoll(it->value.GetString());
  return 0;
}

void SetMember(Value& object, const char* key, Value value, rapidjson::Document::AllocatorType& alloc) {
  auto it = object.FindMember(key);
  if (it != object.MemberEnd()) {
    it->value = std::move(value);
  } else {
    object.AddMember(Value(key, alloc), std::move(value), alloc);
  }
}

// Sets `key` of `config` to the entries of the non-parameter `tensors`.
Status SetTensorEntries(Value& config, const char* key, const std::vector<TensorInfo>& tensors, bool batched,
                        rapidjson::Document::AllocatorType& alloc) {
  Value array(rapidjson::kArrayType);
  for (const TensorInfo& info : tensors) {
    if (info.is_param) continue;
    StatusOr<TRITONSERVER_DataType> type = ToTritonDataType(info.dtype);
    if (!type.ok()) return Status(type.status()).Annotate("tensor '" + info.name + "'");
    Value entry(rapidjson::kObjectType);
    entry.AddMember("name", Value(info.name.c_str(), alloc), alloc);
    entry.AddMember("data_type", Value(ConfigDataTypeName(*type).c_str(), alloc), alloc);
    Value dims(rapidjson::kArrayType);
    for (size_t d = batched ? 1 : 0; d < info.shape.size(); ++d) dims.PushBack(Value(info.shape[d]), alloc);
    // Triton has no 0-d tensors (dims must not be empty; an empty reshape only under batching): a
    // 0-d model tensor (per batch row, when batched) is served as dims [1] (ModelState's binding rule).
    if (dims.Empty()) dims.PushBack(Value(1), alloc);
    entry.AddMember("dims", std::move(dims), alloc);
    array.PushBack(std::move(entry), alloc);
  }
  SetMember(config, key, std::move(array), alloc);
  return Status::Ok();
}

}  // namespace

bool HasBatchDimension(const std::vector<TensorInfo>& model_inputs, const std::vector<TensorInfo>& model_outputs) {
  bool any = false;
  for (const auto* list : {&model_inputs, &model_outputs}) {
    for (const TensorInfo& info : *list) {
      if (info.is_param) continue;
      if (info.shape.empty() || (info.shape[0] != 1 && info.shape[0] != -1)) return false;
      any = true;
    }
  }
  return any;
}

StatusOr<std::optional<std::string>> AutoCompleteConfig(std::string_view config_json,
                                                        const std::vector<TensorInfo>& model_inputs,
                                                        const std::vector<TensorInfo>& model_outputs,
                                                        int64_t default_max_batch_size) {
  rapidjson::Document doc;
  doc.Parse(config_json.data(), config_json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return DataLoss("model config JSON: " + std::string(doc.HasParseError()
                                                            ? rapidjson::GetParseError_En(doc.GetParseError())
                                                            : "not an object"));
  }
  auto& alloc = doc.GetAllocator();
  const bool fill_inputs = IsEmptyArray(doc, "input");
  const bool fill_outputs = IsEmptyArray(doc, "output");
  if (!fill_inputs && !fill_outputs) return std::optional<std::string>();

  int64_t max_batch_size = ReadMaxBatchSize(doc);
  if (fill_inputs && fill_outputs && max_batch_size == 0 && default_max_batch_size > 0 &&
      HasBatchDimension(model_inputs, model_outputs)) {
    max_batch_size = default_max_batch_size;
    SetMember(doc, "max_batch_size", Value(max_batch_size), alloc);
    auto has_block = [&](const char* key) {
      auto it = doc.FindMember(key);
      return it != doc.MemberEnd() && it->value.IsObject();
    };
    if (!has_block("dynamic_batching") && !has_block("sequence_batching") && !has_block("ensemble_scheduling")) {
      SetMember(doc, "dynamic_batching", Value(rapidjson::kObjectType), alloc);
    }
  }
  const bool batched = max_batch_size > 0;
  if (fill_inputs) SORUN_RETURN_IF_ERROR(SetTensorEntries(doc, "input", model_inputs, batched, alloc));
  if (fill_outputs) SORUN_RETURN_IF_ERROR(SetTensorEntries(doc, "output", model_outputs, batched, alloc));
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  doc.Accept(writer);
  return std::optional<std::string>(std::string(buffer.GetString(), buffer.GetSize()));
}

}  // namespace sorun::triton
