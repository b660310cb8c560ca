#include "serialization/loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "base/env_vars.h"
#include "base/file_util.h"
#include "base/mapped_pages.h"
#include "base/memory_file.h"
#include "format/elf_preflight.h"
#include "runtime/function_registry.h"
#include "runtime/library_module.h"
#include "runtime/registry_keys.h"
#include "serialization/blob_checksum.h"
#include "serialization/blob_extent.h"
#include "serialization/module_blob.h"

namespace sorun {
namespace {

namespace fs = std::filesystem;

// st_size of the dynamic symbol `name` at `addr` (0 if unknown).
uint64_t SymbolSize(const void* addr, const char* name) {
  Dl_info info;
  void* entry = nullptr;
  if (dladdr1(addr, &info, &entry, RTLD_DL_SYMENT) == 0 || entry == nullptr) return 0;
  const auto* sym = static_cast<const ElfW(Sym)*>(entry);
  // Only trust the size when the entry is this symbol (not another one at, or before, the address).
  if (info.dli_saddr != addr || info.dli_sname == nullptr || std::strcmp(info.dli_sname, name) != 0) return 0;
  return sym->st_size;
}

// The loaded library as blob_extent.h needs it: its load bias and its PT_LOAD segments as mapped,
// from its link map (dlinfo) and the program headers ld.so used (dl_iterate_phdr).
struct LoadedFacts {
  uintptr_t bias = 0;
  std::vector<LoadSegment> segments;
};

StatusOr<LoadedFacts> LoadedLibraryFacts(void* handle, const std::string& path) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) {
    const char* err = dlerror();
    return Internal(path + ": dlinfo(RTLD_DI_LINKMAP) failed: " + (err ? err : "no link map"));
  }
  struct Search {
    const struct link_map* map;
    LoadedFacts facts;
    bool found = false;
  } search{map, {}, false};
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        if (info->dlpi_addr != s->map->l_addr) return 0;
        // The same object: its PT_DYNAMIC is the link map's l_ld.
        bool same = false;
        for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& p = info->dlpi_phdr[i];
          if (p.p_type == PT_DYNAMIC && info->dlpi_addr + p.p_vaddr == reinterpret_cast<uintptr_t>(s->map->l_ld)) {
            same = true;
          }
        }
        if (!same) return 0;
        s->facts.bias = info->dlpi_addr;
        for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& p = info->dlpi_phdr[i];
          if (p.p_type != PT_LOAD) continue;
          LoadSegment seg;
          seg.index = i;
          seg.vaddr = p.p_vaddr;
          seg.file_size = p.p_filesz;
          seg.memory_size = p.p_memsz;
          seg.file_offset = p.p_offset;
          seg.readable = (p.p_flags & PF_R) != 0;
          seg.bytes = reinterpret_cast<const uint8_t*>(info->dlpi_addr + p.p_vaddr);
          s->facts.segments.push_back(seg);
        }
        s->found = true;
        return 1;
      },
      &search);
  if (!search.found) return Internal(path + ": the loaded library is not in dl_iterate_phdr's list");
  return search.facts;
}

// st_value (relative to the load bias) and st_size of the library's symbol `name` at `addr`.
std::pair<uint64_t, uint64_t> SymbolFacts(const void* addr, const char* name, const LoadedFacts& facts) {
  return {static_cast<uint64_t>(reinterpret_cast<uintptr_t>(addr) - facts.bias), SymbolSize(addr, name)};
}

// LoadOptions::prefetch on the blob's whole pages (a hint: failures are ignored, the pages then come in
// on first touch as without it).
void PrefetchBlob(const uint8_t* blob, uint64_t size, LoadOptions::Prefetch mode) {
  if (mode == LoadOptions::Prefetch::kNone) return;
  // A populate advice fails before Linux 5.14 (EINVAL): read-ahead then, as kWillNeed.
  if (mode == LoadOptions::Prefetch::kPopulate && AdvisePages(blob, size, PageAdvice::kPopulateRead)) return;
  AdvisePages(blob, size, PageAdvice::kWillNeed);
}

