// InspectModelFile: what a model library holds, read from its bytes without loading or executing it
// (`sorun inspect`, and the structural half of `sorun verify`).
//
// The file is read with ElfImage (ModelFile). Without `__tvm_dev_mblob` it is a plain kernel library
// (or, with `__tvm_ffi_*library_bin`, a TVM v0.21+ artifact sorun does not load); with one, the blob is
// walked with ParseModuleBlob and a header-only handler per type key:
//   GraphExecutorFactory / GraphRuntimeFactory  ReadFactoryPayload(load_tensors=false) + GraphSpec::Parse
//   cuda / opencl                                ReadDeviceModulePayload
//   const_loader / metadata                      constant names, shapes and symbols (FORMAT.md 7.4)
//   metadata_module                              empty payload
// A Relax VM export (IsRelaxExportFile: the __tvm_ffi_*library_bin symbols, or a __tvm_dev_mblob rooted
// in a Relax executable) is read by InspectRelaxExport (inspect/relax_inspector.h) instead. The report's
// types are in inspect/inspect_report.h; the parts both kinds share in inspect/blob_inspection.h.
// Any other type key is an error naming it (payloads are not length-delimited, so the walk cannot go
// on); the message lists the modules read before it. The report then holds the module tree, the graph
// (inputs, outputs, params, node counts), a memory plan (PlanMemory with one device per device type
// the graph uses, parameters bound), the device modules' kernels and the
// integrity record (present, and whether it matches the blob). Without device_index the plan uses
// the default device the model needs: opencl:0 / cuda:0 when its device modules are all of that
// kind, else cpu:0.
//
// Pure function of the file's bytes; reentrant.
#ifndef SORUN_INSPECT_MODEL_INSPECTOR_H_
#define SORUN_INSPECT_MODEL_INSPECTOR_H_

#include <string>

#include "base/status.h"
#include "inspect/inspect_report.h"

namespace sorun {

struct InspectOptions {
  bool disassemble = false;  // Relax exports: fill relax->disassembly
};

StatusOr<InspectReport> InspectModelFile(const std::string& path, const InspectOptions& options = {});

}  // namespace sorun

#endif  // SORUN_INSPECT_MODEL_INSPECTOR_H_
