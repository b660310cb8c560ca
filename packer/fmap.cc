#include "packer/fmap.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>

#include "base/file_util.h"
#include "runtime/data_type.h"

namespace sorun {
namespace {

using rapidjson::Value;

Status ReadStringArray(const Value& v, const std::string& where, std::vector<std::string>* out) {
  if (!v.IsArray()) return InvalidArgument(where + " must be an array of strings");
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    if (!v[i].IsString()) return InvalidArgument(where + "[" + std::to_string(i) + "] must be a string");
    out->emplace_back(v[i].GetString(), v[i].GetStringLength());
  }
  return Status::Ok();
}

StatusOr<FunctionInfo> ParseKernel(const std::string& source_name, const std::string& kernel, const Value& v,
                                   const std::string& where) {
  if (!v.IsObject()) return InvalidArgument(where + " must be an object");
  FunctionInfo info;
  bool has_args = false, has_tags = false, has_alias = false;
  std::vector<std::string> alias_tags;
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    std::string key(it->name.GetString(), it->name.GetStringLength());
    const Value& field = it->value;
    if (key == "name") {
      if (!field.IsString()) return InvalidArgument(where + ": \"name\" must be a string");
      info.name.assign(field.GetString(), field.GetStringLength());
    } else if (key == "arg_types") {
      has_args = true;
      std::vector<std::string> types;
      SORUN_RETURN_IF_ERROR(ReadStringArray(field, where + ": \"arg_types\"", &types));
      for (size_t i = 0; i < types.size(); ++i) {
        auto t = ParseDType(types[i]);
        if (!t.ok()) {
          return InvalidArgument(where + ": arg_types[" + std::to_string(i) + "]: " + t.status().message());
        }
        info.arg_types.push_back(*t);
      }
    } else if (key == "launch_param_tags") {
      has_tags = true;
      SORUN_RETURN_IF_ERROR(ReadStringArray(field, where + ": \"launch_param_tags\"", &info.launch_param_tags));
    } else if (key == "thread_axis_tags") {
      has_alias = true;
      SORUN_RETURN_IF_ERROR(ReadStringArray(field, where + ": \"thread_axis_tags\"", &alias_tags));
    } else if (key == "arg_extra_tags") {
      if (!field.IsArray()) return InvalidArgument(where + ": \"arg_extra_tags\" must be an array of integers");
      for (rapidjson::SizeType i = 0; i < field.Size(); ++i) {
        if (!field[i].IsInt())
          return InvalidArgument(where + ": arg_extra_tags[" + std::to_string(i) + "] must be an integer");
        if (field[i].GetInt() != 0) {
          return InvalidArgument(
              where + ": arg_extra_tags[" + std::to_string(i) + "] is " + std::to_string(field[i].GetInt()) +
              " (a TVM v0.21+ tag such as TensorMap); the legacy payload sorun writes cannot carry it");
        }
      }
    } else {
      return InvalidArgument(where + ": unknown key \"" + key +
                             "\" (expected name, arg_types, launch_param_tags or thread_axis_tags)");
    }
  }
  if (!has_args) return InvalidArgument(where + ": missing \"arg_types\"");
  if (has_alias) {
    if (has_tags && alias_tags != info.launch_param_tags) {
      return InvalidArgument(where + ": \"launch_param_tags\" and \"thread_axis_tags\" disagree (give one)");
    }
    info.launch_param_tags = std::move(alias_tags);
  }
  auto config = LaunchConfig::FromFunctionInfo(kernel, info);
  // Its message names the kernel already.
  if (!config.ok()) return InvalidArgument(source_name + ": " + config.status().message());
  return info;
}

}  // namespace

StatusOr<KernelMap> ParseFmapJson(std::string_view json, const std::string& source_name) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return InvalidArgument(source_name + " byte " + std::to_string(doc.GetErrorOffset()) +
                           ": invalid JSON: " + rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsObject()) return InvalidArgument(source_name + ": expected a JSON object with \"func_info\"");
  const rapidjson::Value* func_info = nullptr;
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
    std::string key(it->name.GetString(), it->name.GetStringLength());
    if (key == "func_info") {
      func_info = &it->value;
    } else if (key == "tvm_version") {
      if (!it->value.IsString()) return InvalidArgument(source_name + ": \"tvm_version\" must be a string");
    } else {
      return InvalidArgument(source_name + ": unknown key \"" + key + "\" (expected func_info and tvm_version)");
    }
  }
  if (func_info == nullptr) return InvalidArgument(source_name + ": missing \"func_info\"");
  if (!func_info->IsObject()) return InvalidArgument(source_name + ": \"func_info\" must be an object of kernels");
  if (func_info->MemberCount() == 0) return InvalidArgument(source_name + ": \"func_info\" lists no kernels");
  KernelMap kernels;
  for (auto it = func_info->MemberBegin(); it != func_info->MemberEnd(); ++it) {
    std::string name(it->name.GetString(), it->name.GetStringLength());
    std::string where = source_name + ": kernel '" + name + "'";
    if (name.empty()) return InvalidArgument(source_name + ": a kernel has an empty name");
    for (const auto& kv : kernels) {
      if (kv.first == name) return InvalidArgument(where + " is listed twice");
    }
    SORUN_ASSIGN_OR_RETURN(FunctionInfo info, ParseKernel(source_name, name, it->value, where));
    kernels.emplace_back(std::move(name), std::move(info));
  }
  std::sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return kernels;
}

StatusOr<KernelMap> ReadFmapFile(const std::string& path) {
  SORUN_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseFmapJson(text, path);
}

}  // namespace sorun
