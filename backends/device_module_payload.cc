#include "backends/device_module_payload.h"

#include <algorithm>
#include <set>

#include "runtime/c_runtime_api.h"
#include "runtime/data_type.h"
#include "runtime/function_registry.h"
#include "runtime/packed_func.h"

namespace sorun {
namespace {

// The dynamic shared-memory tag: "tir." up to TVM 0.25, "tirx." since 0.26.
bool IsDynSharedMemoryTag(const std::string& tag) {
  return tag == "tir.use_dyn_shared_memory" || tag == "tirx.use_dyn_shared_memory";
}

// What a launch tag that sorun cannot honour asks for, or null. TVM 0.23+ (tir./tirx. spellings; TVM
// spells "programtic" so): launch attributes of cuLaunchKernelEx, and cluster dimensions.
const char* RefusedLaunchTag(const std::string& tag) {
  static const struct {
    const char* suffix;
    const char* what;
  } kFlags[] = {
      {"use_programtic_dependent_launch", "programmatic dependent launch"},
      {"use_cooperative_launch", "cooperative launch"},
      {"use_required_block_dimension", "launch with the kernel's required block dimension"},
  };
  for (const char* prefix : {"tir.", "tirx."}) {
    const size_t n = std::char_traits<char>::length(prefix);
    if (tag.compare(0, n, prefix) != 0) continue;
    for (const auto& flag : kFlags) {
      if (tag.compare(n, std::string::npos, flag.suffix) == 0) return flag.what;
    }
  }
  if (tag.rfind("clusterCtaIdx.", 0) == 0 || tag.rfind("preferredClusterCtaIdx.", 0) == 0) {
    return "a thread-block cluster launch";
  }
  return nullptr;
}

// kDetect's test at the first kernel (see PayloadGrammar::kDetect): does `probe` (a copy of the
// reader, right after the kernel's launch tags) hold an arg_extra_tags vector?
bool LooksLikeArgExtraTags(BinaryReader probe, size_t num_args) {
  uint64_t count = 0;
  if (!probe.ReadU64(&count).ok() || count > num_args) return false;
  for (uint64_t i = 0; i < count; ++i) {
    int32_t tag = 0;
    if (!probe.ReadI32(&tag).ok() || (tag != kArgExtraTagNone && tag != kArgExtraTagTensorMap)) return false;
  }
  return true;
}

Status ReadI32Vector(BinaryReader& reader, std::vector<int32_t>* out, std::string_view what) {
  const uint64_t at = reader.offset();
  uint64_t count = 0;
  SORUN_RETURN_IF_ERROR(reader.ReadU64(&count));
  if (count > reader.remaining() / 4) {
    return reader.ErrorAt(at, std::string(what) + ": count " + std::to_string(count) + " is impossible with " +
                                  std::to_string(reader.remaining()) + " bytes left");
  }
  out->resize(count);
  for (auto& v : *out) SORUN_RETURN_IF_ERROR(reader.ReadI32(&v));
  return Status::Ok();
}

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

const char* PayloadGrammarName(PayloadGrammar grammar) {
  switch (grammar) {
    case PayloadGrammar::kLegacy: return "legacy";
    case PayloadGrammar::kFfi: return "ffi";
    case PayloadGrammar::kDetect: return "detect";
  }
  return "?";
}

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

Status ReadDeviceModulePayload(BinaryReader& reader, const char* module_kind, DeviceModulePayload* out,
                               PayloadGrammar grammar) {
  const std::string kind(module_kind);
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
    const std::string named = where + " '" + key + "'";
    SORUN_RETURN_IF_ERROR_CTX(reader.ReadString(&info.name, "FunctionInfo.name"), named);
    SORUN_RETURN_IF_ERROR_CTX(reader.ReadDataTypeVector(&info.arg_types, "arg_types"), named);
    SORUN_RETURN_IF_ERROR_CTX(reader.ReadStringVector(&info.launch_param_tags, "launch_param_tags"), named);
    if (grammar == PayloadGrammar::kDetect) {
      grammar = LooksLikeArgExtraTags(reader, info.arg_types.size()) ? PayloadGrammar::kFfi : PayloadGrammar::kLegacy;
    }
    if (grammar == PayloadGrammar::kFfi) {
      SORUN_RETURN_IF_ERROR_CTX(ReadI32Vector(reader, &info.arg_extra_tags, "arg_extra_tags"), named);
    }
    if (key.empty()) return reader.ErrorAt(entry_at, where + ": empty kernel name");
    if (!seen.insert(key).second) return reader.ErrorAt(entry_at, where + ": duplicate kernel '" + key + "'");
    auto config = LaunchConfig::FromFunctionInfo(key, info);
    if (!config.ok()) {
      Status at = reader.ErrorAt(entry_at, kind + " payload: " + config.status().message());
      if (config.status().code() != StatusCode::kUnimplemented) return at;
      return Status(StatusCode::kUnimplemented, at.message());  // a valid payload sorun cannot launch
    }
    out->functions.emplace_back(std::move(key), std::move(info));
  }
  std::sort(out->functions.begin(), out->functions.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadString(&out->data, "data"), kind + " payload");
  // With no kernel the two grammars are the same bytes.
  out->grammar = grammar == PayloadGrammar::kFfi ? PayloadGrammar::kFfi : PayloadGrammar::kLegacy;
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
    if (payload.grammar == PayloadGrammar::kFfi) {
      writer->WriteU64(kv.second.arg_extra_tags.size());
      for (int32_t tag : kv.second.arg_extra_tags) writer->WriteI32(tag);
    }
  }
  writer->WriteString(payload.data);
}

