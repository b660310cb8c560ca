// //api:sorun_cpu links the CPU backend only (it is part of the runtime core).
#include "base/status.h"

namespace sorun {

Status RegisterLinkedBackends() { return Status::Ok(); }

}  // namespace sorun
