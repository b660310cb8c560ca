#include "inspect/runnable_check.h"

#include <algorithm>
#include <cstring>

#include "runtime/registry_keys.h"

namespace sorun {
namespace {

// The entry `__tvm_main__` names when it is LLVM's string form (a data object holding the entry
// function's name), or "" when it is not one.
std::string MainAliasTarget(const ModelFile& file) {
  for (const ModelFileMember& m : file.members()) {
    auto data = m.image.FindSymbolData(keys::kSymbolModuleMain);
    if (!data.ok() || data->size == 0) continue;
    const char* text = reinterpret_cast<const char*>(data->data);
    size_t n = strnlen(text, static_cast<size_t>(std::min<uint64_t>(data->size, 512)));
    if (n > 0 && n < data->size) return std::string(text, n);
  }
  return "";
}

// True if a device module of the blob (opencl, cuda: modules whose functions are kernels) lists `name`.
bool IsDeviceKernel(const InspectReport& report, const std::string& name) {
  for (const InspectedDeviceModule& m : report.device_modules) {
    for (const InspectedKernel& k : m.kernels) {
      if (k.name == name) return true;
    }
  }
  return false;
}

// The kernel rule over the file's symbol tables; `caller` names the node for messages.
Status CheckKernel(const ModelFile& file, const InspectReport& report, const std::string& kernel,
                   const std::string& caller) {
  const std::vector<std::string>& exported = file.host_functions();
  auto is_exported = [&](const std::string& name) {
    return std::binary_search(exported.begin(), exported.end(), name);
  };
  const std::string where = file.path() + ": " + caller + ": kernel function '" + kernel + "'";
  if (keys::IsReservedAbiSymbol(kernel)) {
    return FailedPrecondition(where + " is a name reserved by the TVM/sorun ABI, never a kernel");
  }
  if (is_exported(kernel) || IsDeviceKernel(report, kernel)) return Status::Ok();
  if (kernel == keys::kSymbolModuleMain) {
    std::string target = MainAliasTarget(file);
    if (!target.empty()) {
      if (keys::IsReservedAbiSymbol(target) || !is_exported(target)) {
        return FailedPrecondition(where + " names '" + target + "', which is not a function the library exports");
      }
      return Status::Ok();
    }
  }
  for (const ModelFileMember& m : file.members()) {
    if (m.image.FindDefinedSymbol(kernel) != nullptr) {
      return FailedPrecondition(where +
                                " is defined by the library but is not an exported function (a data object, a local "
                                "or a hidden symbol)");
    }
  }
  return FailedPrecondition(where +
                            " is not a function the library exports (a name it does not define, or one that only a "
                            "dependency such as libc defines, is never called)");
}

}  // namespace

Status CheckRunnable(const ModelFile& file, const InspectReport& report) {
  if (report.kind != ArtifactKind::kPackedModel) {
    return FailedPrecondition(file.path() +
                              ": no module blob: a kernel library is run with a graph and params "
                              "given separately (three-file deployment)");
  }
  if (report.modules.empty()) return FailedPrecondition(file.path() + ": the module blob holds no module");
  if (!report.has_import_tree) {
    return FailedPrecondition(file.path() +
                              ": legacy blob layout (no _import_tree): the root is the kernel library, which "
                              "has no graph; run it with the graph JSON and params given separately");
  }
  const InspectedModule& root = report.modules[0];
  if (!keys::IsGraphExecutorFactoryTypeKey(root.type_key)) {
    return FailedPrecondition(file.path() + ": the root module (module 0) is '" + root.type_key +
                              "', not a GraphExecutorFactory: there is no graph to run");
  }
  if (root.children.empty()) {
    return FailedPrecondition(file.path() + ": module 0 (" + root.type_key +
                              ") imports no module: the executor has no kernel library");
  }
  const uint64_t first = root.children[0];
  if (first >= report.modules.size() || report.modules[first].type_key != keys::kTypeKeyLib) {
    const std::string key = first < report.modules.size() ? report.modules[first].type_key : "?";
    return FailedPrecondition(file.path() + ": module 0 (" + root.type_key + ") imports module " +
                              std::to_string(first) + " '" + key +
                              "' first, but the executor resolves kernels in its first import, which must be the "
                              "kernel library (_lib)");
  }
  if (!report.graph.has_value()) {
    return FailedPrecondition(file.path() + ": module 0 is a factory but no graph was read from it");
  }
  const InspectedGraph& graph = *report.graph;
  for (size_t i = 0; i < graph.kernels.size(); ++i) {
    const std::string caller = i < graph.kernel_callers.size() ? graph.kernel_callers[i] : "a node";
    SORUN_RETURN_IF_ERROR(CheckKernel(file, report, graph.kernels[i], caller));
  }
  return Status::Ok();
}

}  // namespace sorun
