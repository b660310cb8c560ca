// TVM's CPU sorting helpers, which compiled kernels call by name through the global registry: TVM's
// topi lowers sort, argsort and topk (and the argsort of its NMS) on CPU targets to extern calls of
// "tvm.contrib.sort.sort", "...argsort", "...topk" and "...argsort_nms" (keys::kContrib*), served by
// libtvm_runtime in TVM. sorun serves them with TVM's arguments, dtypes and orderings (ties keep
// index order; topk's bounded heap), so outputs equal TVM's bit for bit.
//
// Every tensor is checked before it is read or written (on the host, compact, shapes agreeing with the
// axis, k and the data, dtypes those TVM accepts): a mismatch is an error naming the function and
// the argument, never an access out of bounds. Stateless; thread-safe.
#ifndef SORUN_RUNTIME_CONTRIB_SORT_H_
#define SORUN_RUNTIME_CONTRIB_SORT_H_

#include "base/status.h"
#include "runtime/function_registry.h"

namespace sorun {

// Registers the four functions into `registry`. AlreadyExists if one of the names is taken.
Status RegisterSortFunctions(FunctionRegistry& registry);

// Registers them into FunctionRegistry::Global() unless "tvm.contrib.sort.sort" is there already. The
// executors' registrations call it (RegisterGraphExecutor, relax::RegisterRelaxVm): kernels of either
// kind may call the helpers. Idempotent; thread-safe.
Status RegisterGlobalSortFunctions();

}  // namespace sorun

#endif  // SORUN_RUNTIME_CONTRIB_SORT_H_
