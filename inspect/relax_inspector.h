// `sorun inspect` for Relax VM exports (TVM 0.16 - 0.27, docs/relax.md): finds the blob symbol of any
// of the three container generations in a ModelFile (no dlopen; a library's symbol bounded by its
// PT_LOAD segment, BoundSymbolBytes + ReadBlobPrefix, the rule of the graph blobs), parses it with
// relax::ParseLibraryBlob / ParseVmExecutable, and fills the report: the module tree and device
// modules (the InspectReport fields the graph path fills too) and a RelaxInspection (executable,
// functions, main's inputs, constants with their alignment, classified callees, the verdict of
// relax::CheckRelaxExportSupported with the kernel predicate from the ELF's exported functions).
// Called by InspectModelFile; tools/cli/relax_report.h renders the RelaxInspection for `sorun inspect`.
// Pure functions of the file's bytes; reentrant.
#ifndef SORUN_INSPECT_RELAX_INSPECTOR_H_
#define SORUN_INSPECT_RELAX_INSPECTOR_H_

#include "base/status.h"
#include "inspect/inspect_report.h"
#include "inspect/model_file.h"
#include "relax/library_blob.h"

namespace sorun {

// The TVM versions writing `generation`'s container: "TVM 0.16 - 0.20", "TVM 0.21", "TVM 0.22+".
const char* RelaxGenerationVersions(relax::BlobGeneration generation);

// True when the file is a Relax export: it defines __tvm_ffi_library_bin / __tvm_ffi__library_bin, or
// its __tvm_dev_mblob's first module is a Relax executable (TVM 0.16 - 0.20).
bool IsRelaxExportFile(const ModelFile& file);

// Reads the Relax export in `file` into `report` (kind kRelaxExport, blob fields, modules,
// device_modules, relax) and returns true; false (report untouched) when the container is well formed
// but its root is not a Relax executable (a tvm-ffi build of something else). DataLoss naming the
// symbol and byte offset for malformed bytes.
StatusOr<bool> InspectRelaxExport(const ModelFile& file, bool disassemble, InspectReport* report);

}  // namespace sorun

#endif  // SORUN_INSPECT_RELAX_INSPECTOR_H_
