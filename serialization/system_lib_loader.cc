#include "serialization/system_lib_loader.h"

#include <link.h>

#include <cstdint>
#include <vector>

#include "format/binary_reader.h"
#include "runtime/function_registry.h"
#include "runtime/library_module.h"
#include "runtime/registry_keys.h"
#include "runtime/system_lib_module.h"
#include "serialization/module_blob.h"

namespace sorun {
namespace {

// The bytes from `p` to the end of the loaded segment (PT_LOAD, memory size) of the program or library
// holding it; 0 when no loaded object maps `p` (memory registered from the heap: then the length prefix
// is trusted).
uint64_t BytesToSegmentEnd(const void* p) {
  struct Query {
    uintptr_t address;
    uint64_t bytes;
  } query{reinterpret_cast<uintptr_t>(p), 0};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* q = static_cast<Query*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          const uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
          if (q->address >= begin && q->address - begin < ph.p_memsz) {
            q->bytes = ph.p_memsz - (q->address - begin);
            return 1;
          }
        }
        return 0;
      },
      &query);
  return query.bytes;
}

}  // namespace

std::string SystemLibName(const std::string& prefix) {
  return prefix.empty() ? std::string("system-lib") : "system-lib:" + prefix;
}

StatusOr<Module> LoadSystemLib(const std::string& prefix) {
  const std::string name = SystemLibName(prefix);
  if (CountSystemLibSymbols(prefix) == 0) {
    return NotFound(name + ": no symbol is registered" +
                    (prefix.empty() ? std::string() : " under the prefix '" + prefix + "'") +
                    " (TVMBackendRegisterSystemLibSymbol / TVMFFIEnvModRegisterSystemLibSymbol): link a model "
                    "built with TVM's system-lib option (its objects and their global constructors) into the "
                    "program");
  }
  ObjectPtr<SystemLibModuleNode> lib = SystemLibModuleNode::Create(prefix);
  Module lib_module{ObjectPtr<ModuleNode>(lib)};
  // The blob symbol of the build's generation, as for a .so (serialization/loader.cc): __tvm_dev_mblob
  // (TVM 0.8 - 0.20), __tvm_ffi__library_bin (0.22+) or __tvm_ffi_library_bin (0.21).
  const char* symbol = nullptr;
  const uint8_t* blob = nullptr;
  for (const char* candidate : {keys::kSymbolDevMblob, keys::kSymbolFfiLibraryBinV22, keys::kSymbolFfiLibraryBin}) {
    const auto* found = static_cast<const uint8_t*>(lib->FindSymbol(candidate));
    if (found == nullptr) continue;
    if (blob != nullptr) {
      return FailedPrecondition(name + ": both " + prefix + symbol + " and " + prefix + candidate +
                                " are registered: two models share the prefix '" + prefix +
                                "' (give each its own system_lib_prefix)");
    }
    symbol = candidate;
    blob = found;
  }
  if (blob == nullptr) return lib_module;  // kernels only

  const std::string section = prefix + symbol;
  auto payload_size = ReadBlobPrefix(blob, BytesToSegmentEnd(blob), section);
  if (!payload_size.ok()) return std::move(payload_size).status().Annotate(name);
  if (*payload_size > SIZE_MAX - 8) return DataLoss(name + ": " + section + ": blob length prefix too large");

  if (symbol != keys::kSymbolDevMblob) {  // a tvm-ffi build: the Relax VM package reads its blob
    PackedFunc load_ffi = FunctionRegistry::Global().Get(keys::kFuncLoadFfiLibraryBin);
    if (!load_ffi.defined()) {
      return Unimplemented(name + ": " + section +
                           " is registered: a Relax VM model (TVM 0.21+ system-lib build); this runtime does not "
                           "link the Relax VM (link //api:sorun_cpu, //api:sorun_vm_cpu or a static core with the "
                           "VM: //embedded:sorun_core, //embedded:sorun_core_vm)");
    }
    StatusOr<Value> root =
        load_ffi(const_cast<uint8_t*>(blob), static_cast<int64_t>(8 + *payload_size), symbol, lib_module, name);
    if (!root.ok()) return std::move(root).status().Annotate(name + ": " + section);
    return root->AsModule();
  }

  BinaryReader reader(blob + 8, static_cast<size_t>(*payload_size), section, /*base_offset=*/8, ObjectPtr<Object>(lib));
  BlobLayout layout;
  StatusOr<std::vector<Module>> loaded = LoadBlobModules(reader, &layout);
  if (!loaded.ok()) return std::move(loaded).status().Annotate(name);
  std::vector<Module> modules = std::move(*loaded);
  if (layout.lib_index >= 0) modules[static_cast<size_t>(layout.lib_index)] = lib_module;
  auto root = AttachImportTree(modules, layout, lib_module);
  if (!root.ok()) return std::move(root).status().Annotate(name);
  return root;
}

}  // namespace sorun
