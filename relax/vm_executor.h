// VmExecutor: the Relax VM kind of ModelExecutor (executor/model_executor.h): runs `main` of a Relax
// VM program (relax/vm_program.h) — TVM's relax.VirtualMachine for bytecode exports, with sorun's
// contracts:
//   - registers and frames per executor; Call / Ret / Goto / If; VM->VM calls push a frame (depth
//     capped at kMaxCallDepth) and a run executes at most kMaxInstructionsPerRun instructions, so no
//     bytecode can recurse or loop without end (a Status, never a hang);
//   - devices: the caller's list with the CPU appended when the last is not a CPU (TVM's rule);
//     alloc_storage's device index -1 is that host device; tensor constants are used from the shared
//     program on the CPU, and on a non-CPU devices[0] from the program's one copy there (uploaded by
//     the first executor made for that device, shared by all: VmProgram::ConstantsOn);
//   - memory: every alloc_storage / alloc_tensor / reshape / alloc_shape_heap call site keeps what it
//     made (per call site and occurrence within a run, the first kMaxCachedOccurrences) and reuses it on
//     the next run when it fits, so a static-shape model allocates nothing after its first run; the
//     registers of the live frames are capped (kMaxLiveRegisters);
//   - inputs = main's parameters (copied into executor-owned, 64-byte aligned tensors by SetInput, or
//     bound zero-copy), checked against main's leading checks with a message naming the input;
//     outputs = main's return value flattened depth-first; they view executor memory and are valid
//     until the next Run (as the graph executor's). outputs() is main's static description (dims -1
//     where computed at run time); a run's actual shapes are those of the tensors GetOutput returns.
// Capabilities: neither output zero-copy (kernels write into memory the bytecode allocates) nor
// params files (the weights are constants of the executable). Threading: ModelExecutor's contract;
// Memory() reads the program and an atomic counter only: weights = the tensor constants (shared by
// the program's executors, on the CPU or as the one copy on devices[0]), activations = this
// executor's storage.
#ifndef SORUN_RELAX_VM_EXECUTOR_H_
#define SORUN_RELAX_VM_EXECUTOR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/executor_types.h"
#include "base/status.h"
#include "executor/kernel_timer.h"
#include "executor/model_executor.h"
#include "relax/vm_program.h"
#include "relax/vm_value.h"
#include "runtime/ffi_c_api.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"

namespace sorun {
namespace relax {

inline constexpr int kMaxCallDepth = 256;
// Registers of the frames alive at once (a VmValue is 24 bytes: 96 MiB at most).
inline constexpr int64_t kMaxLiveRegisters = int64_t{1} << 22;
// Occurrences per call site within one run whose results are kept for the next run; later ones (a VM
// function called more often than this in one run) are made fresh and freed when dropped.
inline constexpr size_t kMaxCachedOccurrences = 64;
inline constexpr int64_t kMaxInstructionsPerRun = int64_t{1} << 26;
inline constexpr int64_t kMaxShapeHeap = int64_t{1} << 20;

class VmExecutor final : public ModelExecutor {
 public:
  static StatusOr<std::unique_ptr<VmExecutor>> Create(ObjectPtr<VmProgram> program, std::vector<DLDevice> devices,
                                                      std::shared_ptr<ThreadPool> thread_pool = nullptr);
  ~VmExecutor() override;

  const VmProgram& program() const { return *program_; }

 protected:
  Status DoSetInput(int index, const DLTensor& value) override;
  // Binds the caller's memory (64-byte aligned, compact, on devices[0]); `owner` keeps it alive.
  Status DoSetInputZeroCopy(int index, const DLTensor& value, ObjectPtr<Object> owner) override;
  StatusOr<Tensor> DoGetInput(int index) const override;
  StatusOr<Tensor> DoGetOutput(int index) const override;
  Status DoRun() override;
  // The constants used in place (as the graph executor does with its weights).
  void PagesToWarm(std::vector<PageRange>* pages) const override;
  // Runs `repeat` times; per kernel call site (node_id = instruction, name instr_<pc>) the mean and min
  // of its calls (KernelTimer).
  StatusOr<std::vector<NodeProfile>> DoProfile(int repeat) override;
  // One run, every kernel call timed (KernelTimer).
  StatusOr<std::vector<KernelEvent>> DoTrace() override;
  std::vector<DeviceMemory> DescribeMemory() const override;
  std::string MissingCapabilityReason(std::string_view capability) const override;

