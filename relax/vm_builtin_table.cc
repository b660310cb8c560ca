#include "relax/vm_builtin_table.h"

namespace sorun {
namespace relax {

// The enumerators number the rows: a lookup by id is an index.
static_assert([] {
  for (size_t i = 0; i < kNumBuiltins; ++i) {
    if (static_cast<size_t>(kBuiltinRows[i].id) != i) return false;
  }
  return true;
}());

const BuiltinRow* FindBuiltin(std::string_view name) {
  for (const BuiltinRow& row : kBuiltinRows) {
    if (name == row.name) return &row;
  }
  return nullptr;
}

const char* BuiltinName(Builtin id) { return kBuiltinRows[static_cast<size_t>(id)].name; }

}  // namespace relax
}  // namespace sorun