// The module tree of an opened kernel library; `path` names it in messages (the name given for bytes
// from memory).
StatusOr<Module> LoadOpenedLibrary(const LibraryModuleNode::OpenResult& opened, const std::string& path,
                                   const LoadOptions& options) {
  ObjectPtr<LibraryModuleNode> lib = opened.module;
  Module lib_module{ObjectPtr<ModuleNode>(lib)};

  // The blob symbol of the export's generation: __tvm_dev_mblob (TVM v0.8 - v0.20, graph executor and
  // Relax), __tvm_ffi__library_bin (v0.22+) or __tvm_ffi_library_bin (v0.21).
  const char* symbol = keys::kSymbolDevMblob;
  const uint8_t* blob = nullptr;
  for (const char* name : {keys::kSymbolDevMblob, keys::kSymbolFfiLibraryBinV22, keys::kSymbolFfiLibraryBin}) {
    blob = static_cast<const uint8_t*>(lib->FindSymbol(name));
    if (blob != nullptr) {
      symbol = name;
      break;
    }
  }
  if (blob == nullptr) return lib_module;  // a plain kernel library
  const std::string section = symbol;
  // Bound the blob by the mapped file-backed bytes of the segment holding it (blob_extent.h): the
  // same rule, and the same messages, as `sorun inspect` on the file.
  SORUN_ASSIGN_OR_RETURN(LoadedFacts facts, LoadedLibraryFacts(lib->library()->handle(), path));
  const auto [blob_address, blob_size] = SymbolFacts(blob, symbol, facts);
  auto extent = LocateBlob(blob_address, blob_size, facts.segments, symbol);
  if (!extent.ok()) return std::move(extent).status().Annotate(path);
  blob = extent->symbol.data;
  uint64_t payload_size = extent->payload_size;

  PrefetchBlob(blob, 8 + payload_size, options.prefetch);

  SORUN_ASSIGN_OR_RETURN(bool verify, ResolveVerifyChecksum(options));
  if (verify) {
    if (const void* record = lib->FindSymbol(keys::kSymbolBlobChecksum)) {
      const auto [record_address, record_size] = SymbolFacts(record, keys::kSymbolBlobChecksum, facts);
      auto bounded = BoundSymbolBytes(keys::kSymbolBlobChecksum, record_address, record_size, facts.segments);
      if (!bounded.ok()) return std::move(bounded).status().Annotate(path);
      SORUN_RETURN_IF_ERROR_CTX(VerifyBlobChecksum(blob, 8 + payload_size, bounded->data, bounded->bytes), path);
    }
  }

  if (symbol != keys::kSymbolDevMblob) {  // tvm-ffi exports: the Relax VM package reads them
    PackedFunc load_ffi = FunctionRegistry::Global().Get(keys::kFuncLoadFfiLibraryBin);
    if (!load_ffi.defined()) {
      return Unimplemented(
          path + ": built by TVM v0.21 or later (" + section +
          "), a Relax VM export; this runtime does not link the Relax VM (link //api:sorun, //api:sorun_cpu "
          "or a VM runtime)");
    }
    StatusOr<Value> root =
        load_ffi(const_cast<uint8_t*>(blob), static_cast<int64_t>(8 + payload_size), section, lib_module, path);
    if (!root.ok()) return std::move(root).status().Annotate(path);
    return root->AsModule();
  }

  // Zero-copy views (weights) keep the library MODULE alive, not just the mapping: host code caches
  // function handles owned by this module, so it must outlive any reuse of the mapped library.
  BinaryReader reader(blob + 8, static_cast<size_t>(payload_size), section, /*base_offset=*/8, ObjectPtr<Object>(lib));
  BlobLayout layout;
  StatusOr<std::vector<Module>> loaded = LoadBlobModules(reader, &layout);
  if (!loaded.ok()) return std::move(loaded).status().Annotate(path);
  std::vector<Module> modules = std::move(*loaded);
  if (layout.lib_index >= 0) modules[static_cast<size_t>(layout.lib_index)] = lib_module;

  // Everything was validated: rebuild the imports (the kernel library is attached last).
  auto root = AttachImportTree(modules, layout, lib_module);
  if (!root.ok()) return std::move(root).status().Annotate(path);
  return root;
}

// A label for /proc/self/fd and /proc/self/maps: "sorun:" and the file name part of `name`, in
// characters that need no quoting.
std::string MemoryFileLabel(const std::string& name) {
  std::string base = fs::path(name).filename().string();
  std::string label = "sorun:";
  for (char c : base) {
    if (label.size() >= 64) break;
    const bool plain =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    label.push_back(plain ? c : '_');
  }
  return label;
}

// A status from a hook or the memory file, annotated with the model's name unless it already starts with it.
Status NamedStatus(Status status, const std::string& name) {
  if (!status.ok() && status.message().rfind(name, 0) != 0) status.Annotate(name);
  return status;
}

