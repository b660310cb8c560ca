#include "runtime/function_registry.h"

#include <algorithm>
#include <mutex>

#include "runtime/device_api.h"
#include "runtime/registry_keys.h"

namespace sorun {

FunctionRegistry& FunctionRegistry::Global() {
  static FunctionRegistry* registry = [] {
    auto* r = new FunctionRegistry();  // lives until exit
    RegisterCoreFunctions(*r).IgnoreError();
    return r;
  }();
  return *registry;
}

Status FunctionRegistry::Register(std::string name, PackedFunc f, bool allow_override) {
  if (!f.defined()) return InvalidArgument("cannot register a null function as '" + name + "'");
  std::unique_lock<std::shared_mutex> lock(mutex_);
  auto it = functions_.find(name);
  if (it != functions_.end() && !allow_override) {
    return AlreadyExists("global function '" + name + "' is already registered");
  }
  functions_[std::move(name)] = std::move(f);
  return Status::Ok();
}

PackedFunc FunctionRegistry::Get(std::string_view name) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  auto it = functions_.find(std::string(name));
  return it == functions_.end() ? PackedFunc() : it->second;
}

bool FunctionRegistry::Remove(std::string_view name) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  return functions_.erase(std::string(name)) > 0;
}

std::vector<std::string> FunctionRegistry::ListNames(std::string_view prefix) const {
  std::vector<std::string> names;
  {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    for (const auto& kv : functions_) {
      if (kv.first.compare(0, prefix.size(), prefix) == 0) names.push_back(kv.first);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

Status RegisterCoreFunctions(FunctionRegistry& registry) {
  if (registry.Get(keys::kSetDevice).defined()) return Status::Ok();
  return registry.Register(keys::kSetDevice,
                           PackedFunc::FromBody(keys::kSetDevice, [](PackedArgs args, Value* ret) -> Status {
                             SORUN_RETURN_IF_ERROR(args.ExpectCount(2, keys::kSetDevice));
                             SORUN_ASSIGN_OR_RETURN(int64_t type, args.GetInt(0));
                             SORUN_ASSIGN_OR_RETURN(int64_t id, args.GetInt(1));
                             SORUN_ASSIGN_OR_RETURN(DeviceApi * api, GetDeviceApi(static_cast<int>(type)));
                             return api->SetDevice(static_cast<int>(id));
                           }));
}

}  // namespace sorun
