#include "relax/export_check.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "relax/vm_builtin_table.h"
#include "runtime/registry_keys.h"

namespace sorun {
namespace relax {
namespace {

constexpr std::string_view kFfiKernelPrefix = "__tvm_ffi_";
constexpr std::string_view kFfiAbiPrefix = "__tvm_ffi__";  // library_bin, library_ctx, metadata: not kernels
constexpr std::string_view kVmTirKernelPrefix = "__vmtir__";

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// "'main' instruction 3" for instruction `pc`.
std::string InstructionLabel(const VmExecutable& exec, int64_t pc) {
  const int f = exec.FunctionOfInstruction(pc);
  const std::string fn = f < 0 ? std::string("<no function>") : "'" + exec.functions[static_cast<size_t>(f)].name + "'";
  return fn + " instruction " + std::to_string(pc);
}

// Where function `index` is first reached: "'main' instruction 3" (a Call of it, or an instruction
// passing it as a function-index argument); the table entry when no instruction names it (an entry point).
std::string FirstUse(const VmExecutable& exec, int index) {
  for (size_t pc = 0; pc < exec.instructions.size(); ++pc) {
    const VmInstruction& in = exec.instructions[pc];
    if (in.op != VmOpcode::kCall) continue;
    if (in.func_index == index) return InstructionLabel(exec, static_cast<int64_t>(pc)) + ": calls";
    for (const VmArg& a : in.args) {
      if (a.kind == VmArgKind::kFuncIdx && a.value == index) {
        return InstructionLabel(exec, static_cast<int64_t>(pc)) + ": passes";
      }
    }
  }
  return "function table entry " + std::to_string(index) + ":";
}

void RefuseCompiledMode(const VmExecutable& exec, std::vector<std::string>* lines) {
  for (size_t i = 0; i < exec.functions.size(); ++i) {
    const VmFunction& fn = exec.functions[i];
    if (fn.kind == VmFunctionKind::kVmTirFunc) {
      lines->push_back("function table entry " + std::to_string(i) + " '" + fn.name +
                       "': compiled-mode (vmtir) function: exported with exec_mode=\"compiled\"; sorun runs "
                       "exec_mode=\"bytecode\" exports");
    } else if (StartsWith(fn.name, kVmTirKernelPrefix)) {
      lines->push_back("function table entry " + std::to_string(i) + " '" + fn.name +
                       "': compiled-mode (vmtir) kernel: exported with exec_mode=\"compiled\"; sorun runs "
                       "exec_mode=\"bytecode\" exports");
    }
  }
}

void RefuseCallees(const VmExecutable& exec, const RelaxLibraryFacts& lib, BlobGeneration generation,
                   std::vector<std::string>* lines) {
  for (const CalleeInfo& c : ClassifyFunctions(exec, lib.is_kernel)) {
    if (c.callee_class != CalleeClass::kUnsupported) continue;
    const VmFunction& fn = exec.functions[static_cast<size_t>(c.function_index)];
    if (fn.kind == VmFunctionKind::kVmTirFunc || StartsWith(fn.name, kVmTirKernelPrefix)) continue;  // above
    // Reached by the bytecode? CheckCalleesSupported holds that rule; asked about this one callee.
    if (CheckCalleesSupported(exec, {c}).ok()) continue;
    const std::string where = FirstUse(exec, c.function_index);
    if (UnsupportedFamily(c.name).empty()) {
      const std::string symbol =
          generation == BlobGeneration::kLegacyDevMblob ? c.name : std::string(kFfiKernelPrefix) + c.name;
      lines->push_back(where + " '" + c.name + "': missing kernel: the library does not export '" + symbol +
                       "' and it is no builtin sorun implements");
    } else {
      lines->push_back(where + " '" + c.name + "': not supported (" + c.reason + ")");
    }
  }
}

}  // namespace

void MemoryScopeRefusals(const VmExecutable& exec, std::vector<std::string>* lines) {
  for (const VmConstantScope& s : exec.scopes) {
    if (IsSupportedMemoryScope(s.scope)) continue;
    lines->push_back("constant c[" + std::to_string(s.const_index) + "]: memory scope '" + s.scope +
                     "' (scope section) is not supported (the sorun VM allocates global memory only; texture scopes "
                     "are not supported yet)");
  }
  const int alloc_storage = exec.FindFunction(BuiltinName(Builtin::kAllocStorage));
  const int alloc_tensor = exec.FindFunction(BuiltinName(Builtin::kAllocTensor));
  for (size_t pc = 0; pc < exec.instructions.size(); ++pc) {
    const VmInstruction& in = exec.instructions[pc];
    if (in.op != VmOpcode::kCall || in.func_index < 0 ||
        (in.func_index != alloc_storage && in.func_index != alloc_tensor)) {
      continue;
    }
    // alloc_storage(vm, shape, device_index, dtype_hint, scope); alloc_tensor(storage, offset, shape, dtype, [scope])
    if (in.args.size() < 5 || in.args[4].kind != VmArgKind::kConstIdx || in.args[4].value < 0 ||
        in.args[4].value >= static_cast<int64_t>(exec.constants.size())) {
      continue;
    }
    const VmConstant& c = exec.constants[static_cast<size_t>(in.args[4].value)];
    if (c.kind != VmConstantKind::kString || IsSupportedMemoryScope(c.str)) continue;
    lines->push_back(
        InstructionLabel(exec, static_cast<int64_t>(pc)) + ": " +
        exec.functions[static_cast<size_t>(in.func_index)].name + " in memory scope '" + c.str + "' (c[" +
        std::to_string(in.args[4].value) +
        "]) is not supported (the sorun VM allocates global memory only; texture scopes are not supported yet)");
  }
}

namespace {

void RefuseModules(const LibraryBlob& blob, int root, std::vector<std::string>* lines) {
  for (size_t i = 0; i < blob.modules.size(); ++i) {
    const std::string& key = blob.modules[i].type_key;
    if (static_cast<int>(i) == root || key == keys::kTypeKeyLib || key == keys::kTypeKeyCuda ||
        key == keys::kTypeKeyOpenCL) {
      continue;
    }
    lines->push_back("module " + std::to_string(i) + " '" + key + "' (type key at byte " +
                     std::to_string(blob.modules[i].key_offset) + " of " + BlobSymbolName(blob.generation) +
                     "): not supported (sorun runs the root executable, the kernel library and cuda / opencl "
                     "device modules)");
  }
}

}  // namespace

RelaxLibraryFacts RelaxLibraryFactsFromSymbols(BlobGeneration generation,
                                               const std::vector<std::string>& defined_functions,
                                               const std::vector<std::string>& imported) {
  auto kernels = std::make_shared<std::vector<std::string>>();
  for (const std::string& name : defined_functions) {
    if (generation == BlobGeneration::kLegacyDevMblob) {
      kernels->push_back(name);
    } else if (StartsWith(name, kFfiKernelPrefix) && !StartsWith(name, kFfiAbiPrefix)) {
      kernels->push_back(name.substr(kFfiKernelPrefix.size()));
    }
  }
  std::sort(kernels->begin(), kernels->end());
  RelaxLibraryFacts facts;
  facts.is_kernel = [kernels](const std::string& name) {
    return std::binary_search(kernels->begin(), kernels->end(), name);
  };
  for (const std::string& name : imported) {
    if (name == kSystemLibRegisterLegacy || name == kSystemLibRegisterFfi) facts.system_lib = true;
  }
  return facts;
}

bool IsSupportedMemoryScope(std::string_view scope) { return scope.empty() || scope == "global"; }

std::vector<std::string> RelaxExportRefusals(const LibraryBlob& blob, const VmExecutable& exec,
                                             const RelaxLibraryFacts& lib) {
  std::vector<std::string> lines;
  auto root = RootExecutable(blob);
  if (!root.ok()) lines.push_back("not a Relax export: " + root.status().message());
  if (lib.system_lib) {
    lines.push_back("system-lib build: the library registers its kernels at load (" +
                    std::string(kSystemLibRegisterFfi) + " / " + kSystemLibRegisterLegacy +
                    ") instead of exporting them; sorun runs export_library builds");
  }
  RefuseCompiledMode(exec, &lines);
  RefuseCallees(exec, lib, blob.generation, &lines);
  MemoryScopeRefusals(exec, &lines);
  RefuseModules(blob, root.ok() ? 0 : -1, &lines);
  return lines;
}

Status CheckRelaxExportSupported(const LibraryBlob& blob, const VmExecutable& exec, const RelaxLibraryFacts& lib) {
  const std::vector<std::string> lines = RelaxExportRefusals(blob, exec, lib);
  if (lines.empty()) return Status::Ok();
  std::string message = "sorun cannot run this Relax export (" + std::to_string(lines.size()) +
                        (lines.size() == 1 ? " reason):" : " reasons):");
  for (const std::string& line : lines) message += "\n  " + line;
  return Unimplemented(message);
}

}  // namespace relax
}  // namespace sorun
