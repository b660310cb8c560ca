// The sorun backend's entry points, looked up by Triton with dlsym in
// <backend-directory>/sorun/libtriton_sorun.so: backend initialization (API version check),
// model and instance life cycle, and execution. Each is a thin shell over model_state.h,
// instance_state.h and request_execution.h that turns a sorun::Status into a TRITONSERVER_Error and
// lets no C++ exception cross into Triton.
#include <memory>
#include <string>
#include <utility>

#include "api/sorun.h"
#include "base/call_guarded.h"
#include "serving/triton/instance_state.h"
#include "serving/triton/model_state.h"
#include "serving/triton/request_execution.h"
#include "serving/triton/triton_backend_api.h"
#include "serving/triton/triton_errors.h"

namespace sorun::triton {
namespace {

// Runs `body` (returning a Status) through CallGuarded (base/call_guarded.h: an exception escaping it
// becomes an Internal or ResourceExhausted Status naming `where`) and hands the result to Triton.
template <typename Body>
TRITONSERVER_Error* Guarded(const char* where, Body&& body) noexcept {
  try {
    return ToTritonError(CallGuarded(where, std::forward<Body>(body)));
  } catch (...) {  // not even the error could be allocated
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, "sorun backend: out of memory");
  }
}

Status CheckApiVersion() {
  uint32_t major = 0;
  uint32_t minor = 0;
  SORUN_RETURN_IF_ERROR(FromTritonError(TRITONBACKEND_ApiVersion(&major, &minor), "TRITONBACKEND_ApiVersion"));
  if (major != SORUN_TRITONBACKEND_API_VERSION_MAJOR || minor < SORUN_TRITONBACKEND_API_VERSION_MINOR) {
    return Unimplemented(
        "the sorun backend needs Triton backend API " + std::to_string(SORUN_TRITONBACKEND_API_VERSION_MAJOR) + "." +
        std::to_string(SORUN_TRITONBACKEND_API_VERSION_MINOR) + " or a later 1.x (Triton 2.39+); this " +
        "server has " + std::to_string(major) + "." + std::to_string(minor));
  }
  LogInfo(std::string("sorun ") + sorun::Version() + ", Triton backend API " + std::to_string(major) + "." +
          std::to_string(minor) + " (built for " + std::to_string(SORUN_TRITONBACKEND_API_VERSION_MAJOR) + "." +
          std::to_string(SORUN_TRITONBACKEND_API_VERSION_MINOR) + ")");
  return Status::Ok();
}

// The state set by the matching Initialize; null when that Initialize failed (Triton still calls
// Finalize then).
template <typename State, typename Handle, typename Getter>
StatusOr<State*> GetState(Handle* handle, Getter getter, const char* call) {
  void* state = nullptr;
  SORUN_RETURN_IF_ERROR(FromTritonError(getter(handle, &state), call));
  return static_cast<State*>(state);
}

template <typename State, typename Handle, typename Getter>
StatusOr<State*> GetRequiredState(Handle* handle, Getter getter, const char* call) {
  SORUN_ASSIGN_OR_RETURN(State * state, GetState<State>(handle, getter, call));
  if (state == nullptr) return Internal(std::string(call) + " returned no state (its initialization failed)");
  return state;
}

}  // namespace
}  // namespace sorun::triton

using sorun::Status;
using sorun::StatusOr;
using sorun::triton::FromTritonError;
using sorun::triton::GetRequiredState;
using sorun::triton::GetState;
using sorun::triton::Guarded;
using sorun::triton::InstanceState;
using sorun::triton::ModelState;