Status RegisterFfiBytesLoader(const char* kind, DevicePayloadLoader load) {
  if (kind == nullptr || *kind == '\0') return InvalidArgument("RegisterFfiBytesLoader: empty kind");
  if (!load) return InvalidArgument(std::string("RegisterFfiBytesLoader: null loader for '") + kind + "'");
  std::string name = std::string(kFfiLoadFromBytesPrefix) + kind;
  PackedFunc f = PackedFunc::FromBody(
      name, [kind = std::string(kind), load = std::move(load)](PackedArgs args, Value* ret) -> Status {
        SORUN_RETURN_IF_ERROR(args.ExpectCount(1, kFfiLoadFromBytesPrefix + kind));
        SORUN_ASSIGN_OR_RETURN(std::string_view bytes, args.GetStr(0));
        BinaryReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), kind + " payload");
        SORUN_ASSIGN_OR_RETURN(Module module, load(reader, PayloadGrammar::kFfi));
        if (!reader.at_end()) {
          return reader.Error(std::to_string(reader.remaining()) + " trailing bytes after the " + kind + " payload (" +
                              std::to_string(bytes.size()) + " bytes given)");
        }
        *ret = Value::FromModule(std::move(module));
        return Status::Ok();
      });
  return FunctionRegistry::Global().Register(std::move(name), std::move(f), /*allow_override=*/true);
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
  if (info.arg_extra_tags.size() > info.arg_types.size()) {
    return InvalidArgument("kernel '" + kernel + "': " + std::to_string(info.arg_extra_tags.size()) +
                           " arg_extra_tags for " + std::to_string(info.arg_types.size()) + " arguments");
  }
  for (size_t i = 0; i < info.arg_extra_tags.size(); ++i) {
    const int32_t tag = info.arg_extra_tags[i];
    if (tag == kArgExtraTagNone) continue;
    const std::string arg = "kernel '" + kernel + "' argument " + std::to_string(i);
    if (tag == kArgExtraTagTensorMap) {
      return Unimplemented(arg +
                           ": arg_extra_tags 1 (TensorMap: a CUDA TMA descriptor passed by value) is not "
                           "supported; sorun passes buffers as pointers and scalars by value");
    }
    return InvalidArgument(arg + ": unknown arg_extra_tags value " + std::to_string(tag) + " (0 none, 1 TensorMap)");
  }
  int max_dim = 0;
  for (size_t i = 0; i < info.launch_param_tags.size(); ++i) {
    const std::string& tag = info.launch_param_tags[i];
    if (IsDynSharedMemoryTag(tag)) {
      if (i + 1 != info.launch_param_tags.size()) {
        return InvalidArgument("kernel '" + kernel + "': launch tag '" + tag + "' must be the last tag");
      }
      config.use_dyn_shared_memory = true;
      continue;
    }
    if (const char* what = RefusedLaunchTag(tag)) {
      return Unimplemented("kernel '" + kernel + "': launch tag '" + tag + "' asks for " + what +
                           ", which sorun does not support (it launches with plain grid and block sizes)");
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

Status CheckCudaCodeFormat(const std::string& fmt, uint64_t image_bytes) {
  if (fmt == "cuda") {
    return Unimplemented(
        "cuda module: fmt 'cuda' is CUDA C++ source (TVM exported it without a CUDA driver); sorun loads ptx, "
        "cubin or fatbin: re-export on a machine with a CUDA driver and toolkit (TVM then compiles the source to ptx "
        "or cubin)");
  }
  if (fmt != "ptx" && fmt != "cubin" && fmt != "fatbin") {
    return InvalidArgument("cuda module: unknown code format '" + fmt + "' (expected ptx, cubin or fatbin)");
  }
  if (image_bytes == 0) return InvalidArgument("cuda module: the code image (fmt " + fmt + ") is empty");
  return Status::Ok();
}

}  // namespace sorun
