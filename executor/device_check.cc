#include "executor/device_check.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_set>

#include "runtime/data_type.h"
#include "runtime/device_module_kind.h"

namespace sorun {
namespace {

bool Contains(const std::vector<DLDeviceType>& types, DLDeviceType type) {
  return std::find(types.begin(), types.end(), type) != types.end();
}

// The type keys of `m` and its imports, depth-first; a module imported twice is read once.
void CollectTypeKeys(const Module& m, std::unordered_set<const ModuleNode*>* seen, std::vector<std::string_view>* out) {
  if (!m.defined() || !seen->insert(m.get()).second) return;
  out->emplace_back(m.type_key());
  for (const Module& child : m.imports()) CollectTypeKeys(child, seen, out);
}

// "a cuda", "an OpenCL module".
std::string WithArticle(const std::string& noun) {
  const bool vowel = !noun.empty() && std::string("AEIOUaeiou").find(noun[0]) != std::string::npos;
  return (vowel ? "an " : "a ") + noun;
}

// "a CUDA module", "a CUDA module and an OpenCL module".
std::string ModulesPhrase(const std::vector<DLDeviceType>& needed) {
  std::string out;
  for (size_t i = 0; i < needed.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == needed.size() ? " and " : ", ") + WithArticle(DeviceModuleName(needed[i]));
  }
  return out;
}

// "cpu", "cuda", "cuda and opencl".
std::string TypesPhrase(const std::vector<DLDeviceType>& needed) {
  std::string out;
  for (size_t i = 0; i < needed.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == needed.size() ? " and " : ", ") + std::string(DeviceTypeName(needed[i]));
  }
  return out;
}

// "cpu:0", "cpu:0, opencl:0"; "no device" for none.
std::string DevicesPhrase(const std::vector<DLDevice>& devices) {
  std::string out;
  for (const DLDevice& d : devices) out += (out.empty() ? "" : ", ") + DeviceToString(d);
  return out.empty() ? "no device" : out;
}

}  // namespace

std::vector<DLDeviceType> DeviceTypesNeeded(const Module& tree) {
  std::unordered_set<const ModuleNode*> seen;
  std::vector<std::string_view> type_keys;  // views of the modules' keys, alive with `tree`
  CollectTypeKeys(tree, &seen, &type_keys);
  return DeviceTypesOfModules(type_keys);
}

Status CheckExecutorDevices(const std::vector<DLDeviceType>& needed, const std::vector<DLDevice>& devices) {
  for (DLDeviceType type : needed) {
    if (type == kDLCPU) continue;
    const bool given =
        std::any_of(devices.begin(), devices.end(), [type](const DLDevice& d) { return d.device_type == type; });
    if (given) continue;
    return InvalidArgument("its kernels are in " + ModulesPhrase(needed) + ": it needs " +
                           WithArticle(DeviceTypeName(type)) + " device, the executor was given " +
                           DevicesPhrase(devices));
  }
  for (const DLDevice& d : devices) {
    if (d.device_type == kDLCPU || Contains(needed, d.device_type)) continue;
    return InvalidArgument("it has kernels for " + TypesPhrase(needed) + " only (no " +
                           DeviceModuleName(d.device_type) + "): it cannot run on " + DeviceToString(d));
  }
  return Status::Ok();
}

}  // namespace sorun
