// Realigning the constants of a Relax VM executable (docs/spec/RELAX_FORMAT.md section 4.2), for `sorun pack`.
// TVM writes tensor constants (the weights) at arbitrary byte offsets and its kernels fault on
// unaligned data, so a runtime must copy them -- unless the packer moves them. The rewrite:
//   - before each tensor constant whose data would not start 64-byte aligned, insert one unused string
//     constant (a pad: tag + u64 length + 12-75 bytes, 24-87 bytes in all) of the length that aligns
//     it; its text starts with the reserved prefix "__sorun_pad_" (IsVmAlignmentPad tells pads apart);
//   - renumber every constant-index argument (kind 2) of every Call instruction, and the V2 memory-scope
//     map, to the new pool. Nothing else refers to constants by index (TVM's vm.cc: the const pool is
//     read only through kConstIdx arguments, and by compiled-mode vmtir functions, whose machine code
//     holds the indices: those executables are refused).
// Instruction count, words per instruction, function table and every non-pad constant are unchanged;
// an executable already aligned for `origin` comes back byte for byte (packing twice is stable).
// Pure functions; thread-safe.
#ifndef SORUN_PACKER_RELAX_REALIGN_H_
#define SORUN_PACKER_RELAX_REALIGN_H_

#include <cstdint>
#include <string>

#include "base/status.h"
#include "relax/vm_executable.h"

namespace sorun {
namespace relax {

// The alignment sorun uses tensor data in place at (and TVM's allocator uses).
inline constexpr uint64_t kConstantDataAlignment = 64;

// True for the string constants this rewrite inserts (text starting with "__sorun_pad_").
bool IsVmAlignmentPad(const VmConstant& constant);

struct RealignReport {
  uint64_t tensor_constants = 0;
  uint64_t aligned_before = 0;  // tensors whose data was 64-byte aligned (for the same origin) before
  uint64_t aligned_after = 0;
  uint64_t pads_added = 0;
  uint64_t bytes_added = 0;  // payload growth
};

struct RealignedExecutable {
  std::string payload;  // the new SaveToBytes payload (magic first)
  RealignReport report;
};

// Rewrites `exec` (a parsed, validated executable: relax::ParseVmExecutable) so that every tensor
// constant's data starts at a multiple of 64 bytes from an aligned address, when the payload's first
// byte sits `origin` bytes past one (for a blob symbol at an aligned address: the payload's offset from
// the symbol's start). The result is re-parsed and checked before it is returned. Unimplemented for
// compiled-mode (vmtir) functions; InvalidArgument for an executable that was not decoded.
StatusOr<RealignedExecutable> RealignVmConstants(const VmExecutable& exec, ConstantTagDialect dialect, uint64_t origin);

}  // namespace relax
}  // namespace sorun

#endif  // SORUN_PACKER_RELAX_REALIGN_H_
