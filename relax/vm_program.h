// VmProgram: the immutable, shared half of a loaded Relax VM model — one per model, used by every
// executor made from it (relax/vm_executor.h):
//   - the validated executable (relax/vm_executable.h), kept alive with the bytes it borrows;
//   - the function table resolved once, at creation, as TVM's VM does at init: each entry is a VM
//     function, a builtin sorun implements, or a kernel of the model's kernel library (tvm-ffi
//     `__tvm_ffi_<name>` for TVM 0.21+ exports, the legacy packed C function for 0.16 - 0.20), under
//     the kernel rule (runtime/library_module.h); anything else is an error naming it;
//   - the constant pool as VM values: tensors used in place (read-only) when their data is 64-byte
//     aligned in memory, else copied ONCE into aligned memory (TVM's kernels fault on unaligned data,
//     docs/spec/RELAX_FORMAT.md 4.2); shapes, strings and scalars decoded once;
//   - the tensor constants on each non-CPU device executors run on: uploaded ONCE per device, by the
//     first executor made for it, and shared read-only by every executor of the program there
//     (executor/device_weight_cache.h, the graph executor's rule too); freed with the program;
//   - main's signature: inputs (names, dtype, static dims from its leading checks) and outputs (the
//     flattened return value, described by a static walk of main where the bytecode allows).
// It is the Relax VM kind's Executable (executor/executable.h): NewExecutor makes VmExecutors.
// Immutable after Create as callers see it (the device copies are a cache behind its own per-device
// locks); thread-safe to share, and NewExecutor / ConstantsOn may be called from many threads at once.
#ifndef SORUN_RELAX_VM_PROGRAM_H_
#define SORUN_RELAX_VM_PROGRAM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/executor_types.h"
#include "base/object.h"
#include "base/status.h"
#include "executor/device_weight_cache.h"
#include "executor/executable.h"
#include "relax/vm_builtin_table.h"
#include "relax/vm_executable.h"
#include "relax/vm_value.h"
#include "runtime/c_runtime_api.h"
#include "runtime/ffi_function.h"
#include "runtime/module.h"

namespace sorun {
namespace relax {

// The calling convention of the kernel library's kernels.
enum class KernelAbi { kLegacyPacked, kFfi };

// One resolved function-table entry.
struct VmCallee {
  enum class Kind : uint8_t { kVmFunction, kBuiltin, kFfiKernel, kLegacyKernel };
  Kind kind = Kind::kBuiltin;
  std::string name;
  int vm_function = -1;                    // kVmFunction: index into exec().functions
  Builtin builtin = Builtin::kNullValue;   // kBuiltin
  FfiKernel ffi;                           // kFfiKernel
  TVMBackendPackedCFunc legacy = nullptr;  // kLegacyKernel
};

class VmProgram final : public Executable {
 public:
  // `exec` (validated) and the bytes it borrows are kept alive by `keep_alive`; kernels come from
  // `kernel_library` (a LibraryModuleNode) with `abi`. `path` names the model in errors.
  static StatusOr<ObjectPtr<VmProgram>> Create(std::shared_ptr<const VmExecutable> exec, ObjectPtr<Object> keep_alive,
                                               Module kernel_library, KernelAbi abi, std::string path);

  const VmExecutable& exec() const { return *exec_; }
  const std::vector<VmCallee>& callees() const { return callees_; }
  const std::vector<VmValue>& constants() const { return constants_; }
  const Module& kernel_library() const { return kernel_library_; }
  KernelAbi abi() const { return abi_; }
  const std::string& path() const { return path_; }
  int main_function() const { return main_; }
  // main's parameters, dtypes as sorun's API spells them (ApiDType: bool is Bool() in every generation).
  const std::vector<TensorInfo>& inputs() const { return inputs_; }
  // False for a parameter main never checks (its dtype in inputs() is a placeholder).
  bool input_dtype_known(int index) const { return input_dtype_known_[static_cast<size_t>(index)]; }
  // The dtype main's bytecode and kernels check input `index` for, in the executable's own codes
  // (DLPackBool() for a TVM 0.23+ bool); inputs()[index].dtype when main does not check it.
  DLDataType input_model_dtype(int index) const { return input_model_dtypes_[static_cast<size_t>(index)]; }
  // The rank main checks input `index` for (0 for a 0-d tensor), -1 when it does not check one.
  int64_t input_ndim(int index) const { return input_ndims_[static_cast<size_t>(index)]; }
  // True for an R.Prim parameter (main checks it with check_prim_value_info): callers give a 0-d tensor
  // and main receives its value.
  bool input_is_scalar(int index) const { return input_is_scalar_[static_cast<size_t>(index)]; }
  bool has_scalar_inputs() const { return has_scalar_inputs_; }
  // Outputs as far as the bytecode says (dims -1 where computed at run time, API dtypes); empty when unknown.
  const std::vector<TensorInfo>& outputs() const { return outputs_; }
  DTypeCodes dtype_codes() const { return exec_->dtype_codes; }
  uint64_t constant_bytes_in_place() const { return in_place_bytes_; }
  uint64_t constant_bytes_copied() const { return copied_bytes_; }
  int constants_copied() const { return copied_count_; }
  // The constant pool for an executor whose first device is `device`: constants() on the CPU; elsewhere
  // the same values with each tensor replaced by its read-only copy on `device`, uploaded by the first
  // call for that device (under that device's lock: concurrent callers wait and share it) and kept
  // for every later executor. A failed upload keeps nothing (the next call tries again). Any thread.
  StatusOr<std::vector<VmValue>> ConstantsOn(DLDevice device) const;
  // Bytes of the tensor constants uploaded to `device` so far (0 for the CPU). Any thread.
  uint64_t constant_bytes_on(DLDevice device) const { return device_constants_->device_bytes(device); }

  // A VmExecutor (relax/vm_executor.h) of this program.
  StatusOr<std::unique_ptr<ModelExecutor>> NewExecutor(std::vector<DLDevice> devices,
                                                       std::shared_ptr<ThreadPool> thread_pool) const override;

 private:
  VmProgram() : Executable(ExecutorKind::kRelaxVm) {}
  Status ResolveCallees();
  Status MakeConstants();
  Status CheckMemoryScopes() const;

  std::shared_ptr<const VmExecutable> exec_;
  ObjectPtr<Object> keep_alive_;
  Module kernel_library_;
  KernelAbi abi_ = KernelAbi::kFfi;
  std::string path_;
  int main_ = -1;
  std::vector<VmCallee> callees_;
  std::vector<VmValue> constants_;
  std::vector<TensorInfo> inputs_;
  std::vector<bool> input_dtype_known_;
  std::vector<DLDataType> input_model_dtypes_;
  std::vector<bool> input_is_scalar_;
  std::vector<int64_t> input_ndims_;
  bool has_scalar_inputs_ = false;
  std::vector<TensorInfo> outputs_;
  uint64_t in_place_bytes_ = 0;
  uint64_t copied_bytes_ = 0;
  int copied_count_ = 0;
  // The tensors of constants_ (undefined for the other kinds) and their copies per device.
  std::unique_ptr<DeviceWeightCache> device_constants_;
};

}  // namespace relax
}  // namespace sorun

#endif  // SORUN_RELAX_VM_PROGRAM_H_
