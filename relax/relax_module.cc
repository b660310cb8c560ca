#include "relax/relax_module.h"

#include <mutex>
#include <utility>
#include <vector>

#include "executor/executor_registry.h"
#include "relax/export_check.h"
#include "runtime/blob_loader.h"
#include "runtime/contrib/sort.h"
#include "runtime/function_registry.h"
#include "runtime/library_module.h"
#include "runtime/registry_keys.h"
#include "runtime/system_lib_module.h"
#include "serialization/module_blob.h"

namespace sorun {
namespace relax {
namespace {

// A kernel library: a dlopen'ed one (LibraryModuleNode) or the program's system library
// (SystemLibModuleNode, a system-lib build).
bool IsKernelLibrary(const Module& m) {
  return ModuleNodeAs<LibraryModuleNode>(m) != nullptr || ModuleNodeAs<SystemLibModuleNode>(m) != nullptr;
}

// The kernel library below a Relax root: the first kernel library among its imports.
Module KernelLibraryOf(const ModuleNode& root) {
  for (const Module& m : root.imports()) {
    if (IsKernelLibrary(m)) return m;
  }
  return Module();
}

// A legacy-layout entry (__tvm_dev_mblob, TVM 0.16 - 0.20): u64 length + the executable, constants
// tagged with the enum of those releases.
StatusOr<Module> LoadLegacyExecutable(const std::string& type_key, BinaryReader& reader) {
  const uint64_t at = reader.offset();
  std::string_view payload;
  SORUN_RETURN_IF_ERROR(reader.ReadStringView(&payload, type_key + " payload"));
  auto exec = ParseVmExecutable(reinterpret_cast<const uint8_t*>(payload.data()), payload.size(),
                                ConstantTagDialect::kLegacyEnum, reader.section() + " " + type_key, at + 8);
  if (!exec.ok()) return std::move(exec).status();
  auto shared = std::make_shared<const VmExecutable>(std::move(*exec));
  return Module(
      MakeObject<RelaxExecutableModule>(type_key, std::move(shared), reader.owner(), BlobGeneration::kLegacyDevMblob));
}

// keys::kFuncLoadFfiLibraryBin: a tvm-ffi blob symbol (TVM 0.21 legacy layout, or 0.22+ tree first)
// to the module tree, rooted at the Relax executable.
StatusOr<Module> LoadFfiLibraryBin(const uint8_t* symbol, uint64_t size, const std::string& symbol_name,
                                   const Module& lib, const std::string& path) {
  std::vector<Module> handled;  // legacy-layout device payloads, by module index
  auto parse_other = [&](size_t index, const std::string& type_key, BinaryReader& reader) -> Status {
    SORUN_ASSIGN_OR_RETURN(Module m, RunBlobLoader(type_key, reader));
    if (handled.size() <= index) handled.resize(index + 1);
    handled[index] = std::move(m);
    return Status::Ok();
  };
  SORUN_ASSIGN_OR_RETURN(LibraryBlob blob, ParseLibraryBlob(symbol, size, symbol_name, parse_other));
  SORUN_ASSIGN_OR_RETURN(const LibraryBlobModule* root, RootExecutable(blob));
  // The one "can sorun run this export" check (as `sorun inspect` shows it), before anything is built;
  // kernels are judged by the loaded library under the kernel rule.
  if (!IsKernelLibrary(lib)) return Internal(path + ": no kernel library module");
  const ConstantTagDialect dialect =
      UsesFfiConstantTags(blob.generation) ? ConstantTagDialect::kFfiTypeIndex : ConstantTagDialect::kLegacyEnum;
  auto root_exec = ParseVmExecutable(root->payload, root->payload_size, dialect,
                                     symbol_name + " module 0 ('" + root->type_key + "')", root->payload_offset);
  if (!root_exec.ok()) return std::move(root_exec).status();
  auto root_shared = std::make_shared<const VmExecutable>(std::move(*root_exec));
  RelaxLibraryFacts facts;
  facts.is_kernel = [&lib](const std::string& name) { return lib.node()->GetFfiKernel(name, lib.node()).ok(); };
  SORUN_RETURN_IF_ERROR(CheckRelaxExportSupported(blob, *root_shared, facts));
  std::vector<Module> modules(blob.modules.size());
  for (size_t i = 0; i < blob.modules.size(); ++i) {
    const LibraryBlobModule& m = blob.modules[i];
    const std::string what = "module " + std::to_string(i) + " ('" + m.type_key + "')";
    if (static_cast<int>(i) == blob.lib_index) {
      modules[i] = lib;
    } else if (i == 0) {
      modules[i] = Module(MakeObject<RelaxExecutableModule>(m.type_key, root_shared, lib.node(), blob.generation));
    } else if (IsRelaxExecutableTypeKey(m.type_key)) {
      auto exec = ParseVmExecutable(m.payload, m.payload_size, dialect, symbol_name + " " + what, m.payload_offset);
      if (!exec.ok()) return std::move(exec).status();
      modules[i] = Module(MakeObject<RelaxExecutableModule>(
          m.type_key, std::make_shared<const VmExecutable>(std::move(*exec)), lib.node(), blob.generation));
    } else if (m.payload != nullptr) {  // tree-first layout: device modules load from their bytes
      const std::string loader = keys::kFfiLoadFromBytesPrefix + m.type_key;
      PackedFunc f = FunctionRegistry::Global().Get(loader);
      if (!f.defined()) {
        return Unimplemented(symbol_name + " " + what + ": no loader for modules of kind '" + m.type_key +
                             "' in this build (" + loader + ")");
      }
      auto loaded = f(Value::Bytes(std::string(reinterpret_cast<const char*>(m.payload), m.payload_size)));
      if (!loaded.ok()) return std::move(loaded).status().Annotate(symbol_name + " " + what);
      SORUN_ASSIGN_OR_RETURN(modules[i], loaded->AsModule());
    } else if (i < handled.size() && handled[i].defined()) {
      modules[i] = handled[i];
    } else {
      return Internal(symbol_name + " " + what + ": payload was not loaded");
    }
  }
  BlobLayout layout;
  layout.payload_size = blob.payload_size;
  layout.modules.resize(blob.modules.size());
  for (size_t i = 0; i < blob.modules.size(); ++i) layout.modules[i].type_key = blob.modules[i].type_key;
  layout.has_import_tree = blob.has_import_tree;
  layout.row_ptr = blob.row_ptr;
  layout.child_indices = blob.child_indices;
  layout.lib_index = blob.lib_index;
  return AttachImportTree(modules, layout, lib);
}

}  // namespace

StatusOr<ObjectPtr<VmProgram>> RelaxExecutableModule::Program(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!built_) {
    const KernelAbi abi = generation_ == BlobGeneration::kLegacyDevMblob ? KernelAbi::kLegacyPacked : KernelAbi::kFfi;
    auto made = VmProgram::Create(exec_, keep_alive_, KernelLibraryOf(*this), abi, path);
    built_ = true;
    if (made.ok()) {
      program_ = std::move(*made);
    } else {
      build_status_ = std::move(made).status();
    }
  }
  if (!build_status_.ok()) return build_status_;
  return program_;
}

RelaxExecutableModule* AsRelaxExecutable(const Module& root) { return ModuleNodeAs<RelaxExecutableModule>(root); }

namespace {

// The kind's from_root hook (executor/executor_registry.h).
StatusOr<ObjectPtr<Executable>> VmExecutableOfRoot(const Module& root, const std::string& path) {
  RelaxExecutableModule* module = AsRelaxExecutable(root);
  if (module == nullptr) return ObjectPtr<Executable>();
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<VmProgram> program, module->Program(path));
  return ObjectPtr<Executable>(std::move(program));
}

}  // namespace

