// Module: a unit of loaded code with named functions and an ordered list of imported modules
// (TVM's runtime::Module). Kernel libraries, device modules (CUDA, OpenCL) and executor factories
// are all modules; one loaded model is a tree of them.
//
// Ownership: a Module handle owns its node; a node owns its imports. Functions returned by
// GetFunction keep their module alive. Imports are fixed once loading finishes; after that a module
// is safe to use from many threads (function lookups are cached under a lock).
#ifndef SORUN_RUNTIME_MODULE_H_
#define SORUN_RUNTIME_MODULE_H_

#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/object.h"
#include "base/status.h"
#include "format/binary_writer.h"
#include "runtime/ffi_function.h"
#include "runtime/packed_func.h"

namespace sorun {

class Module;

// Property bits, as TVM v0.12+ (ModulePropertyMask).
enum ModuleProperty : int {
  kModuleBinarySerializable = 0b001,  // SaveToBinary works; the module travels in the blob
  kModuleRunnable = 0b010,            // functions can be called
  kModuleDsoExportable = 0b100,       // host code that becomes the shared library itself ("_lib")
};

// Kernels. A graph node's func_name is read from a file, so it must never choose arbitrary code:
// graph executors resolve it with Module::GetKernel, never with GetFunction. A kernel is
//   (a) a function of the kernel library that passes the kernel rule (LibraryModuleNode), or
//   (b) a function of a module whose provides_kernels() is true (device modules: "opencl", "cuda";
//       their functions check their own arguments).
// Functions of any other module (GraphExecutorFactory, GraphExecutor, user modules) are never kernels.

class ModuleNode : public Object {
 public:
  // Stable type key ("library", "cuda", "opencl", "GraphExecutorFactory"); the blob key.
  virtual const char* type_key() const = 0;
  // The function `name` of this module only, or a null PackedFunc. `self` is the owning handle of
  // this node, for closures that must keep the module alive.
  virtual PackedFunc GetFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) = 0;
  virtual int property_mask() const { return kModuleRunnable; }
  // True when a graph node may name this module's functions as kernels (see "Kernels" above): the
  // kernel library and device modules. sorun's own property, kept out of TVM's property_mask bits.
  virtual bool provides_kernels() const { return false; }
  // Writes this module's payload (blob entry after the type key). Default: Unimplemented.
  virtual Status SaveToBinary(BinaryWriter* writer) const;
  // Names of the functions this module knows it has, when it can list them (for tools and tests).
  virtual std::vector<std::string> ListFunctionNames() const { return {}; }
  // The kernel `name` of this module only (see "Kernels" above). NotFound when the module has no
  // such function; any other error when it has one that is not a kernel, saying why. Default: when
  // provides_kernels(), GetFunction(name); otherwise NotFound. Thread-safe after loading.
  virtual StatusOr<PackedFunc> GetKernelFunction(std::string_view name, const ObjectPtr<ModuleNode>& self);
  // The tvm-ffi kernel `name` (TVM 0.21+, the safe-call ABI) of this module only, for the Relax VM's
  // function table: a kernel library's (LibraryModuleNode: the exported `__tvm_ffi_<name>`;
  // SystemLibModuleNode: the registered one) under its kernel rule. Default: InvalidArgument (not a
  // kernel library). Thread-safe after loading.
  virtual StatusOr<FfiKernel> GetFfiKernel(std::string_view name, const ObjectPtr<ModuleNode>& self) const;
  // The identity of this node's class, for ModuleNodeAs below: a class that callers must recognise
  // declares `static constexpr char kClassId = 0;` and returns &kClassId. Default: nullptr (not recognisable).
  virtual const void* class_id() const { return nullptr; }

  const std::vector<Module>& imports() const { return imports_; }
  // Appends `child` to the imports. Refuses a child that would create an import cycle.
  // Not thread-safe: only while building or loading a module tree.
  Status Import(Module child);

  // TVMBackendGetFuncFromEnv: `name` from the imports (each searched recursively, in order), else
  // from the global registry. Results are cached; the returned function lives as long as this module.
  StatusOr<PackedFunc> GetFuncFromEnv(std::string_view name);

 private:
  std::vector<Module> imports_;
  std::mutex env_mutex_;
  std::unordered_map<std::string, PackedFunc> env_cache_;
};

// Handle to a ModuleNode; null by default.
class Module {
 public:
  Module() = default;
  explicit Module(ObjectPtr<ModuleNode> node) : node_(std::move(node)) {}

  bool defined() const { return static_cast<bool>(node_); }
  explicit operator bool() const { return defined(); }
  ModuleNode* get() const { return node_.get(); }
  ModuleNode* operator->() const { return node_.get(); }
  const ObjectPtr<ModuleNode>& node() const { return node_; }

  const char* type_key() const { return node_->type_key(); }
  const std::vector<Module>& imports() const { return node_->imports(); }
  // The function `name` of this module, else (query_imports) of its imports depth-first in order.
  PackedFunc GetFunction(std::string_view name, bool query_imports = false) const;
  // The kernel `name` for a graph node: the first module, in GetFunction's query_imports order, whose
  // GetKernelFunction finds it. Otherwise the first refusal met ("kernel function 'system' is not a
  // function defined by model.so (it resolves into .../libc.so.6)", "... is provided by a
  // GraphExecutorFactory module, which has no kernels"), else NotFound. Thread-safe after loading.
  StatusOr<PackedFunc> GetKernel(std::string_view name) const;
  Status Import(Module child) const { return node_->Import(std::move(child)); }

  friend bool operator==(const Module& a, const Module& b) { return a.node_ == b.node_; }
  friend bool operator!=(const Module& a, const Module& b) { return a.node_ != b.node_; }

 private:
  ObjectPtr<ModuleNode> node_;
};

// The one "is this module of kind T" rule: `module`'s node as a T (a final ModuleNode class with a
// `static constexpr char kClassId`), or nullptr when it is null or of another class. sorun's dynamic_cast
// for modules; it needs no RTTI, so the static core builds with -fno-rtti (docs/embedded.md). Not a
// type-key comparison: keys are data (a Relax export names its own, a test or fuzz stand-in may claim
// "library"), and a static_cast chosen by one would be undefined behaviour. Thread-safe.
template <typename T>
T* ModuleNodeAs(const Module& module) {
  ModuleNode* node = module.get();
  return node != nullptr && node->class_id() == &T::kClassId ? static_cast<T*>(node) : nullptr;
}

}  // namespace sorun

#endif  // SORUN_RUNTIME_MODULE_H_
