// Text disassembly of a validated Relax VM executable (relax/vm_executable.h) and the classification
// of every function its bytecode can call, before anything is dlopen'ed:
//   kernel             a packed function the kernel library defines (the caller's predicate: e.g. the
//                      library exports `__tvm_ffi_<name>`, or `<name>` for TVM 0.16);
//   supported builtin  a `vm.builtin.*` the sorun VM implements (the static-shape set plus the
//                      shape-heap trio, issue 17 item 3);
//   vm function        a bytecode function of the same executable (a VM->VM call);
//   unsupported        everything else, with the family named: KV-cache, CUDA graph, disco, BYOC /
//                      contrib externs, compiled-mode (vmtir) functions, other builtins, unknown names.
// It also reads the inputs' facts from main's leading checks (check_tensor_info: ndim and dtype;
// match_shape: static dims) and the outputs' from a static walk of main. Pure functions of their
// arguments; thread-safe.
#ifndef SORUN_RELAX_VM_DISASSEMBLER_H_
#define SORUN_RELAX_VM_DISASSEMBLER_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/executor_types.h"
#include "base/status.h"
#include "relax/vm_executable.h"

namespace sorun {
namespace relax {

enum class CalleeClass { kKernel, kSupportedBuiltin, kVmFunction, kUnsupported };
const char* CalleeClassName(CalleeClass c);

// True when the library defines kernel `name`.
using KernelPredicate = std::function<bool(const std::string& name)>;

// One entry of the function table, classified.
struct CalleeInfo {
  int function_index = 0;
  std::string name;
  CalleeClass callee_class = CalleeClass::kUnsupported;
  std::string reason;  // why unsupported (empty otherwise)
  int call_sites = 0;  // Call instructions naming it (function-index arguments not counted)
};

// The builtins the sorun VM implements ("vm.builtin.check_tensor_info", ...): the names of the rows of
// relax/vm_builtin_table.h, in table order.
const std::vector<std::string>& SupportedBuiltins();
bool IsSupportedBuiltin(std::string_view name);
// The family of a name sorun refuses ("KV-cache builtin", ...); "" when no known family matches.
std::string UnsupportedFamily(std::string_view name);

// Every function-table entry, in table order. Kernels are looked up first (as TVM resolves the
// library's imports before the global registry); `is_kernel` may be null (no kernel known).
std::vector<CalleeInfo> ClassifyFunctions(const VmExecutable& exec, const KernelPredicate& is_kernel);

// Unimplemented naming every unsupported function that a Call instruction or a function-index
// argument reaches (and its family), OK when there is none.
Status CheckCalleesSupported(const VmExecutable& exec, const std::vector<CalleeInfo>& callees);

// One instruction as text: "%3 = call matmul(%0, c[2])", "ret %8", "goto +3", "if %4 else +5".
std::string FormatInstruction(const VmExecutable& exec, const VmInstruction& instruction);

// The whole executable: header, constants (kind, dtype, shape, bytes, offset, alignment), every
// function (vm functions with their numbered instructions) with its class.
std::string Disassemble(const VmExecutable& exec, const KernelPredicate& is_kernel);

// What main's leading checks say about one input.
struct VmInputInfo {
  std::string name;
  int64_t ndim = -1;  // -1 unknown
  bool has_dtype = false;
  DLDataType dtype{kDLFloat, 32, 1};
  std::vector<int64_t> dims;  // -1 for a dimension that is not static; empty when unknown
  bool is_scalar = false;     // an R.Prim parameter (check_prim_value_info): a value of `dtype`, no tensor
};

// The inputs of function `function` ("main"): its param_names, with the facts of check_tensor_info,
// check_prim_value_info and match_shape calls on registers 0..num_args-1 before the first call to
// anything else.
// NotFound when there is no such vm function.
StatusOr<std::vector<VmInputInfo>> DescribeInputs(const VmExecutable& exec, const std::string& function = "main");

// The outputs of vm function `function`: its return value flattened depth-first, each leaf described
// from the instruction that made it (alloc_tensor / reshape with constant shape and dtype, make_shape
// with immediates; -1 dims otherwise), named output_<i>. With branches, every instruction that may
// have made a value is described and the descriptions merged (a dim they disagree on is -1), as are
// several returns. Empty when the walk cannot tell (a value from a VM call or a kernel, writers that
// disagree in count, dtype or rank, a returned parameter).
std::vector<TensorInfo> DescribeOutputs(const VmExecutable& exec, int function);

}  // namespace relax
}  // namespace sorun

#endif  // SORUN_RELAX_VM_DISASSEMBLER_H_
