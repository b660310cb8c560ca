// RegisterGraphExecutor: makes the graph executor reachable by TVM's names — the blob loaders for
// "GraphExecutorFactory" (and the legacy "GraphRuntimeFactory") and the global functions
// tvm.graph_executor.create / tvm.graph_executor_factory.create. Idempotent and thread-safe.
#ifndef SORUN_GRAPH_EXECUTOR_REGISTER_H_
#define SORUN_GRAPH_EXECUTOR_REGISTER_H_

#include "base/status.h"

namespace sorun {

Status RegisterGraphExecutor();

}  // namespace sorun

#endif  // SORUN_GRAPH_EXECUTOR_REGISTER_H_