Status RegisterRelaxVm() {
  SORUN_RETURN_IF_ERROR(RegisterGlobalSortFunctions());
  static std::once_flag once;
  static Status status;
  std::call_once(once, [] {
    ExecutorKindHooks kind;
    kind.kind = ExecutorKind::kRelaxVm;
    kind.root_description = "a Relax VM executable";
    kind.from_root = VmExecutableOfRoot;
    status = RegisterExecutorKind(kind);
    if (!status.ok()) return;
    for (const char* key : {kTypeKeyRelaxExecutable, kTypeKeyRelaxVmExecutable}) {
      const std::string type_key = key;
      status = RegisterBlobLoader(type_key,
                                  [type_key](BinaryReader& reader) { return LoadLegacyExecutable(type_key, reader); });
      if (!status.ok()) return;
    }
    status = FunctionRegistry::Global().Register(
        keys::kFuncLoadFfiLibraryBin,
        PackedFunc::FromBody(keys::kFuncLoadFfiLibraryBin,
                             [](PackedArgs args, Value* ret) -> Status {
                               SORUN_RETURN_IF_ERROR(args.ExpectCount(5, keys::kFuncLoadFfiLibraryBin));
                               SORUN_ASSIGN_OR_RETURN(void* bytes, args.GetHandle(0));
                               SORUN_ASSIGN_OR_RETURN(int64_t size, args.GetInt(1));
                               SORUN_ASSIGN_OR_RETURN(std::string_view symbol, args.GetStr(2));
                               SORUN_ASSIGN_OR_RETURN(Module lib, args.GetModule(3));
                               SORUN_ASSIGN_OR_RETURN(std::string_view path, args.GetStr(4));
                               if (bytes == nullptr || size < 8) return InvalidArgument("no blob bytes");
                               SORUN_ASSIGN_OR_RETURN(
                                   Module root,
                                   LoadFfiLibraryBin(static_cast<const uint8_t*>(bytes), static_cast<uint64_t>(size),
                                                     std::string(symbol), lib, std::string(path)));
                               *ret = Value::FromModule(std::move(root));
                               return Status::Ok();
                             }),
        /*allow_override=*/true);
  });
  return status;
}

}  // namespace relax
}  // namespace sorun
