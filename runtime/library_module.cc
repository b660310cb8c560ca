#include "runtime/library_module.h"

#include <elf.h>

#include <cctype>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "runtime/c_runtime_api.h"
#include "runtime/context_slots.h"
#include "runtime/ffi_c_api.h"
#include "runtime/registry_keys.h"

namespace sorun {
namespace {

// dlopen handle -> live LibraryModuleNode. Entries are erased by the node's destructor.
struct LiveLibraries {
  std::mutex mutex;
  std::unordered_map<void*, LibraryModuleNode*> by_handle;
};

LiveLibraries& Live() {
  static LiveLibraries* live = new LiveLibraries();
  return *live;
}

// The pointers the loader sets to the library module itself (and clears when the module goes): the
// legacy `__tvm_module_ctx` and tvm-ffi's `__tvm_ffi__library_ctx`.
constexpr const char* kModuleContextSymbols[] = {keys::kSymbolModuleCtx, keys::kSymbolFfiLibraryCtx};

// True if p[0, max) holds a NUL-terminated C identifier within a sane length (the LLVM form of
// __tvm_main__). Reads nothing at or past p + max.
bool LooksLikeSymbolName(const char* p, uint64_t max) {
  if (max == 0 || !(std::isalpha(static_cast<unsigned char>(p[0])) || p[0] == '_')) return false;
  for (uint64_t i = 1; i < max && i < 512; ++i) {
    unsigned char c = static_cast<unsigned char>(p[i]);
    if (c == 0) return true;
    if (!(std::isalnum(c) || c == '_' || c == '.' || c == '$')) return false;
  }
  return false;
}

// "a data object", ... for an ELF symbol type that is not a function.
std::string DescribeSymbolType(unsigned char type) {
  switch (type) {
    case STT_OBJECT: return "a data object";
    case STT_COMMON: return "a data object (common)";
    case STT_TLS: return "a thread-local variable";
    case STT_NOTYPE: return "a symbol without a type (STT_NOTYPE)";
    case STT_SECTION: return "a section symbol";
    case STT_FILE: return "a file symbol";
    default: return "a symbol of ELF type " + std::to_string(type);
  }
}

}  // namespace

StatusOr<LibraryModuleNode::OpenResult> LibraryModuleNode::Open(const std::string& path) {
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<SharedLibrary> library, SharedLibrary::Open(path));
  return Open(std::move(library));
}

StatusOr<LibraryModuleNode::OpenResult> LibraryModuleNode::Open(ObjectPtr<SharedLibrary> library) {
  LiveLibraries& live = Live();
  std::lock_guard<std::mutex> lock(live.mutex);
  auto it = live.by_handle.find(library->handle());
  if (it != live.by_handle.end() && it->second->TryIncRef()) {
    // Same file already loaded: share its node (the extra dlopen reference is dropped with `library`).
    return OpenResult{ObjectPtr<LibraryModuleNode>::Adopt(it->second), true};
  }
  ObjectPtr<LibraryModuleNode> node = ObjectPtr<LibraryModuleNode>::FromRaw(new LibraryModuleNode(library));
  node->InitContext();
  live.by_handle[library->handle()] = node.get();
  return OpenResult{std::move(node), false};
}

LibraryModuleNode::LibraryModuleNode(ObjectPtr<SharedLibrary> library) : library_(std::move(library)) {}

LibraryModuleNode::~LibraryModuleNode() {
  LiveLibraries& live = Live();
  std::lock_guard<std::mutex> lock(live.mutex);
  auto it = live.by_handle.find(library_->handle());
  if (it != live.by_handle.end() && it->second == this) {
    live.by_handle.erase(it);
    // The library may outlive this node (another SharedLibrary reference); do not leave a dangling ctx.
    for (const char* name : kModuleContextSymbols) {
      if (void** ctx = static_cast<void**>(library_->FindSymbol(name))) *ctx = nullptr;
    }
  }
}

StatusOr<bool> LibraryModuleNode::AttachImportsOnce(const std::vector<Module>& children) {
  std::lock_guard<std::mutex> lock(imports_mutex_);
  if (imports_attached_) return false;
  for (const Module& child : children) SORUN_RETURN_IF_ERROR(Import(child));
  imports_attached_ = true;
  return true;
}

const char* LibraryModuleNode::type_key() const { return keys::kTypeKeyLibrary; }

void LibraryModuleNode::InitContext() {
  for (const ContextSlot& slot : ContextSlots()) {
    if (void** p = static_cast<void**>(library_->FindSymbol(slot.name))) {
      *p = slot.function;
      ++context_slots_filled_;
    }
  }
  for (const char* name : kModuleContextSymbols) {
    if (void** ctx = static_cast<void**>(library_->FindSymbol(name))) *ctx = static_cast<ModuleNode*>(this);
  }
}

