// LoadSystemLib (TVM's `runtime.SystemLib(prefix)`): the module tree of a model linked into the program
// itself (TVM's `system-lib` build: kernels and the module blob registered at startup by global
// constructors, through TVMBackendRegisterSystemLibSymbol (TVM 0.8 - 0.20) or
// TVMFFIEnvModRegisterSystemLibSymbol (tvm-ffi, TVM 0.21+), one table: runtime/library_module.h).
//
//   nothing registered under the prefix   NotFound naming the prefix;
//   no blob registered                    the system library itself is the root (a kernel library);
//   `<prefix>__tvm_dev_mblob`             rebuilt as LoadModule rebuilds a .so's blob (with or without
//                                         _import_tree), the system library (runtime/system_lib_module.h)
//                                         standing for "_lib";
//   `<prefix>__tvm_ffi__library_bin`      (0.22+; `__tvm_ffi_library_bin`, 0.21) handed to the Relax VM's
//                                         container loader (keys::kFuncLoadFfiLibraryBin, relax/relax_module.h)
//                                         with the system library as "_lib"; Unimplemented when the
//                                         runtime does not link the VM;
//   blobs of two generations              FailedPrecondition naming both.
//
// A registered pointer carries no size: the blob's 8-byte length prefix is checked against the end of
// the loaded segment that holds it (DataLoss when it claims more); inside, everything is validated as
// for a file, errors naming the registered blob symbol and the byte offset. Each call builds a fresh
// tree. Thread-safe.
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
