#include "executor/executor_kind.h"

namespace sorun {

const char* ExecutorKindName(ExecutorKind kind) {
  switch (kind) {
    case ExecutorKind::kGraph: return "graph executor";
    case ExecutorKind::kRelaxVm: return "Relax VM";
  }
  return "unknown executor";
}

}  // namespace sorun