StatusOr<Module> LoadSharedLibrary(const std::string& path, const LoadOptions& options) {
  if (options.decrypt || options.verify_library) {
    // Through a sealed memory file: the bytes decrypted or checked are the bytes mapped, whatever
    // happens to the file meanwhile.
    SORUN_ASSIGN_OR_RETURN(ObjectPtr<MappedFile> file, MappedFile::Open(path));
    return LoadModuleFromMemory(file->bytes(), path, options);
  }
  SORUN_ASSIGN_OR_RETURN(LibraryModuleNode::OpenResult opened, LibraryModuleNode::Open(path));
  return LoadOpenedLibrary(opened, path, options);
}

}  // namespace

StatusOr<SealedLibrary> SealLibraryBytes(std::string_view stored, const std::string& name, const LoadOptions& options) {
  SORUN_ASSIGN_OR_RETURN(MemoryFile file, MemoryFile::Create(MemoryFileLabel(name)));
  if (options.decrypt) {
    SORUN_RETURN_IF_ERROR(NamedStatus(options.decrypt(stored, file, name), name));
  } else {
    SORUN_RETURN_IF_ERROR(NamedStatus(file.Reserve(stored.size()), name));
    SORUN_RETURN_IF_ERROR(NamedStatus(file.Write(stored.data(), stored.size()), name));
  }
  SORUN_RETURN_IF_ERROR(NamedStatus(file.Seal(), name));
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<MappedFile> sealed, MappedFile::OpenDescriptor(file.fd(), name));
  if (options.verify_library) {
    SORUN_RETURN_IF_ERROR(NamedStatus(options.verify_library(sealed->bytes(), name), name));
  }
  return SealedLibrary{std::move(file), std::move(sealed)};
}

StatusOr<Module> LoadModuleFromMemory(std::string_view bytes, const std::string& name, const LoadOptions& options) {
  // The caller's verifier first (a signed model's bytes are parsed by nothing before its signature
  // holds), then the file checks on the same sealed bytes.
  SORUN_ASSIGN_OR_RETURN(SealedLibrary sealed, SealLibraryBytes(bytes, name, options));
  SORUN_RETURN_IF_ERROR(PreflightSharedLibraryBytes(sealed.bytes->data(), sealed.bytes->size(), name));
  sealed.bytes.reset();  // dlopen maps the file itself
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<SharedLibrary> library, SharedLibrary::OpenDescriptor(sealed.file.Release(), name));
  SORUN_ASSIGN_OR_RETURN(LibraryModuleNode::OpenResult opened, LibraryModuleNode::Open(std::move(library)));
  return LoadOpenedLibrary(opened, name, options);
}

// An explicit option wins; unset, SORUN_VERIFY_CHECKSUM (1 or 0) decides; any other non-empty value is
// an error rather than silently meaning "off" (e.g. "true" from a user who wants the check).
StatusOr<bool> ResolveVerifyChecksum(const LoadOptions& options) {
  if (options.verify_checksum.has_value()) return *options.verify_checksum;
  SORUN_ASSIGN_OR_RETURN(std::optional<bool> env, GetEnvBool(kEnvVerifyChecksum, "verify the blob checksum at load"));
  return env.value_or(false);
}

StatusOr<Module> LoadModule(const std::string& path, const LoadOptions& options) {
  std::string ext = fs::path(path).extension().string();
  if ((options.decrypt || options.verify_library) && ext == ".tar") {
    return Unimplemented(path +
                         ": decryption and library verification apply to shared libraries (.so); a .tar "
                         "archive is compiled and linked when loaded: pack it into a .so (sorun pack)");
  }
  if (ext.empty() || ext == ".so" || ext == ".dll" || ext == ".dylib" || ext == ".dso") {
    return LoadSharedLibrary(path, options);
  }
  // Other formats through TVM's runtime.module.loadfile_<ext> registry entries (e.g. .tar).
  const std::string loader = "runtime.module.loadfile_" + ext.substr(1);
  PackedFunc f = FunctionRegistry::Global().Get(loader);
  if (!f.defined()) {
    if (ext == ".tar") {
      return Unimplemented(path +
                           ": loading .tar archives needs a compiler at load time and is not linked into "
                           "this build (link //serialization:tar_loader and call RegisterTarLoader(), as "
                           "//api:sorun does)");
    }
    // Unknown extension: try it as a shared library.
    return LoadSharedLibrary(path, options);
  }
  if (ext == ".tar") {  // the archive's devc.o carries the integrity record: same checksum choice
    SORUN_ASSIGN_OR_RETURN(bool verify, ResolveVerifyChecksum(options));
    SORUN_ASSIGN_OR_RETURN(Value v, f(path, static_cast<int64_t>(verify)));
    return v.AsModule();
  }
  SORUN_ASSIGN_OR_RETURN(Value v, f(path));
  return v.AsModule();
}

}  // namespace sorun