extern "C" {

TRITONSERVER_Error* TRITONBACKEND_Initialize(TRITONBACKEND_Backend* backend) {
  return Guarded("TRITONBACKEND_Initialize", [&]() -> Status {
    SORUN_RETURN_IF_ERROR(sorun::triton::CheckApiVersion());
    // Triton opens backends RTLD_LOCAL: make the TVM C ABI visible to system-lib / `c`-target kernel
    // libraries (the backend's other exports are only the TRITONBACKEND_* entry points).
    SORUN_RETURN_IF_ERROR(sorun::MakeTvmAbiGlobal());
    return sorun::Initialize();
  });
}

TRITONSERVER_Error* TRITONBACKEND_Finalize(TRITONBACKEND_Backend* backend) { return nullptr; }

// Without an instance_group in config.pbtxt, models get CPU instances (a GPU instance needs a model
// built for CUDA and says so with KIND_GPU).
TRITONSERVER_Error* TRITONBACKEND_GetBackendAttribute(TRITONBACKEND_Backend* backend,
                                                      TRITONBACKEND_BackendAttribute* backend_attributes) {
  return TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup(backend_attributes, TRITONSERVER_INSTANCEGROUPKIND_CPU,
                                                                 0, nullptr, 0);
}

TRITONSERVER_Error* TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model* model) {
  return Guarded("TRITONBACKEND_ModelInitialize", [&]() -> Status {
    // A failure is logged by Triton ("failed to load '<model>' ...: <this message>") and shown in
    // /v2/repository/index; the other models keep serving.
    StatusOr<std::unique_ptr<ModelState>> state = ModelState::Create(model);
    if (!state.ok()) return state.status();
    SORUN_RETURN_IF_ERROR(
        FromTritonError(TRITONBACKEND_ModelSetState(model, state->get()), "TRITONBACKEND_ModelSetState"));
    state->release();  // owned by Triton until TRITONBACKEND_ModelFinalize
    return Status::Ok();
  });
}

TRITONSERVER_Error* TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model* model) {
  return Guarded("TRITONBACKEND_ModelFinalize", [&]() -> Status {
    SORUN_ASSIGN_OR_RETURN(ModelState * state,
                           GetState<ModelState>(model, TRITONBACKEND_ModelState, "TRITONBACKEND_ModelState"));
    delete state;
    return Status::Ok();
  });
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceInitialize(TRITONBACKEND_ModelInstance* instance) {
  return Guarded("TRITONBACKEND_ModelInstanceInitialize", [&]() -> Status {
    TRITONBACKEND_Model* model = nullptr;
    SORUN_RETURN_IF_ERROR(
        FromTritonError(TRITONBACKEND_ModelInstanceModel(instance, &model), "TRITONBACKEND_ModelInstanceModel"));
    SORUN_ASSIGN_OR_RETURN(ModelState * model_state,
                           GetRequiredState<ModelState>(model, TRITONBACKEND_ModelState, "TRITONBACKEND_ModelState"));
    StatusOr<std::unique_ptr<InstanceState>> state = InstanceState::Create(model_state, instance);
    if (!state.ok()) return state.status();
    SORUN_RETURN_IF_ERROR(FromTritonError(TRITONBACKEND_ModelInstanceSetState(instance, state->get()),
                                          "TRITONBACKEND_ModelInstanceSetState"));
    state->release();  // owned by Triton until TRITONBACKEND_ModelInstanceFinalize
    return Status::Ok();
  });
}

TRITONSERVER_Error* TRITONBACKEND_ModelInstanceFinalize(TRITONBACKEND_ModelInstance* instance) {
  return Guarded("TRITONBACKEND_ModelInstanceFinalize", [&]() -> Status {
    SORUN_ASSIGN_OR_RETURN(InstanceState * state, GetState<InstanceState>(instance, TRITONBACKEND_ModelInstanceState,
                                                                          "TRITONBACKEND_ModelInstanceState"));
    delete state;
    return Status::Ok();
  });
}

// An error returned here hands the requests back to Triton, so it is returned only before any
// request was touched; from then on ExecuteRequests answers and releases every request itself.
TRITONSERVER_Error* TRITONBACKEND_ModelInstanceExecute(TRITONBACKEND_ModelInstance* instance,
                                                       TRITONBACKEND_Request** requests, const uint32_t request_count) {
  InstanceState* state = nullptr;
  TRITONSERVER_Error* error = Guarded("TRITONBACKEND_ModelInstanceExecute", [&]() -> Status {
    SORUN_ASSIGN_OR_RETURN(state, GetRequiredState<InstanceState>(instance, TRITONBACKEND_ModelInstanceState,
                                                                  "TRITONBACKEND_ModelInstanceState"));
    return Status::Ok();
  });
  if (error != nullptr) return error;
  // An exception here is unreachable in practice (sorun returns Status values); it is logged, and the
  // requests already answered stay answered.
  try {
    sorun::Status escaped = sorun::CallGuarded("TRITONBACKEND_ModelInstanceExecute", [&]() -> sorun::Status {
      sorun::triton::ExecuteRequests(*state, requests, request_count);
      return sorun::Status::Ok();
    });
    if (!escaped.ok()) sorun::triton::LogError(escaped.message());
  } catch (...) {
    // No memory even for the log line.
  }
  return nullptr;
}

}  // extern "C"
