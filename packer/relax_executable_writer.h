// WriteVmExecutable: the writer of a Relax VM executable payload (`VMExecutable::SaveToBytes`,
// docs/spec/RELAX_FORMAT.md section 4), the inverse of relax::ParseVmExecutable: magic V1 or V2 (V2 writes the
// memory-scope section), version, function table, scopes, constant pool in the given tag dialect
// (TVM 0.16 - 0.20 enum tags or tvm-ffi type indices), instr_offset and instr_data as stored. For a
// parsed executable, WriteVmExecutable(ParseVmExecutable(x)) == x byte for byte (TVM's payloads
// round-trip exactly). Pack-time only (`sorun pack` rewrites executables); the runtime never writes one.
//
// The writer checks what it can without re-deriving the parser's rules: the magic, the instruction
// words it is given are written as they are (the caller validates the model with
// relax::ValidateVmExecutable, or re-parses the output). Pure function; thread-safe.
#ifndef SORUN_PACKER_RELAX_EXECUTABLE_WRITER_H_
#define SORUN_PACKER_RELAX_EXECUTABLE_WRITER_H_

#include "base/status.h"
#include "format/binary_writer.h"
#include "relax/vm_executable.h"

namespace sorun {
namespace relax {

// Appends the payload of `exec` (magic first, no length prefix) to `writer`. InvalidArgument on a magic
// other than V1/V2, a scope map on a V1 executable, or a tensor constant whose data does not match its
// dtype and shape.
Status WriteVmExecutable(const VmExecutable& exec, ConstantTagDialect dialect, BinaryWriter* writer);

// Appends one constant record (tag in `dialect`, then the value) to `writer`.
Status WriteVmConstant(const VmConstant& constant, ConstantTagDialect dialect, BinaryWriter* writer);

// Byte position (relative to the writer's origin, BinaryWriter::AbsolutePosition) at which the data of a
// tensor constant of `ndim` dimensions starts when its record is written at `record_position`.
uint64_t TensorConstantDataPosition(uint64_t record_position, size_t ndim);

}  // namespace relax
}  // namespace sorun

#endif  // SORUN_PACKER_RELAX_EXECUTABLE_WRITER_H_
