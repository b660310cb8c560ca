// What the graph and the Relax inspectors (inspect/model_inspector.h, inspect/relax_inspector.h)
// read the same way from a model file's blob: the kernels of a cuda / opencl module's payload and the
// integrity record next to the blob. Pure functions of their arguments; reentrant.
#ifndef SORUN_INSPECT_BLOB_INSPECTION_H_
#define SORUN_INSPECT_BLOB_INSPECTION_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "backends/device_module_payload.h"
#include "base/status.h"
#include "format/binary_reader.h"
#include "inspect/inspect_report.h"
#include "inspect/model_file.h"

namespace sorun {

// The integrity record of `file` (if any) checked against the `blob_bytes` blob bytes at `blob` (the
// length prefix on). Shared by graph and Relax reports.
void InspectChecksum(const ModelFile& file, const uint8_t* blob, uint64_t blob_bytes, ChecksumInfo* out);

// The kernels of a cuda / opencl payload at `reader` (consumed exactly), read in `grammar`.
Status InspectDeviceModule(size_t index, const std::string& type_key, BinaryReader& reader, PayloadGrammar grammar,
                           InspectedDeviceModule* out);

}  // namespace sorun

#endif  // SORUN_INSPECT_BLOB_INSPECTION_H_
