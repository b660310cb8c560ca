// The executor kinds of //api:sorun and //api:sorun_cpu: the graph executor and the Relax VM. The
// first registered is named first in errors (a root neither kind runs).
#include "base/status.h"
#include "graph_executor/register.h"
#include "relax/relax_module.h"

namespace sorun {

Status RegisterLinkedExecutors() {
  SORUN_RETURN_IF_ERROR(RegisterGraphExecutor());
  return relax::RegisterRelaxVm();
}

}  // namespace sorun
