// Every well-known name sorun shares with TVM-compiled code and TVM's runtime: global registry keys,
// blob type keys and library symbols. One place, so a typo cannot split a name in two.
#ifndef SORUN_RUNTIME_REGISTRY_KEYS_H_
#define SORUN_RUNTIME_REGISTRY_KEYS_H_

namespace sorun {
namespace keys {

// ---- Global registry ----
// (int device_type, int device_id): makes a device current; called by host code before GPU work.
inline constexpr char kSetDevice[] = "__tvm_set_device";
// Prefix of blob loaders: "runtime.module.loadbinary_<type_key>" (TVM v0.7+).
inline constexpr char kLoadBinaryPrefix[] = "runtime.module.loadbinary_";
// Pre-v0.7 spelling, also consulted when loading.
inline constexpr char kLegacyLoadBinaryPrefix[] = "module.loadbinary_";
// (path) -> module, as TVM's runtime.module.loadfile_so.
inline constexpr char kLoadFileSo[] = "runtime.module.loadfile_so";
// (graph_json, lib_module, dev_type0, dev_id0, ...) -> GraphExecutor module.
inline constexpr char kGraphExecutorCreate[] = "tvm.graph_executor.create";
// (graph_json, lib_module, module_name, name0, ndarray0, ...) -> GraphExecutorFactory module.
inline constexpr char kGraphExecutorFactoryCreate[] = "tvm.graph_executor_factory.create";

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

// ---- Symbols in a kernel library ----
inline constexpr char kSymbolDevMblob[] = "__tvm_dev_mblob";
inline constexpr char kSymbolModuleCtx[] = "__tvm_module_ctx";
inline constexpr char kSymbolModuleMain[] = "__tvm_main__";
inline constexpr char kSymbolLookupLinkedParam[] = "_lookup_linked_param";
// sorun's optional integrity record (ignored by TVM): see serialization/blob_checksum.h.
inline constexpr char kSymbolBlobChecksum[] = "__sorun_blob_checksum";
// tvm-ffi era symbols (v0.21+), recognised only to report them clearly.
inline constexpr char kSymbolFfiLibraryBin[] = "__tvm_ffi_library_bin";
inline constexpr char kSymbolFfiLibraryBinV22[] = "__tvm_ffi__library_bin";

}  // namespace keys
}  // namespace sorun

#endif  // SORUN_RUNTIME_REGISTRY_KEYS_H_
