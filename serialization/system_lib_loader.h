// LoadSystemLib (TVM's `runtime.SystemLib(prefix)`): the module tree of a model linked into the program
// itself (TVM's `system-lib` build: kernels and the `__tvm_dev_mblob` blob registered at startup with
// TVMBackendRegisterSystemLibSymbol, runtime/library_module.h).
//
//   nothing registered under the prefix   NotFound naming the prefix;
//   no `<prefix>__tvm_dev_mblob`          the system library itself is the root (a kernel library);
//   a blob (with or without _import_tree) rebuilt as LoadModule rebuilds a .so's blob, the system
//                                         library (runtime/system_lib_module.h) standing for "_lib".
//
// A registered pointer carries no size: the blob's 8-byte length prefix is checked against the end of
// the loaded segment that holds it (DataLoss when it claims more); inside, everything is validated as
// for a file, errors naming `<prefix>__tvm_dev_mblob` and the byte offset. Each call builds a fresh tree. Thread-safe.
#ifndef SORUN_SERIALIZATION_SYSTEM_LIB_LOADER_H_
#define SORUN_SERIALIZATION_SYSTEM_LIB_LOADER_H_

#include <string>

#include "base/status.h"
#include "runtime/module.h"

namespace sorun {

// The name a system-lib model goes by in messages: "system-lib" or "system-lib:<prefix>".
std::string SystemLibName(const std::string& prefix);

StatusOr<Module> LoadSystemLib(const std::string& prefix = "");

}  // namespace sorun

#endif  // SORUN_SERIALIZATION_SYSTEM_LIB_LOADER_H_
