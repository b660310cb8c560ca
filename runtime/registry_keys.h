// Every well-known name sorun shares with TVM-compiled code and TVM's runtime: global registry keys,
// blob type keys and library symbols. One place, so a typo cannot split a name in two.
#ifndef SORUN_RUNTIME_REGISTRY_KEYS_H_
#define SORUN_RUNTIME_REGISTRY_KEYS_H_

#include <string_view>

namespace sorun {
namespace keys {

// ---- Global registry ----
// (int device_type, int device_id): makes a device current; called by host code before GPU work.
inline constexpr char kSetDevice[] = "__tvm_set_device";
// TVM's CPU sorting helpers, called by kernels (topi's extern calls for sort / argsort / topk on CPU
// targets; runtime/contrib/sort.h): (DLTensor* data, DLTensor* out, int axis, bool is_ascend), ...
inline constexpr char kContribSort[] = "tvm.contrib.sort.sort";
inline constexpr char kContribArgsort[] = "tvm.contrib.sort.argsort";
// (data, DLTensor* int32 valid counts, DLTensor* int32 out, int axis, bool is_ascend)
inline constexpr char kContribArgsortNms[] = "tvm.contrib.sort.argsort_nms";
// (data, out values and/or out indices, int k, int axis, str ret_type "both"|"values"|"indices", bool is_ascend)
inline constexpr char kContribTopk[] = "tvm.contrib.sort.topk";
// Prefix of blob loaders: "runtime.module.loadbinary_<type_key>" (TVM v0.7+).
inline constexpr char kLoadBinaryPrefix[] = "runtime.module.loadbinary_";
// Pre-v0.7 spelling, also consulted when loading.
inline constexpr char kLegacyLoadBinaryPrefix[] = "module.loadbinary_";
// (path) -> module, as TVM's runtime.module.loadfile_so.
inline constexpr char kLoadFileSo[] = "runtime.module.loadfile_so";
// (graph_json, lib_module, dev_type0, dev_id0, ...) -> GraphExecutor module.
inline constexpr char kGraphExecutorCreate[] = "tvm.graph_executor.create";
// sorun's loader hook for tvm-ffi blob symbols (registered by relax/relax_module.h): (void* symbol
// bytes, int byte count, str symbol name, Module kernel library, str path) -> the root Module.
inline constexpr char kFuncLoadFfiLibraryBin[] = "sorun.relax.load_ffi_library_bin";
// tvm-ffi's loaders of device modules from their payload bytes: kFfiLoadFromBytesPrefix + "opencl", ...
inline constexpr char kFfiLoadFromBytesPrefix[] = "ffi.Module.load_from_bytes.";
// (graph_json, lib_module, module_name, name0, ndarray0, ...) -> GraphExecutorFactory module.
inline constexpr char kGraphExecutorFactoryCreate[] = "tvm.graph_executor_factory.create";
// TVM's texture memory (registered by the OpenCL backend): (int device_type, int device_id, int dtype
// code, int dtype bits, str scope, int ndim = 2, int64_t* {width, height}) -> image2d cl_mem, and
// (int device_type, int device_id, str scope, void* image) -> 0.
inline constexpr char kOpenclAllocNd[] = "device_api.opencl.alloc_nd";
inline constexpr char kOpenclFreeNd[] = "device_api.opencl.free_nd";

// ---- Blob type keys ----
inline constexpr char kTypeKeyLib[] = "_lib";
inline constexpr char kTypeKeyImportTree[] = "_import_tree";
inline constexpr char kTypeKeyLibrary[] = "library";
inline constexpr char kTypeKeyGraphExecutorFactory[] = "GraphExecutorFactory";
inline constexpr char kTypeKeyLegacyGraphRuntimeFactory[] = "GraphRuntimeFactory";
inline constexpr char kTypeKeyGraphExecutor[] = "GraphExecutor";
inline constexpr char kTypeKeyCuda[] = "cuda";
inline constexpr char kTypeKeyOpenCL[] = "opencl";
inline constexpr char kTypeKeyConstLoader[] = "const_loader";
inline constexpr char kTypeKeyLegacyMetadata[] = "metadata";
inline constexpr char kTypeKeyMetadataModule[] = "metadata_module";
inline constexpr char kTypeKeyRelaxExecutable[] = "relax.Executable";      // TVM 0.16 - 0.19
inline constexpr char kTypeKeyRelaxVmExecutable[] = "relax.VMExecutable";  // TVM 0.20+

// ---- Symbols in a kernel library ----
inline constexpr char kSymbolDevMblob[] = "__tvm_dev_mblob";
inline constexpr char kSymbolModuleCtx[] = "__tvm_module_ctx";
inline constexpr char kSymbolModuleMain[] = "__tvm_main__";
inline constexpr char kSymbolLookupLinkedParam[] = "_lookup_linked_param";
// sorun's optional integrity record (ignored by TVM): see serialization/blob_checksum.h.
inline constexpr char kSymbolBlobChecksum[] = "__sorun_blob_checksum";
// tvm-ffi era blob symbols (v0.21 and v0.22+; relax/library_blob.h reads both).
inline constexpr char kSymbolFfiLibraryBin[] = "__tvm_ffi_library_bin";
inline constexpr char kSymbolFfiLibraryBinV22[] = "__tvm_ffi__library_bin";
// tvm-ffi builds: the library-module context slot, and the prefix of every exported kernel.
inline constexpr char kSymbolFfiLibraryCtx[] = "__tvm_ffi__library_ctx";
inline constexpr char kFfiKernelPrefix[] = "__tvm_ffi_";

// ---- Which names may be kernels ----
// The kernel rule (runtime/library_module.h, LibraryModuleNode::GetKernelFunction; the same rule for
// `sorun verify`, which reads .dynsym without loading): a graph node's func_name names a kernel of the
// kernel library only if it is a symbol DEFINED BY THAT LIBRARY ITSELF (not by a dependency such as
// libc), of type STT_FUNC or STT_GNU_IFUNC, with binding STB_GLOBAL or STB_WEAK, and not reserved
// below. `__tvm_main__` is the one exception to "reserved": it is an entry alias (a function, or a
// string naming the entry function, which must itself pass the rule). tvm-ffi builds (TVM 0.21+):
// a VM callee `name` is the symbol `__tvm_ffi_<name>` under the same rule, and names starting with
// '_' are reserved (LibraryModuleNode::GetFfiKernel).

// True for names of the TVM / sorun ABI and of the toolchain that are never kernels, whatever their
// type: every `__tvm_` name (__tvm_module_ctx, __tvm_dev_mblob, __tvm_set_device, __tvm_ffi_*...),
// the `__TVM` context slots (__TVMFuncCall, ...: runtime/context_slots.h), every `__sorun_` name
// (__sorun_blob_checksum), `_lookup_linked_param` (called by the runtime with its own arguments) and the
// ELF `_init` / `_fini`.
// `__tvm_main__` is NOT reserved (see above). Pure; any thread.
inline bool IsReservedAbiSymbol(std::string_view name) {
  if (name == kSymbolModuleMain) return false;
  return name.substr(0, 6) == "__tvm_" || name.substr(0, 5) == "__TVM" || name.substr(0, 8) == "__sorun_" ||
         name == kSymbolLookupLinkedParam || name == "_init" || name == "_fini";
}

// True for the blob type keys of a graph-executor factory: "GraphExecutorFactory" and TVM's older
// "GraphRuntimeFactory" (same payload). Pure; any thread.
inline bool IsGraphExecutorFactoryTypeKey(std::string_view key) {
  return key == kTypeKeyGraphExecutorFactory || key == kTypeKeyLegacyGraphRuntimeFactory;
}

// True for the blob type keys of graph executor modules (factory, legacy factory, executor): roots of
// a model, never dependencies of a kernel library. The tree rule (serialization/module_blob.h,
// ValidateKernelLibraryImports) refuses them anywhere below "_lib". Pure; any thread.
inline bool IsGraphExecutorTypeKey(std::string_view key) {
  return IsGraphExecutorFactoryTypeKey(key) || key == kTypeKeyGraphExecutor;
}

}  // namespace keys
}  // namespace sorun

#endif  // SORUN_RUNTIME_REGISTRY_KEYS_H_
