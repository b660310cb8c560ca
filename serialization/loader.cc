#include "serialization/loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "runtime/file_util.h"
#include "runtime/function_registry.h"
#include "runtime/library_module.h"
#include "runtime/registry_keys.h"
#include "serialization/blob_checksum.h"
#include "serialization/module_blob.h"

namespace sorun {
namespace {

namespace fs = std::filesystem;

// st_size of the dynamic symbol at `addr` (0 if unknown).
uint64_t SymbolSize(void* addr) {
  Dl_info info;
  void* entry = nullptr;
  if (dladdr1(addr, &info, &entry, RTLD_DL_SYMENT) == 0 || entry == nullptr) return 0;
  const auto* sym = static_cast<const ElfW(Sym)*>(entry);
  // Only trust the size when the address is exactly this symbol's start.
  return info.dli_saddr == addr ? sym->st_size : 0;
}

// SORUN_VERIFY_CHECKSUM (1 or 0) overrides the option; any other non-empty value is an error rather
// than silently meaning "off" (e.g. "true" from a user who wants the check).
StatusOr<bool> ChecksumVerificationEnabled(const LoadOptions& options) {
  const char* env = std::getenv("SORUN_VERIFY_CHECKSUM");
  if (env == nullptr || env[0] == '\0') return options.verify_checksum;
  if (std::strcmp(env, "1") == 0) return true;
  if (std::strcmp(env, "0") == 0) return false;
  return InvalidArgument(std::string("environment variable SORUN_VERIFY_CHECKSUM is '") + env +
                         "': use 1 (verify the blob checksum at load) or 0 (do not)");
}

StatusOr<Module> LoadSharedLibrary(const std::string& path, const LoadOptions& options) {
  SORUN_ASSIGN_OR_RETURN(LibraryModuleNode::OpenResult opened, LibraryModuleNode::Open(path));
  ObjectPtr<LibraryModuleNode> lib = opened.module;
  Module lib_module{ObjectPtr<ModuleNode>(lib)};

  const uint8_t* blob = static_cast<const uint8_t*>(lib->FindSymbol(keys::kSymbolDevMblob));
  if (blob == nullptr) {
    if (lib->FindSymbol(keys::kSymbolFfiLibraryBin) || lib->FindSymbol(keys::kSymbolFfiLibraryBinV22)) {
      return Unimplemented(path + ": built by TVM v0.21 or later (tvm-ffi ABI, __tvm_ffi_*_library_bin); sorun "
                                  "loads the legacy ABI of TVM v0.8 - v0.20");
    }
    return lib_module;  // a plain kernel library
  }
  const std::string section = keys::kSymbolDevMblob;
  uint64_t symbol_size = SymbolSize(const_cast<uint8_t*>(blob));
  auto prefix = ReadBlobPrefix(blob, symbol_size, section);
  if (!prefix.ok()) return std::move(prefix).status().Annotate(path);
  uint64_t payload_size = *prefix;

  SORUN_ASSIGN_OR_RETURN(bool verify, ChecksumVerificationEnabled(options));
  if (verify) {
    if (const void* record = lib->FindSymbol(keys::kSymbolBlobChecksum)) {
      SORUN_RETURN_IF_ERROR_CTX(VerifyBlobChecksum(blob, 8 + payload_size, record, SymbolSize(const_cast<void*>(record))),
                                path);
    }
  }

  // Zero-copy views (weights) keep the library MODULE alive, not just the mapping: host code caches
  // function handles owned by this module, so it must outlive any reuse of the mapped library.
  BinaryReader reader(blob + 8, static_cast<size_t>(payload_size), section, /*base_offset=*/8,
                      ObjectPtr<Object>(lib));
  BlobLayout layout;
  StatusOr<std::vector<Module>> loaded = LoadBlobModules(reader, &layout);
  if (!loaded.ok()) return std::move(loaded).status().Annotate(path);
  std::vector<Module> modules = std::move(*loaded);
  if (layout.lib_index >= 0) modules[static_cast<size_t>(layout.lib_index)] = lib_module;

  // Rebuild the imports. Everything below was validated; the kernel library is attached last.
  std::vector<Module> lib_children;
  Module root;
  if (!layout.has_import_tree) {
    lib_children = modules;  // legacy layout: the library imports everything in blob order
    root = lib_module;
  } else {
    for (size_t i = 0; i < modules.size(); ++i) {
      for (uint64_t c : layout.Children(i)) {
        if (static_cast<int>(i) == layout.lib_index) {
          lib_children.push_back(modules[c]);
        } else {
          SORUN_RETURN_IF_ERROR_CTX(modules[i].Import(modules[c]), path);
        }
      }
    }
    root = modules[0];
  }
  if (!lib_children.empty() || layout.lib_index >= 0 || !layout.has_import_tree) {
    SORUN_RETURN_IF_ERROR_CTX(lib->AttachImportsOnce(lib_children).status(), path);
  }
  return root;
}

}  // namespace

StatusOr<Module> LoadModule(const std::string& path, const LoadOptions& options) {
  std::string ext = fs::path(path).extension().string();
  if (ext.empty() || ext == ".so" || ext == ".dll" || ext == ".dylib" || ext == ".dso") {
    return LoadSharedLibrary(path, options);
  }
  // Other formats through TVM's runtime.module.loadfile_<ext> registry entries (e.g. .tar).
  const std::string loader = "runtime.module.loadfile_" + ext.substr(1);
  PackedFunc f = FunctionRegistry::Global().Get(loader);
  if (!f.defined()) {
    if (ext == ".tar") {
      return Unimplemented(path + ": loading .tar archives needs a compiler at load time and is not linked into "
                                  "this build (link //serialization:tar_loader and call RegisterTarLoader(), as "
                                  "//api:sorun does)");
    }
    // Unknown extension: try it as a shared library.
    return LoadSharedLibrary(path, options);
  }
  SORUN_ASSIGN_OR_RETURN(Value v, f(path));
  return v.AsModule();
}

}  // namespace sorun
