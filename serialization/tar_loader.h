// Loading `.tar` model archives (TVM's export_library(".tar") layout: object files + the blob object),
// kept out of the core loader because it needs the system compiler at load time. RegisterTarLoader()
// registers TVM's "runtime.module.loadfile_tar": the archive is extracted to a private temporary
// directory, linked with $CC (or cc) into a shared library and loaded like any .so. //api:sorun
// registers it; the embedded //api:sorun_cpu does not. Idempotent and thread-safe.
// The archive's devc.o carries sorun's integrity record (__sorun_blob_checksum) when the exporter
// wrote one: it is verified in the linked library exactly as for a .so (LoadOptions::verify_checksum;
// the registered function takes the resolved choice as an optional second argument, 0 or 1, and
// otherwise resolves the default: SORUN_VERIFY_CHECKSUM, else off).
#ifndef SORUN_SERIALIZATION_TAR_LOADER_H_
#define SORUN_SERIALIZATION_TAR_LOADER_H_

#include <string>

#include "base/status.h"
#include "runtime/module.h"
#include "serialization/loader.h"

namespace sorun {

Status RegisterTarLoader();
// The loader itself (also usable without registration).
StatusOr<Module> LoadTarArchive(const std::string& path, const LoadOptions& options = {});

}  // namespace sorun

#endif  // SORUN_SERIALIZATION_TAR_LOADER_H_
