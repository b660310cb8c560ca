// HostCodeModuleNode: host code that is about to become a shared library — object files, static
// archives and C/C++/assembly sources — placed in a module tree for export_library. It is
// DSO-exportable (TVM's "llvm"/"c" modules): the serializer merges every such module into the one
// "_lib" group and the exporter compiles and links its files into the output. It has no callable
// functions (it is not loaded code). Immutable after creation; thread-safe.
#ifndef SORUN_PACKER_HOST_CODE_MODULE_H_
#define SORUN_PACKER_HOST_CODE_MODULE_H_

#include <string>
#include <vector>

#include "runtime/module.h"

namespace sorun {

struct HostCode {
  // .o (relocatable objects, PIC), .a/.lo (static archives, linked whole), .c/.cc/.cpp/.cxx/.S/.s sources.
  std::vector<std::string> files;
  // Extra flags for compiling the sources (e.g. "-I/path"), and for the final link (e.g. "-lm").
  std::vector<std::string> compile_flags;
  std::vector<std::string> link_flags;
};

class HostCodeModuleNode final : public ModuleNode {
 public:
  explicit HostCodeModuleNode(HostCode code) : code_(std::move(code)) {}

  // "c": the type key TVM's serializer treats as DSO-exportable.
  const char* type_key() const override { return "c"; }
  const void* class_id() const override { return &kClassId; }
  static constexpr char kClassId = 0;
  PackedFunc GetFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) override { return PackedFunc(); }
  int property_mask() const override { return kModuleDsoExportable; }
  const HostCode& code() const { return code_; }

 private:
  HostCode code_;
};

inline Module MakeHostCodeModule(HostCode code) {
  return Module(ObjectPtr<ModuleNode>(MakeObject<HostCodeModuleNode>(std::move(code))));
}

}  // namespace sorun

#endif  // SORUN_PACKER_HOST_CODE_MODULE_H_