 private:
  // One activation of a vm function: its register file (reused across calls at the same depth).
  struct Frame {
    int function = -1;
    std::vector<VmValue> regs;
  };
  // What one builtin call site made, per occurrence within a run (a site inside a VM function called
  // twice in one run needs two live results).
  struct SiteCache {
    std::vector<VmValue> made;
    size_t used = 0;  // occurrences so far in this run
  };
  explicit VmExecutor(Setup setup) : ModelExecutor(std::move(setup)) {}
  Status RunMain();
  StatusOr<VmValue> Invoke(int function, const VmValue* args, int num_args, int depth);
  Status ExecCall(int function, int64_t pc, Frame& frame, int depth);
  Status CallKernel(const VmCallee& callee, const VmInstruction& in, Frame& frame);
  // Device graphs: the first kernel of a recorded run that took host memory (RecordedRunRefusal).
  std::string RecordedRunRefusal() override;
  void NoteHostKernel(const VmCallee& callee, const VmInstruction& in, const Frame& frame);
  // The value kernel argument `i` (not an immediate) gives `callee`: a tensor, int, float or dtype.
  // InvalidArgument naming the kernel and argument for anything else (null included).
  StatusOr<const VmValue*> KernelArgument(const VmCallee& callee, const VmArg& a, size_t i, const Frame& frame) const;
  // Runs builtin `callee` on the evaluated arguments of `in`: its row's handler (relax/vm_builtin_call.h).
  StatusOr<VmValue> CallBuiltin(const VmCallee& callee, const VmInstruction& in, int64_t pc, Frame& frame);
  // The handlers' view of this executor (call site caches, devices, storage count, dtype codes).
  friend class BuiltinCall;
  VmValue ArgValue(const VmArg& arg, const Frame& frame) const;
  const VmValue& Constant(int64_t index) const;
  Status CheckInput(int index, const DLTensor& value) const;
  // The dtype input `index`'s tensor carries inside the VM: the one main checks for (the executable's
  // own codes: a TVM 0.23+ bool stays DLPackBool() for its kernels), else the caller's `given`.
  DLDataType ModelDType(int index, DLDataType given) const;
  // SetInput's copy (also SetInputZeroCopy's path for a scalar).
  Status CopyInput(int index, const DLTensor& value);
  // The value an R.Prim parameter receives: the element of the 0-d host tensor `t`.
  static StatusOr<VmValue> ScalarValue(const Tensor& t);
  // `t` as callers see it: a view with the API's dtype when the executable spells it differently.
  StatusOr<Tensor> AsApiTensor(const Tensor& t) const;
  Status FlattenOutputs(const VmValue& v, int depth);
  // Per call site (pc) caches of what a builtin made, one entry per occurrence within a run.
  SiteCache& Site(int64_t pc);

  ObjectPtr<VmProgram> program_;
  std::vector<DLDevice> devices_;          // devices() + the host device (TVM's rule)
  std::vector<VmValue> device_constants_;  // the pool on a non-CPU devices[0], its tensors shared (empty on the CPU)
  std::vector<VmValue> inputs_;
  std::vector<VmValue> main_args_;              // inputs_ with R.Prim scalars as values (models that have them), reused
  std::vector<bool> owned_input_;               // inputs_[i] is this executor's tensor (SetInput), not a caller's
  std::vector<Tensor> outputs_;                 // the last run's (empty before the first run and after a failed one)
  std::vector<std::unique_ptr<Frame>> frames_;  // frames_[depth], reused
  std::vector<std::unique_ptr<SiteCache>> sites_;  // by pc
  std::string host_kernel_;                        // set while a run is recorded (NoteHostKernel)
  std::vector<VmValue> builtin_args_;
  std::vector<TVMFFIAny> ffi_args_;
  std::vector<TVMValue> legacy_values_;
  std::vector<int> legacy_codes_;
  int64_t instructions_left_ = 0;
  int64_t live_registers_ = 0;
  std::atomic<uint64_t> storage_bytes_{0};  // bytes alloc_storage holds (Memory() reads it from any thread)
  KernelTimer* timer_ = nullptr;            // while Profile / Trace run: times every kernel call
};

}  // namespace relax
}  // namespace sorun

#endif  // SORUN_RELAX_VM_EXECUTOR_H_
