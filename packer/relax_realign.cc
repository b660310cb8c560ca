#include "packer/relax_realign.h"

#include <string>
#include <utility>
#include <vector>

#include "format/binary_writer.h"
#include "packer/relax_executable_writer.h"
#include "runtime/tensor_io.h"

namespace sorun {
namespace relax {
namespace {

constexpr uint64_t kArgValueMask = (uint64_t{1} << 56) - 1;

// A pad string of `length` (>= 12) bytes: the reserved pad prefix "__sorun_pad_" (runtime/tensor_io.h),
// then '_', so that a reader (`sorun inspect`) can tell pads from the model's own strings.
VmConstant MakePad(uint64_t length) {
  VmConstant pad;
  pad.kind = VmConstantKind::kString;
  std::string text(kAlignmentPadPrefix);
  text.resize(static_cast<size_t>(length), '_');
  pad.str = std::move(text);
  return pad;
}

bool IsAligned(uint64_t position) { return position % kConstantDataAlignment == 0; }

// Absolute position (origin-relative) of the first constant record of `exec` when written at `origin`:
// the bytes before the pool do not depend on the constants, so write the executable without them (and
// without code): its size minus the three empty vectors' counts is where the first record goes.
StatusOr<uint64_t> ConstantPoolStart(const VmExecutable& exec, ConstantTagDialect dialect, uint64_t origin) {
  VmExecutable head;
  head.magic = exec.magic;
  head.version = exec.version;
  head.functions = exec.functions;
  head.scopes = exec.scopes;
  BinaryWriter w(origin);
  SORUN_RETURN_IF_ERROR(WriteVmExecutable(head, dialect, &w));
  return w.AbsolutePosition() - 16;  // instr_offset and instr_data counts follow the (empty) pool
}

}  // namespace

bool IsVmAlignmentPad(const VmConstant& c) {
  return c.kind == VmConstantKind::kString && c.str.rfind(kAlignmentPadPrefix, 0) == 0;
}

StatusOr<RealignedExecutable> RealignVmConstants(const VmExecutable& exec, ConstantTagDialect dialect,
                                                 uint64_t origin) {
  if (exec.instructions.size() != exec.instr_offset.size()) {
    return InvalidArgument("the executable's instructions are not decoded (parse it with ParseVmExecutable)");
  }
  for (const VmFunction& f : exec.functions) {
    if (f.kind == VmFunctionKind::kVmTirFunc) {
      return Unimplemented("function '" + f.name +
                           "' is a compiled-mode (exec_mode=\"compiled\") vmtir function: its machine code indexes "
                           "the constant pool directly, so the constants cannot be renumbered to realign them");
    }
  }
  RealignedExecutable out;
  RealignReport& report = out.report;

  // The new pool: pads where a tensor's data would be unaligned; old index -> new index. Only positions
  // are tracked (a tensor record is its header plus its data; other records are measured by writing
  // them), so the weights are copied once, into the result.
  SORUN_ASSIGN_OR_RETURN(uint64_t position, ConstantPoolStart(exec, dialect, origin));
  const uint64_t pool_start = position;
  std::vector<VmConstant> constants;
  constants.reserve(exec.constants.size());
  std::vector<int64_t> new_index(exec.constants.size());
  for (size_t i = 0; i < exec.constants.size(); ++i) {
    const VmConstant& c = exec.constants[i];
    if (c.kind == VmConstantKind::kTensor) {
      ++report.tensor_constants;
      const uint64_t data_at = TensorConstantDataPosition(position, c.shape.size());
      if (!IsAligned(data_at)) {
        // pad record = 4 (tag) + 8 (length) + L bytes, L in [12, 75]: the prefix, then what puts the
        // tensor's data on a boundary.
        const uint64_t prefix = sizeof(kAlignmentPadPrefix) - 1;
        const uint64_t length = prefix + (kConstantDataAlignment - (data_at + 12 + prefix) % kConstantDataAlignment) %
                                             kConstantDataAlignment;
        constants.push_back(MakePad(length));
        position += 12 + length;
        report.bytes_added += 12 + length;
        ++report.pads_added;
      }
      position = TensorConstantDataPosition(position, c.shape.size()) + c.data_bytes;
    } else {
      BinaryWriter record;
      SORUN_RETURN_IF_ERROR_CTX(WriteVmConstant(c, dialect, &record), "constant " + std::to_string(i));
      position += record.size();
    }
    new_index[i] = static_cast<int64_t>(constants.size());
    constants.push_back(c);
  }

  VmExecutable rewritten;
  rewritten.magic = exec.magic;
  rewritten.version = exec.version;
  rewritten.functions = exec.functions;
  rewritten.scopes = exec.scopes;
  for (VmConstantScope& s : rewritten.scopes) s.const_index = new_index[static_cast<size_t>(s.const_index)];
  rewritten.constants = std::move(constants);
  rewritten.instr_offset = exec.instr_offset;
  rewritten.instr_data = exec.instr_data;
  for (const VmInstruction& in : exec.instructions) {
    if (in.op != VmOpcode::kCall) continue;
    for (size_t k = 0; k < in.args.size(); ++k) {
      if (in.args[k].kind != VmArgKind::kConstIdx) continue;
      const uint64_t value = static_cast<uint64_t>(new_index[static_cast<size_t>(in.args[k].value)]);
      rewritten.instr_data[static_cast<size_t>(in.word_offset) + 4 + k] =
          static_cast<int64_t>((uint64_t{2} << 56) | (value & kArgValueMask));
    }
  }

  BinaryWriter w(origin);
  SORUN_RETURN_IF_ERROR(WriteVmExecutable(rewritten, dialect, &w));
  out.payload = w.TakeBytes();

  // Check the result the way a loader reads it: it parses and validates, and every tensor is aligned.
  auto parsed = ParseVmExecutable(reinterpret_cast<const uint8_t*>(out.payload.data()), out.payload.size(), dialect,
                                  "realigned relax.VMExecutable", origin);
  if (!parsed.ok()) return Internal("the realigned executable does not parse: " + parsed.status().ToString());
  for (size_t i = 0; i < parsed->constants.size(); ++i) {
    const VmConstant& c = parsed->constants[i];
    if (c.kind != VmConstantKind::kTensor) continue;
    if (!IsAligned(c.data_offset)) {
      return Internal("realigned constant " + std::to_string(i) + " has its data at byte " +
                      std::to_string(c.data_offset) + ", not a multiple of 64");
    }
    ++report.aligned_after;
  }
  // The input's positions for the same origin: its offsets were read relative to the parser's base
  // offset, so measure each tensor's data against the first record's position.
  for (const VmConstant& c : exec.constants) {
    if (c.kind == VmConstantKind::kTensor && IsAligned(pool_start + (c.data_offset - exec.constants.front().offset))) {
      ++report.aligned_before;
    }
  }
  return out;
}

}  // namespace relax
}  // namespace sorun
