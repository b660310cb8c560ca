// The dispatch of builtin calls (VmExecutor::CallBuiltin through the handler column of
// relax/vm_builtin_table.h) and BuiltinCall, the handlers' view of the executor.
#include "relax/vm_builtin_call.h"

#include <iterator>

#include "relax/vm_executor.h"

namespace sorun {
namespace relax {
namespace {

// The handler column, in table order: kHandlers[i] runs the row whose enumerator is Builtin(i).
constexpr BuiltinHandler kHandlers[] = {
#define SORUN_RELAX_BUILTIN_HANDLER(id, name, handler) &builtins::handler,
    SORUN_RELAX_BUILTIN_TABLE(SORUN_RELAX_BUILTIN_HANDLER)
#undef SORUN_RELAX_BUILTIN_HANDLER
};
static_assert(std::size(kHandlers) == kNumBuiltins);

}  // namespace

BuiltinHandler BuiltinHandlerFor(Builtin id) { return kHandlers[static_cast<size_t>(id)]; }

StatusOr<VmValue> VmExecutor::CallBuiltin(const VmCallee& callee, const VmInstruction& in, int64_t pc, Frame& frame) {
  builtin_args_.clear();
  for (const VmArg& arg : in.args) builtin_args_.push_back(ArgValue(arg, frame));
  BuiltinCall call(*this, pc, builtin_args_);
  return BuiltinHandlerFor(callee.builtin)(call);
}

Status BuiltinCall::Count(size_t lo, size_t hi) const {
  const size_t n = args_.size();
  if (n < lo || n > hi) {
    return InvalidArgument("takes " + (lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi)) +
                           " arguments, got " + std::to_string(n));
  }
  return Status::Ok();
}

Status BuiltinCall::Want(size_t i, VmValueKind kind) const {
  if (args_[i].kind() != kind) {
    return InvalidArgument("argument " + std::to_string(i) + " is a " + DescribeVmValue(args_[i]) + ", expected a " +
                           VmValueKindName(kind));
  }
  return Status::Ok();
}

DTypeCodes BuiltinCall::dtype_codes() const { return vm_.program_->dtype_codes(); }

const std::vector<DLDevice>& BuiltinCall::devices() const { return vm_.devices_; }

VmValue* BuiltinCall::CacheSlot() {
  VmExecutor::SiteCache& site = vm_.Site(pc_);
  const size_t k = site.used++;
  if (k >= kMaxCachedOccurrences) return nullptr;
  if (k >= site.made.size()) site.made.resize(k + 1);
  return &site.made[k];
}

void BuiltinCall::TrackStorage(uint64_t released, uint64_t allocated) {
  vm_.storage_bytes_ -= released;
  vm_.storage_bytes_ += allocated;
}

namespace builtins {

std::string ErrorContext(const VmValue& v) { return v.kind() == VmValueKind::kString ? v.str() + ": " : std::string(); }

}  // namespace builtins
}  // namespace relax
}  // namespace sorun
