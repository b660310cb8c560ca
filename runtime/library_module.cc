#include "runtime/library_module.h"

#include <cctype>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "runtime/c_runtime_api.h"
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

// True if `p` holds a NUL-terminated C identifier within a sane length (the LLVM form of __tvm_main__).
bool LooksLikeSymbolName(const char* p) {
  if (!(std::isalpha(static_cast<unsigned char>(p[0])) || p[0] == '_')) return false;
  for (int i = 1; i < 512; ++i) {
    unsigned char c = static_cast<unsigned char>(p[i]);
    if (c == 0) return true;
    if (!(std::isalnum(c) || c == '_' || c == '.' || c == '$')) return false;
  }
  return false;
}

}  // namespace

StatusOr<LibraryModuleNode::OpenResult> LibraryModuleNode::Open(const std::string& path) {
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<SharedLibrary> library, SharedLibrary::Open(path));
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
    if (void** ctx = static_cast<void**>(library_->FindSymbol(keys::kSymbolModuleCtx))) *ctx = nullptr;
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
  struct Slot {
    const char* name;
    void* function;
  };
  const Slot slots[] = {
      {"__TVMFuncCall", reinterpret_cast<void*>(&TVMFuncCall)},
      {"__TVMAPISetLastError", reinterpret_cast<void*>(&TVMAPISetLastError)},
      {"__TVMBackendGetFuncFromEnv", reinterpret_cast<void*>(&TVMBackendGetFuncFromEnv)},
      {"__TVMBackendAllocWorkspace", reinterpret_cast<void*>(&TVMBackendAllocWorkspace)},
      {"__TVMBackendFreeWorkspace", reinterpret_cast<void*>(&TVMBackendFreeWorkspace)},
      {"__TVMBackendParallelLaunch", reinterpret_cast<void*>(&TVMBackendParallelLaunch)},
      {"__TVMBackendParallelBarrier", reinterpret_cast<void*>(&TVMBackendParallelBarrier)},
  };
  for (const Slot& slot : slots) {
    if (void** p = static_cast<void**>(library_->FindSymbol(slot.name))) {
      *p = slot.function;
      ++context_slots_filled_;
    }
  }
  if (void** ctx = static_cast<void**>(library_->FindSymbol(keys::kSymbolModuleCtx))) {
    *ctx = static_cast<ModuleNode*>(this);
  }
}

PackedFunc LibraryModuleNode::GetFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) {
  std::string symbol(name);
  void* addr = library_->FindSymbol(symbol.c_str());
  if (addr == nullptr) return PackedFunc();
  if (symbol == keys::kSymbolModuleMain) {
    // LLVM emits __tvm_main__ as a string naming the entry function; the C backend as a function.
    const char* target = static_cast<const char*>(addr);
    if (LooksLikeSymbolName(target)) {
      if (void* entry = library_->FindSymbol(target)) {
        return PackedFunc::FromCFunction(target, reinterpret_cast<TVMBackendPackedCFunc>(entry), self);
      }
    }
  }
  return PackedFunc::FromCFunction(std::move(symbol), reinterpret_cast<TVMBackendPackedCFunc>(addr), self);
}

}  // namespace sorun
