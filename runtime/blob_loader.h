// Blob loaders: how a module type comes back from the serialized blob.
//
// A loader reads exactly its module's payload from a BinaryReader positioned right after the type
// key and returns the module. Loaders live in the global FunctionRegistry under TVM's names,
// "runtime.module.loadbinary_<type_key>", as PackedFuncs taking one opaque handle (the
// BinaryReader*) and returning a Module; RegisterBlobLoader wraps a typed C++ function into that
// form. Applications register loaders for their own module types the same way. The reader's owner()
// keeps the blob memory alive for zero-copy views. Thread-safe (the registry is).
#ifndef SORUN_RUNTIME_BLOB_LOADER_H_
#define SORUN_RUNTIME_BLOB_LOADER_H_

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "format/binary_reader.h"
#include "runtime/module.h"

namespace sorun {

using BlobLoaderFn = std::function<StatusOr<Module>(BinaryReader& reader)>;

// Registers `fn` as "runtime.module.loadbinary_<type_key>" (replacing an earlier registration).
Status RegisterBlobLoader(const std::string& type_key, BlobLoaderFn fn);
// Runs the registered loader for `type_key` on `reader`. NotFound (listing the registered type
// keys) when there is none.
StatusOr<Module> RunBlobLoader(const std::string& type_key, BinaryReader& reader);
// Type keys with a registered loader, sorted.
std::vector<std::string> RegisteredBlobLoaderKeys();

}  // namespace sorun

#endif  // SORUN_RUNTIME_BLOB_LOADER_H_
