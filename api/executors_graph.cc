// The executor kinds of the graph-only runtimes (//api:sorun_graph, //api:sorun_graph_cpu): TVM's
// graph-executor exports. A Relax VM export is refused at load, naming the missing kind.
#include "base/status.h"
#include "graph_executor/register.h"

namespace sorun {

Status RegisterLinkedExecutors() { return RegisterGraphExecutor(); }

}  // namespace sorun
