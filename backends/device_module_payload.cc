#include "backends/device_module_payload.h"

#include <algorithm>
#include <set>

#include "runtime/c_runtime_api.h"
#include "runtime/data_type.h"

namespace sorun {
namespace {

constexpr char kDynSharedMemoryTag[] = "tir.use_dyn_shared_memory";

// -1 if not a thread-axis tag; else 0..2 grid, 3..5 block.
int TagDim(const std::string& tag) {
  static const char* const kTags[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                      "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  for (int i = 0; i < 6; ++i) {
    if (tag == kTags[i]) return i;
  }
  return -1;
}

}  // namespace

const FunctionInfo* DeviceModulePayload::Find(const std::string& name) const {
  auto it = std::lower_bound(functions.begin(), functions.end(), name,
                             [](const auto& kv, const std::string& n) { return kv.first < n; });
  if (it != functions.end() && it->first == name) return &it->second;
  for (const auto& kv : functions) {  // unsorted input (written by hand)
    if (kv.first == name) return &kv.second;
  }
  return nullptr;
}

StatusOr<size_t> KernelArgBytes(DLDataType type) {
  if (type.lanes != 1) return InvalidArgument("vector argument type " + DTypeToString(type) + " is not supported");
  switch (type.code) {
    case kDLInt:
    case kDLUInt:
      if (type.bits == 8 || type.bits == 16 || type.bits == 32) return static_cast<size_t>(type.bits / 8);
      if (type.bits == 64) return size_t{8};
      break;
    case kDLFloat:
      if (type.bits == 32) return size_t{4};
      if (type.bits == 64) return size_t{8};
      break;
    case kDTypeHandle:
      if (type.bits == 64) return size_t{8};
      break;
    default: break;
  }
  return InvalidArgument("argument type " + DTypeToString(type) + " cannot be passed to a kernel");
}

Status ReadDeviceModulePayload(BinaryReader& reader, const char* module_kind, DeviceModulePayload* out) {
  const std::string kind(module_kind);
  uint64_t start = reader.offset();
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadString(&out->fmt, "fmt"), kind + " payload");
  uint64_t fmap_at = reader.offset();
  uint64_t count = 0;
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadU64(&count), kind + " payload: function map");
  // Each entry takes at least 8 (key) + 8 (name) + 8 + 8 bytes.
  if (count > reader.remaining() / 32) {
    return reader.ErrorAt(fmap_at, kind + " payload: function map count " + std::to_string(count) +
                                       " is impossible with " + std::to_string(reader.remaining()) + " bytes left");
  }
  out->functions.clear();
  std::set<std::string> seen;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t entry_at = reader.offset();
    std::string key;
    FunctionInfo info;
    const std::string where = kind + " payload: function " + std::to_string(i);
    SORUN_RETURN_IF_ERROR_CTX(reader.ReadString(&key, "kernel name"), where);
    SORUN_RETURN_IF_ERROR_CTX(reader.ReadString(&info.name, "FunctionInfo.name"), where + " '" + key + "'");
    SORUN_RETURN_IF_ERROR_CTX(reader.ReadDataTypeVector(&info.arg_types, "arg_types"), where + " '" + key + "'");
    SORUN_RETURN_IF_ERROR_CTX(reader.ReadStringVector(&info.launch_param_tags, "launch_param_tags"),
                              where + " '" + key + "'");
    if (key.empty()) return reader.ErrorAt(entry_at, where + ": empty kernel name");
    if (!seen.insert(key).second) return reader.ErrorAt(entry_at, where + ": duplicate kernel '" + key + "'");
    auto config = LaunchConfig::FromFunctionInfo(key, info);
    if (!config.ok()) return reader.ErrorAt(entry_at, kind + " payload: " + config.status().message());
    out->functions.emplace_back(std::move(key), std::move(info));
  }
  std::sort(out->functions.begin(), out->functions.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadString(&out->data, "data"), kind + " payload");
  (void)start;
  return Status::Ok();
}

void WriteDeviceModulePayload(const DeviceModulePayload& payload, BinaryWriter* writer) {
  writer->WriteString(payload.fmt);
  writer->WriteU64(payload.functions.size());
  for (const auto& kv : payload.functions) {
    writer->WriteString(kv.first);
    writer->WriteString(kv.second.name);
    writer->WriteDataTypeVector(kv.second.arg_types);
    writer->WriteStringVector(kv.second.launch_param_tags);
  }
  writer->WriteString(payload.data);
}

StatusOr<LaunchConfig> LaunchConfig::FromFunctionInfo(const std::string& kernel, const FunctionInfo& info) {
  LaunchConfig config;
  config.num_kernel_args = static_cast<int>(info.arg_types.size());
  for (size_t i = 0; i < info.arg_types.size(); ++i) {
    auto bytes = KernelArgBytes(info.arg_types[i]);
    if (!bytes.ok()) {
      return InvalidArgument("kernel '" + kernel + "' argument " + std::to_string(i) + ": " + bytes.status().message());
    }
  }
  int max_dim = 0;
  for (size_t i = 0; i < info.launch_param_tags.size(); ++i) {
    const std::string& tag = info.launch_param_tags[i];
    if (tag == kDynSharedMemoryTag) {
      if (i + 1 != info.launch_param_tags.size()) {
        return InvalidArgument("kernel '" + kernel + "': launch tag '" + std::string(kDynSharedMemoryTag) +
                               "' must be the last tag");
      }
      config.use_dyn_shared_memory = true;
      continue;
    }
    int dim = TagDim(tag);
    if (dim < 0) return InvalidArgument("kernel '" + kernel + "': unknown launch tag '" + tag + "'");
    config.tag_dims.push_back(dim);
    max_dim = std::max(max_dim, dim % 3);
  }
  config.work_dim = max_dim + 1;
  return config;
}

StatusOr<LaunchDims> ExtractLaunchDims(const std::string& kernel, const LaunchConfig& config, const TVMValue* values,
                                       const int* codes, int num_args) {
  if (num_args != config.num_packed_args()) {
    return InvalidArgument("kernel '" + kernel + "' expects " + std::to_string(config.num_packed_args()) +
                           " packed arguments (" + std::to_string(config.num_kernel_args) + " parameters + " +
                           std::to_string(config.num_packed_args() - config.num_kernel_args) + " launch values), got " +
                           std::to_string(num_args));
  }
  LaunchDims dims;
  int index = config.num_kernel_args;
  for (int dim : config.tag_dims) {
    if (codes[index] != kTVMArgInt && codes[index] != kTVMArgBool) {
      return InvalidArgument("kernel '" + kernel + "': launch value (argument " + std::to_string(index) +
                             ") must be an integer");
    }
    int64_t v = values[index].v_int64;
    if (v > 0) {
      if (dim < 3) {
        dims.grid[dim] = v;
      } else {
        dims.block[dim - 3] = v;
      }
    }
    ++index;
  }
  if (config.use_dyn_shared_memory) {
    if (codes[index] != kTVMArgInt) {
      return InvalidArgument("kernel '" + kernel + "': dynamic shared memory size must be an integer");
    }
    dims.dyn_shared_bytes = values[index].v_int64 < 0 ? 0 : values[index].v_int64;
  }
  return dims;
}

}  // namespace sorun
