#include "runtime/blob_loader.h"

#include "runtime/function_registry.h"
#include "runtime/registry_keys.h"

namespace sorun {

Status RegisterBlobLoader(const std::string& type_key, BlobLoaderFn fn) {
  if (type_key.empty()) return InvalidArgument("RegisterBlobLoader: empty type key");
  if (!fn) return InvalidArgument("RegisterBlobLoader: null loader for '" + type_key + "'");
  std::string name = std::string(keys::kLoadBinaryPrefix) + type_key;
  PackedFunc f = PackedFunc::FromBody(name, [fn = std::move(fn)](PackedArgs args, Value* ret) -> Status {
    SORUN_RETURN_IF_ERROR(args.ExpectCount(1, "blob loader"));
    SORUN_ASSIGN_OR_RETURN(void* handle, args.GetHandle(0));
    if (handle == nullptr) return InvalidArgument("blob loader: null reader");
    SORUN_ASSIGN_OR_RETURN(Module m, fn(*static_cast<BinaryReader*>(handle)));
    *ret = Value::FromModule(std::move(m));
    return Status::Ok();
  });
  return FunctionRegistry::Global().Register(std::move(name), std::move(f), /*allow_override=*/true);
}

std::vector<std::string> RegisteredBlobLoaderKeys() {
  const std::string prefix = keys::kLoadBinaryPrefix;
  std::vector<std::string> out;
  for (const std::string& name : FunctionRegistry::Global().ListNames(prefix))
    out.push_back(name.substr(prefix.size()));
  return out;
}

namespace {

// Why a well-known module type has no loader here: this build does not link the part that reads it.
std::string MissingLoaderHint(const std::string& type_key) {
  if (type_key == keys::kTypeKeyGraphExecutorFactory || type_key == keys::kTypeKeyLegacyGraphRuntimeFactory) {
    return "; it is a graph-executor model and this runtime does not link the graph executor (link //api:sorun, "
           "//api:sorun_cpu or a graph runtime)";
  }
  if (type_key == keys::kTypeKeyRelaxExecutable || type_key == keys::kTypeKeyRelaxVmExecutable) {
    return "; it is a Relax VM export and this runtime does not link the Relax VM (link //api:sorun, //api:sorun_cpu "
           "or a VM runtime)";
  }
  if (type_key == keys::kTypeKeyCuda || type_key == keys::kTypeKeyOpenCL) {
    return "; its device code needs the " + type_key + " backend, which this runtime does not link (//api:sorun does)";
  }
  return "";
}

}  // namespace

StatusOr<Module> RunBlobLoader(const std::string& type_key, BinaryReader& reader) {
  FunctionRegistry& registry = FunctionRegistry::Global();
  PackedFunc loader = registry.Get(std::string(keys::kLoadBinaryPrefix) + type_key);
  if (!loader.defined()) loader = registry.Get(std::string(keys::kLegacyLoadBinaryPrefix) + type_key);
  if (!loader.defined()) {
    std::string known;
    for (const std::string& k : RegisteredBlobLoaderKeys()) known += (known.empty() ? "" : ", ") + k;
    return NotFound("binary was created using module type '" + type_key +
                    "' but no loader of that name is registered (registered: " +
                    (known.empty() ? std::string("none") : known) + ")" + MissingLoaderHint(type_key));
  }
  SORUN_ASSIGN_OR_RETURN(Value v, loader(static_cast<void*>(&reader)));
  auto m = v.AsModule();
  if (!m.ok()) return Internal("loader for '" + type_key + "' did not return a module");
  return *m;
}

}  // namespace sorun
