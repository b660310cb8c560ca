// The executor kinds of the VM-only runtimes (//api:sorun_vm, //api:sorun_vm_cpu): TVM's Relax VM
// exports. A graph-executor export or a three-file deployment is refused, naming the missing kind.
#include "base/status.h"
#include "relax/relax_module.h"

namespace sorun {

Status RegisterLinkedExecutors() { return relax::RegisterRelaxVm(); }

}  // namespace sorun
