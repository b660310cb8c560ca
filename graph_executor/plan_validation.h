// ValidateExecutionPlan: the checks that make a graph's inputs, names and storage plan safe to
// execute as given, decided from the graph alone (nothing is allocated or run). GraphSpec::Parse calls
// it, so every path that reads a graph (factory load, the three-file path, `sorun inspect`/`verify`,
// `pack`) refuses the same plans. Pure function of its argument; thread-safe.
#ifndef SORUN_GRAPH_EXECUTOR_PLAN_VALIDATION_H_
#define SORUN_GRAPH_EXECUTOR_PLAN_VALIDATION_H_

#include "base/status.h"
#include "graph_executor/graph_json.h"

namespace sorun {

// `graph` must already be structurally valid (entry references, node_row_ptr and per-entry attrs
// consistent, as GraphSpec::Parse checks before calling this). Refuses, as DataLoss naming the nodes,
// entries and storage ids involved:
//  - an input ('null' op) that arg_nodes does not list (nothing could ever set it);
//  - an input named like an alignment pad (__sorun_pad_*, which readers skip);
//  - two inputs with the same name, two outputs that a name lookup cannot tell apart;
//  - a __nop that is not one input aliased to one output of the same storage id and byte size;
//  - a storage id shared by values that are alive at the same time. A value (an entry together with
//    the __nop outputs aliasing it) is alive from the node that writes it to its last reader; inputs
//    and parameters for the whole run (they keep their values from one run to the next) and graph
//    outputs from their writer to the end of the run. TVM's planner reuses a storage id only between
//    values whose lives do not overlap, so its plans pass.
Status ValidateExecutionPlan(const GraphSpec& graph);

}  // namespace sorun

#endif  // SORUN_GRAPH_EXECUTOR_PLAN_VALIDATION_H_
