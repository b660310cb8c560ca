// The module serializer (TVM's ModuleSerializer, v0.8+): turns a module tree into the blob payload
// of docs/spec/FORMAT.md section 2.
//
// Indexing is a depth-first walk from the root (root = 0) in two phases so that every DSO-exportable
// module (kModuleDsoExportable) joins ONE "_lib" group whose index lies between its parents and its
// children; the CSR import tree lists each group's imports sorted and de-duplicated. As in TVM, the
// tree is omitted only when the root itself is DSO-exportable and imports nothing, and an export is
// refused when merging the DSO modules would create a cycle. Modules write their payload with
// SaveToBinary. Pure; thread-compatible.
#ifndef SORUN_PACKER_MODULE_SERIALIZER_H_
#define SORUN_PACKER_MODULE_SERIALIZER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/module.h"

namespace sorun {

struct SerializedModuleTree {
  std::string payload;                 // the blob payload (without the 8-byte length prefix)
  std::vector<std::string> type_keys;  // per index ("_lib" for the DSO group)
  bool has_import_tree = false;
  std::vector<uint64_t> row_ptr;
  std::vector<uint64_t> child_indices;
  // The DSO-exportable modules (host code to link), in discovery order.
  std::vector<Module> dso_modules;
};

// Serializes the tree under `root`. The payload is written after an 8-byte length prefix placed at a
// 64-byte aligned address, so SaveToBinary hooks that align data (factory params) see
// BinaryWriter::origin() == 8.
StatusOr<SerializedModuleTree> SerializeModuleTree(const Module& root);

}  // namespace sorun

#endif  // SORUN_PACKER_MODULE_SERIALIZER_H_