std::string LibraryModuleNode::MainTarget(const SharedLibrary::SymbolInfo& main) const {
  if (!main.defined_here || !main.has_entry || main.type != STT_OBJECT) return "";
  const char* target = static_cast<const char*>(main.address);
  return LooksLikeSymbolName(target, main.size) ? std::string(target) : std::string();
}

PackedFunc LibraryModuleNode::GetFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) {
  std::string symbol(name);
  void* addr = library_->FindSymbol(symbol.c_str());
  if (addr == nullptr) return PackedFunc();
  if (symbol == keys::kSymbolModuleMain) {
    // LLVM emits __tvm_main__ as a string naming the entry function; the C backend as a function.
    std::string target = MainTarget(library_->DescribeSymbol(symbol.c_str()));
    if (!target.empty()) {
      if (void* entry = library_->FindSymbol(target.c_str())) {
        return PackedFunc::FromCFunction(target, reinterpret_cast<TVMBackendPackedCFunc>(entry), self);
      }
    }
  }
  return PackedFunc::FromCFunction(std::move(symbol), reinterpret_cast<TVMBackendPackedCFunc>(addr), self);
}

StatusOr<void*> LibraryModuleNode::CheckedKernelAddress(const std::string& symbol, const std::string& what) const {
  const std::string& path = library_->path();
  const SharedLibrary::SymbolInfo s = library_->DescribeSymbol(symbol.c_str());
  if (s.address == nullptr) return NotFound(what + " is not in the kernel library or its imports");
  if (s.defined_in.empty()) {
    return InvalidArgument(what + " is not a function of " + path +
                           " (its address lies in no loaded file: a thread-local variable or an absolute symbol)");
  }
  if (!s.defined_here) {
    return InvalidArgument(what + " is not a function defined by " + path + " (it resolves into " + s.defined_in + ")");
  }
  if (s.has_entry && s.type != STT_FUNC && s.type != STT_GNU_IFUNC) {
    return InvalidArgument(what + " is " + DescribeSymbolType(s.type) + " of " + path + ", not a function");
  }
  if (s.has_entry && s.binding != STB_GLOBAL && s.binding != STB_WEAK) {
    return InvalidArgument(what + " of " + path + " has ELF binding " + std::to_string(s.binding) +
                           ", not global or weak");
  }
  if (!s.in_code) {
    return InvalidArgument(what + " is not a function of " + path +
                           " (its address is outside the library's executable segments)");
  }
  return s.address;
}

StatusOr<PackedFunc> LibraryModuleNode::CheckedKernel(const std::string& symbol,
                                                      const ObjectPtr<ModuleNode>& self) const {
  const std::string what = "kernel function '" + symbol + "'";
  if (keys::IsReservedAbiSymbol(symbol)) {
    return InvalidArgument(what +
                           " is reserved by the TVM ABI (a runtime symbol of the kernel library, never a "
                           "kernel)");
  }
  SORUN_ASSIGN_OR_RETURN(void* address, CheckedKernelAddress(symbol, what));
  return PackedFunc::FromCFunction(symbol, reinterpret_cast<TVMBackendPackedCFunc>(address), self);
}

StatusOr<FfiKernel> LibraryModuleNode::GetFfiKernel(std::string_view name, const ObjectPtr<ModuleNode>& self) const {
  const std::string what = "kernel function '" + std::string(name) + "'";
  // tvm-ffi reserves `__tvm_ffi__<x>` (library blob, context, metadata): a kernel name never starts with '_'
  // there, and an empty one names nothing.
  if (name.empty() || name[0] == '_') {
    return InvalidArgument(what + " is reserved by the tvm-ffi ABI (" + keys::kFfiKernelPrefix + std::string(name) +
                           " is a runtime symbol of the kernel library, never a kernel)");
  }
  const std::string symbol = keys::kFfiKernelPrefix + std::string(name);
  SORUN_ASSIGN_OR_RETURN(void* address, CheckedKernelAddress(symbol, what + " (symbol " + symbol + ")"));
  return FfiKernel(std::string(name), reinterpret_cast<TVMFFISafeCallType>(address), self);
}

StatusOr<PackedFunc> LibraryModuleNode::GetKernelFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) {
  std::string symbol(name);
  if (symbol != keys::kSymbolModuleMain) return CheckedKernel(symbol, self);
  // The entry alias: a function itself (C backend), or a string naming the entry function (LLVM).
  const SharedLibrary::SymbolInfo main = library_->DescribeSymbol(symbol.c_str());
  const std::string target = MainTarget(main);
  if (target.empty()) return CheckedKernel(symbol, self);
  if (target == symbol) {
    return InvalidArgument(std::string("kernel function '") + keys::kSymbolModuleMain + "' names itself");
  }
  StatusOr<PackedFunc> entry = CheckedKernel(target, self);
  if (!entry.ok()) {
    // __tvm_main__ exists, so even an absent entry is a refusal (not "no such kernel").
    return InvalidArgument(std::string("kernel function '") + keys::kSymbolModuleMain + "' names its entry '" + target +
                           "': " + entry.status().message());
  }
  return entry;
}

}  // namespace sorun
