// RelaxExecutableModule: the root module of a Relax VM export ("relax.VMExecutable", TVM 0.20+, or
// "relax.Executable", TVM 0.16 - 0.19) in sorun's module tree — the validated executable, the
// container generation it came from (which fixes the kernels' calling convention), and the bytes it
// borrows kept alive. Its imports are the export's `_lib` (the kernel library, with any device modules
// below it). The runnable program (relax/vm_program.h: function table resolved, constants placed) is
// built once, on first use, after the import tree is complete.
//
// RegisterRelaxVm() links the Relax VM into the program: the executor kind (its from_root hook in
// executor/executor_registry.h turns a RelaxExecutableModule root into its VmProgram) and what the
// loader needs (serialization/loader.h): the blob loaders for the legacy layout's executable entries,
// and keys::kFuncLoadFfiLibraryBin for the tvm-ffi blob symbols. Called by the front door's link-chosen
// executor list (api/executors_*.cc). Thread-safe after loading.
#ifndef SORUN_RELAX_RELAX_MODULE_H_
#define SORUN_RELAX_RELAX_MODULE_H_

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "base/status.h"
#include "relax/library_blob.h"
#include "relax/vm_executable.h"
#include "relax/vm_program.h"
#include "runtime/module.h"

namespace sorun {
namespace relax {

class RelaxExecutableModule final : public ModuleNode {
 public:
  RelaxExecutableModule(std::string type_key, std::shared_ptr<const VmExecutable> exec, ObjectPtr<Object> keep_alive,
                        BlobGeneration generation)
      : type_key_(std::move(type_key)),
        exec_(std::move(exec)),
        keep_alive_(std::move(keep_alive)),
        generation_(generation) {}

  const char* type_key() const override { return type_key_.c_str(); }
  const void* class_id() const override { return &kClassId; }
  static constexpr char kClassId = 0;
  // No packed functions: sorun runs the executable through sorun::Model / relax::VmExecutor.
  PackedFunc GetFunction(std::string_view, const ObjectPtr<ModuleNode>&) override { return PackedFunc(); }
  int property_mask() const override { return kModuleBinarySerializable; }

  const VmExecutable& exec() const { return *exec_; }
  BlobGeneration generation() const { return generation_; }
  // The program, built on the first call from this module's imports (`path` names the model in
  // errors); later calls return the same program (or the same error).
  StatusOr<ObjectPtr<VmProgram>> Program(const std::string& path);

 private:
  std::string type_key_;
  std::shared_ptr<const VmExecutable> exec_;
  ObjectPtr<Object> keep_alive_;
  BlobGeneration generation_;
  std::mutex mutex_;
  bool built_ = false;
  Status build_status_;
  ObjectPtr<VmProgram> program_;
};

// The Relax root of a loaded model, or null when `root` is something else.
RelaxExecutableModule* AsRelaxExecutable(const Module& root);

// Registers the Relax VM loaders (idempotent, thread-safe).
Status RegisterRelaxVm();

}  // namespace relax
}  // namespace sorun

#endif  // SORUN_RELAX_RELAX_MODULE_H_
