// The one answer to "can sorun run this Relax export" (issue 17 item 7), given what was read before any
// dlopen: the parsed container (relax/library_blob.h), the parsed and validated executable
// (relax/vm_executable.h) and two facts about the kernel library taken from its ELF symbols. Used by
// `sorun inspect` (inspect/relax_inspector.h) and by the loader at load, so both refuse the same
// exports with the same lines. Refused, one line each, naming where:
//   - a root module that is not a Relax executable;
//   - a system-lib build (kernels registered by constructors, not exported);
//   - exec_mode="compiled": vmtir functions (kind 2) and `__vmtir__*` kernels;
//   - every function the bytecode reaches that is neither a kernel of the library, a supported builtin
//     (SupportedBuiltins()) nor a vm function: KV-cache, CUDA-graph, disco, BYOC / contrib families,
//     other builtins, and missing kernels (the reachability rule is CheckCalleesSupported's);
//   - memory scopes other than "global" (TVM 0.20+ texture scopes included: the VM does not allocate
//     image memory yet): the V2 scope section, and the scope string constants passed to
//     vm.builtin.alloc_storage / alloc_tensor;
//   - modules of the container other than the root executable, "_lib", "cuda" and "opencl".
// `exec` must be a validated executable (ParseVmExecutable / ValidateVmExecutable): indices are trusted.
// Pure functions of their arguments; thread-safe.
#ifndef SORUN_RELAX_EXPORT_CHECK_H_
#define SORUN_RELAX_EXPORT_CHECK_H_

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "relax/library_blob.h"
#include "relax/vm_disassembler.h"
#include "relax/vm_executable.h"

namespace sorun {
namespace relax {

// What the check needs to know about the kernel library without dlopen: which kernel names it defines
// (the `__tvm_ffi_<name>` symbols for 0.21+, plain names for 0.16-0.20) and whether it is a system-lib
// build. Copyable; `is_kernel` may be null (the library defines no kernel).
struct RelaxLibraryFacts {
  KernelPredicate is_kernel;
  bool system_lib = false;
};

// The C functions a system-lib build calls from its constructors to register its symbols (TVM 0.16 -
// 0.20 and tvm-ffi 0.21+); a library importing either is a system-lib build.
inline constexpr const char* kSystemLibRegisterLegacy = "TVMBackendRegisterSystemLibSymbol";
inline constexpr const char* kSystemLibRegisterFfi = "TVMFFIEnvModRegisterSystemLibSymbol";

// The facts from a library's dynamic symbol table: `defined_functions` are the names of the functions
// it exports, `imported` the undefined names it needs. Kernels are `__tvm_ffi_<name>` (prefix stripped,
// the `__tvm_ffi__*` ABI symbols left out) for kFfiLegacy021 / kFfiTreeFirst, the plain names for
// kLegacyDevMblob. The predicate owns a copy of the names.
RelaxLibraryFacts RelaxLibraryFactsFromSymbols(BlobGeneration generation,
                                               const std::vector<std::string>& defined_functions,
                                               const std::vector<std::string>& imported);

// True for "" and "global" (plain device memory): the scopes the VM allocates.
bool IsSupportedMemoryScope(std::string_view scope);
// Appends one line per memory scope the VM does not allocate (the V2 scope section, and the scope
// constants of alloc_storage / alloc_tensor). Part of RelaxExportRefusals; VmProgram applies it on
// every generation (the legacy container reaches the VM without the whole check).
void MemoryScopeRefusals(const VmExecutable& exec, std::vector<std::string>* lines);

// Every reason sorun refuses the export, one line each ("'main' instruction 3: calls
// 'vm.builtin.paged_attention_kv_cache_create' (KV-cache builtin)"); empty when it can run it.
std::vector<std::string> RelaxExportRefusals(const LibraryBlob& blob, const VmExecutable& exec,
                                             const RelaxLibraryFacts& lib);

// Unimplemented naming EVERY refused thing (RelaxExportRefusals, one line each after a header line
// giving their count), OK otherwise.
Status CheckRelaxExportSupported(const LibraryBlob& blob, const VmExecutable& exec, const RelaxLibraryFacts& lib);

}  // namespace relax
}  // namespace sorun

#endif  // SORUN_RELAX_EXPORT_CHECK_H_
