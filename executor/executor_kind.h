// ExecutorKind: which executor runs a model — the graph executor (TVM's graph-executor exports,
// graph_executor/) or the Relax VM (TVM's Relax VM exports, relax/). A closed list: a new kind adds a
// line here and registers itself (executor/executor_registry.h). Pure values; thread-safe.
#ifndef SORUN_EXECUTOR_EXECUTOR_KIND_H_
#define SORUN_EXECUTOR_EXECUTOR_KIND_H_

#include <cstdint>

namespace sorun {

enum class ExecutorKind : uint8_t { kGraph, kRelaxVm };

// "graph executor", "Relax VM".
const char* ExecutorKindName(ExecutorKind kind);

}  // namespace sorun

#endif  // SORUN_EXECUTOR_EXECUTOR_KIND_H_
