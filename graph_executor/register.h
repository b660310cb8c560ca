// RegisterGraphExecutor: links the graph executor into the program — the executor kind (its hooks in
// executor/executor_registry.h: factory roots and three-file deployments), and TVM's names: the blob
// loaders for "GraphExecutorFactory" (and the legacy "GraphRuntimeFactory") and the global functions
// tvm.graph_executor.create / tvm.graph_executor_factory.create. Called by the front door's
// link-chosen executor list (api/executors_*.cc). Idempotent and thread-safe.
#ifndef SORUN_GRAPH_EXECUTOR_REGISTER_H_
#define SORUN_GRAPH_EXECUTOR_REGISTER_H_

#include "base/status.h"

namespace sorun {

Status RegisterGraphExecutor();

}  // namespace sorun

#endif  // SORUN_GRAPH_EXECUTOR_REGISTER_H_
