// The C ABI headers kernel sources are compiled against, embedded in the `sorun` binary so that
// `sorun pack --lib kernels.c` works outside the sorun source tree: `runtime/c_runtime_api.h` (TVM's
// legacy C ABI as sorun declares it) and `dlpack/dlpack.h` (the DLPack 0.6 header sorun is built
// with). WriteEmbeddedHeaders() writes them below a directory, which `sorun pack` passes to the
// compiler with -I after the user's --include-dir directories (so a user's copy wins).
// The contents are generated at build time (//packer:embedded_headers_cc). Thread-safe.
#ifndef SORUN_PACKER_EMBEDDED_HEADERS_H_
#define SORUN_PACKER_EMBEDDED_HEADERS_H_

#include <string>
#include <vector>

#include "base/status.h"

namespace sorun {

// Defined in the generated embedded_headers_data.cc.
extern const char kEmbeddedCRuntimeApiH[];
extern const char kEmbeddedDlpackH[];

struct EmbeddedHeader {
  const char* relative_path;  // "runtime/c_runtime_api.h"
  const char* contents;
};

const std::vector<EmbeddedHeader>& EmbeddedHeaders();

// Writes every embedded header below `directory` (creating subdirectories).
Status WriteEmbeddedHeaders(const std::string& directory);

}  // namespace sorun

#endif  // SORUN_PACKER_EMBEDDED_HEADERS_H_
