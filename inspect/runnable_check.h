// CheckRunnable: the structural checks that `sorun::Load` and executor creation make, decided from a
// model file's bytes without loading it — the part of `sorun verify` that answers "is this safe to
// run?". InspectModelFile already applies the blob-level rules (blob bounds, import-tree rules, graph
// JSON, storage plan, params against the graph); this adds what only loading would otherwise find:
//   - the root (module 0) is a graph-executor factory and its FIRST import is the kernel library
//     ("_lib"), which the executor resolves kernels in;
//   - every kernel a graph node calls is a function the library itself exports (defined, STT_FUNC or
//     STT_GNU_IFUNC, global or weak) and not a reserved ABI name (keys::IsReservedAbiSymbol), or a
//     kernel a device module of the blob lists — the same rule the runtime applies to the dlopen'd
//     library (runtime/module.h, "Kernels"; runtime/library_module.h).
// Pure function of its arguments; thread-safe.
#ifndef SORUN_INSPECT_RUNNABLE_CHECK_H_
#define SORUN_INSPECT_RUNNABLE_CHECK_H_

#include "base/status.h"
#include "inspect/inspect_report.h"
#include "inspect/model_file.h"

namespace sorun {

// OK, or FailedPrecondition / DataLoss naming the file, the module or node, and the symbol.
Status CheckRunnable(const ModelFile& file, const InspectReport& report);

}  // namespace sorun

#endif  // SORUN_INSPECT_RUNNABLE_CHECK_H_
