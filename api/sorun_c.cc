// The C API (api/sorun_c.h) over the public C++ API (api/sorun.h), and nothing else: every entry
// point checks its pointers, calls the C++ API, turns the Status into a sorun_status_t and the
// thread's last-error text, and catches every exception so none crosses the C boundary.
#include "api/sorun_c.h"

#include <cstddef>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "api/sorun.h"
#include "base/call_guarded.h"
#include "runtime/tensor.h"

// The handles: the C++ objects themselves. An executor holds its model so a caller may free the model
// handle first (declared first, the model is destroyed after the executor).
struct sorun_model {
  sorun::Model model;
};

struct sorun_executor {
  sorun::Model model;
  sorun::Executor executor;
  // sorun_executor_output_info's answers about the last run (filled on first ask, cleared by each run):
  // the pointers it hands out stay valid until the next run, as sorun_c.h promises.
  mutable std::vector<sorun::TensorInfo> run_outputs;
};

namespace sorun {
namespace {

#define SORUN_C_SAME_CODE(c_name, cc_name) \
  static_assert(static_cast<int>(c_name) == static_cast<int>(StatusCode::cc_name), #c_name " != " #cc_name)
SORUN_C_SAME_CODE(SORUN_OK, kOk);
SORUN_C_SAME_CODE(SORUN_INVALID_ARGUMENT, kInvalidArgument);
SORUN_C_SAME_CODE(SORUN_NOT_FOUND, kNotFound);
SORUN_C_SAME_CODE(SORUN_ALREADY_EXISTS, kAlreadyExists);
SORUN_C_SAME_CODE(SORUN_OUT_OF_RANGE, kOutOfRange);
SORUN_C_SAME_CODE(SORUN_FAILED_PRECONDITION, kFailedPrecondition);
SORUN_C_SAME_CODE(SORUN_DATA_LOSS, kDataLoss);
SORUN_C_SAME_CODE(SORUN_UNAVAILABLE, kUnavailable);
SORUN_C_SAME_CODE(SORUN_UNIMPLEMENTED, kUnimplemented);
SORUN_C_SAME_CODE(SORUN_RESOURCE_EXHAUSTED, kResourceExhausted);
SORUN_C_SAME_CODE(SORUN_INTERNAL, kInternal);
SORUN_C_SAME_CODE(SORUN_ABORTED, kAborted);
SORUN_C_SAME_CODE(SORUN_PERMISSION_DENIED, kPermissionDenied);
#undef SORUN_C_SAME_CODE
constexpr int kLastStatusCode = static_cast<int>(StatusCode::kPermissionDenied);

// The 1.0 layouts: a struct_size below these is a caller error. Later minors append fields and keep
// these minimums, so a caller built against 1.0 keeps working.
constexpr size_t kRuntimeOptionsV1Size = offsetof(sorun_runtime_options_t, decrypt);
constexpr size_t kExecutorOptionsV1Size = sizeof(sorun_executor_options_t);
constexpr size_t kTensorInfoV1Size = sizeof(sorun_tensor_info_t);
static_assert(kRuntimeOptionsV1Size == 16 && kExecutorOptionsV1Size == 64 && kTensorInfoV1Size == 40,
              "a 1.0 struct layout changed: the C ABI only appends fields");

thread_local std::string last_error;

sorun_status_t Fail(const Status& status) {
  last_error = status.ToString();
  return static_cast<sorun_status_t>(status.code());
}

sorun_status_t Report(const Status& status) { return status.ok() ? SORUN_OK : Fail(status); }

// Runs `body` (returning a Status) through CallGuarded (base/call_guarded.h: an exception escaping it
// becomes ResourceExhausted or Internal naming `function`) and reports the result. Setting last_error
// may itself throw bad_alloc; then the code still comes back and the text is left as it was.
template <typename Body>
sorun_status_t Guarded(const char* function, Body&& body) noexcept {
#if __cpp_exceptions
  StatusCode code = StatusCode::kResourceExhausted;  // if not even the error Status can be allocated
  try {
    Status status = CallGuarded(function, std::forward<Body>(body));
    code = status.code();
    return Report(status);
  } catch (...) {
    return static_cast<sorun_status_t>(code);
  }
#else  // nothing can escape `body` (base/call_guarded.h)
  return Report(CallGuarded(function, std::forward<Body>(body)));
#endif
}

Status NullArgument(const char* function, const char* argument) {
  return InvalidArgument(std::string(function) + ": " + argument + " is NULL");
}

#define SORUN_C_CHECK_NOT_NULL(argument) \
  if ((argument) == nullptr) return NullArgument(function, #argument)

// A caller's DLTensor: not NULL, and its fields sane (the one rule, runtime/tensor.h; checked here
// too so that the message names the C function and argument).
Status CheckTensorArgument(const char* function, const char* argument, const DLTensor* tensor) {
  if (tensor == nullptr) return NullArgument(function, argument);
  return CheckDLTensorFields(*tensor, std::string(function) + ": " + argument);
}

// Reads a caller's options struct of the layout `T` (zero-initialised: zero is every field's
// default). Sizes below the 1.0 layout are refused; bytes past the layout this library knows must be
// zero (fields of a newer header this library cannot honour).
template <typename T>
StatusOr<T> ReadOptions(const char* function, const char* argument, const T* in, size_t min_size) {
  T out;
  std::memset(&out, 0, sizeof(out));
  if (in == nullptr) return out;
  const size_t size = in->struct_size;
  if (size < min_size) {
    return InvalidArgument(std::string(function) + ": " + argument + "->struct_size is " + std::to_string(size) +
                           ", below the " + std::to_string(min_size) + " bytes of sorun_c.h 1.0 (set it to sizeof)");
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(in);
  for (size_t i = sizeof(T); i < size; ++i) {
    if (bytes[i] != 0) {
      return InvalidArgument(std::string(function) + ": " + argument + " sets a field at byte " + std::to_string(i) +
                             " that this library (C API " + std::to_string(SORUN_API_VERSION_MAJOR) + "." +
                             std::to_string(SORUN_API_VERSION_MINOR) + ", " + std::to_string(sizeof(T)) +
                             "-byte struct) does not know");
    }
  }
  std::memcpy(&out, in, sizeof(T) < size ? sizeof(T) : size);
  return out;
}

// A C hook's answer as a Status: its code (an unknown one is Internal) and its message.
Status HookStatus(sorun_status_t rc, char* message, const char* hook) {
  if (rc == SORUN_OK) return Status::Ok();
  message[1023] = '\0';
  std::string text = message[0] != '\0' ? message : std::string(hook) + " refused the model";
  const int code = static_cast<int>(rc);
  if (code <= 0 || code > kLastStatusCode) {
    return Internal(std::string(hook) + " returned status " + std::to_string(code) + ": " + text);
  }
  return Status(static_cast<StatusCode>(code), std::move(text));
}

StatusOr<RuntimeOptions> ToRuntimeOptions(const char* function, const sorun_runtime_options_t* in) {
  SORUN_ASSIGN_OR_RETURN(sorun_runtime_options_t c, ReadOptions(function, "options", in, kRuntimeOptionsV1Size));
  RuntimeOptions options;
  if (c.verify_checksum > 0) options.verify_checksum = true;
  if (c.verify_checksum < 0) options.verify_checksum = false;
  switch (c.prefetch) {
    case SORUN_PREFETCH_DEFAULT: break;
    case SORUN_PREFETCH_NONE: options.prefetch = RuntimeOptions::Prefetch::kNone; break;
    case SORUN_PREFETCH_WILL_NEED: options.prefetch = RuntimeOptions::Prefetch::kWillNeed; break;
    case SORUN_PREFETCH_POPULATE: options.prefetch = RuntimeOptions::Prefetch::kPopulate; break;
    default:
      return InvalidArgument(std::string(function) + ": options->prefetch is " + std::to_string(c.prefetch) +
                             "; expected a sorun_prefetch_t (0 default, 1 none, 2 will_need, 3 populate)");
  }
  if (c.decrypt != nullptr) {
    options.decrypt = [fn = c.decrypt, user = c.decrypt_user_data](std::string_view stored, PlaintextSink& sink,
                                                                   const std::string& name) {
      char message[1024] = {0};
      const sorun_status_t rc = fn(user, stored.data(), stored.size(), name.c_str(),
                                   reinterpret_cast<sorun_plaintext_sink_t*>(&sink), message, sizeof message);
      return HookStatus(rc, message, "the decrypt hook");
    };
  }
  if (c.verify_library != nullptr) {
    options.verify_library = [fn = c.verify_library, user = c.verify_user_data](std::string_view library,
                                                                                const std::string& name) {
      char message[1024] = {0};
      const sorun_status_t rc = fn(user, library.data(), library.size(), name.c_str(), message, sizeof message);
      return HookStatus(rc, message, "the verify_library hook");
    };
  }
  return options;
}

StatusOr<ExecutorOptions> ToExecutorOptions(const char* function, const sorun_executor_options_t* in) {
  SORUN_ASSIGN_OR_RETURN(sorun_executor_options_t c, ReadOptions(function, "options", in, kExecutorOptionsV1Size));
  if (c.num_devices > 0 && c.devices == nullptr) return NullArgument(function, "options->devices");
  if (c.num_cpu_affinity > 0 && c.cpu_affinity == nullptr) return NullArgument(function, "options->cpu_affinity");
  if (c.num_threads < 0) {
    return InvalidArgument(std::string(function) + ": options->num_threads is " + std::to_string(c.num_threads) +
                           "; expected 0 (the process-wide pool) or a positive count");
  }
  ExecutorOptions options;
  options.devices.assign(c.devices, c.devices + c.num_devices);
  options.num_threads = c.num_threads;
  options.cpu_affinity.assign(c.cpu_affinity, c.cpu_affinity + c.num_cpu_affinity);
  if (c.spin_us_set != 0) options.spin_us = c.spin_us;
  options.warmup = c.warmup != 0;
  return options;
}

Status CheckIndex(const char* function, int32_t index, size_t count, const char* what) {
  if (index < 0 || static_cast<size_t>(index) >= count) {
    return OutOfRange(std::string(function) + ": " + what + " index " + std::to_string(index) + " is outside [0, " +
                      std::to_string(count) + ")");
  }
  return Status::Ok();
}

Status FillTensorInfo(const char* function, const std::vector<TensorInfo>& infos, int32_t index, const char* what,
                      sorun_tensor_info_t* info) {
  SORUN_C_CHECK_NOT_NULL(info);
  if (info->struct_size < kTensorInfoV1Size) {
    return InvalidArgument(std::string(function) + ": info->struct_size is " + std::to_string(info->struct_size) +
                           ", below the " + std::to_string(kTensorInfoV1Size) +
                           " bytes of sorun_c.h 1.0 (set it to sizeof)");
  }
  SORUN_RETURN_IF_ERROR(CheckIndex(function, index, infos.size(), what));
  const TensorInfo& source = infos[static_cast<size_t>(index)];
  sorun_tensor_info_t c;
  std::memset(&c, 0, sizeof(c));
  c.struct_size = info->struct_size;
  c.name = source.name.c_str();
  c.shape = source.shape.data();
  c.ndim = static_cast<int32_t>(source.shape.size());
  c.dtype = source.dtype;
  c.is_param = source.is_param ? 1 : 0;
  // A larger struct (a newer header) keeps its unknown tail as the caller left it.
  std::memcpy(info, &c, sizeof(c));
  return Status::Ok();
}

Status LoadInto(StatusOr<Model> loaded, sorun_model_t** out) {
  if (!loaded.ok()) return std::move(loaded).status();
  *out = new sorun_model{std::move(*loaded)};
  return Status::Ok();
}

}  // namespace
}  // namespace sorun

using sorun::Guarded;
using sorun::NullArgument;
using sorun::Status;

extern "C" {

uint32_t sorun_api_version(void) { return SORUN_API_VERSION; }

const char* sorun_version(void) { return sorun::Version(); }

const char* sorun_status_name(sorun_status_t status) {
  const int code = static_cast<int>(status);
  if (code < 0 || code > sorun::kLastStatusCode) return "unknown";
  return sorun::StatusCodeName(static_cast<sorun::StatusCode>(code));
}

const char* sorun_last_error(void) { return sorun::last_error.c_str(); }

sorun_status_t sorun_initialize(void) {
  return Guarded(__func__, [] { return sorun::Initialize(); });
}

sorun_status_t sorun_parse_device(const char* text, DLDevice* device) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(text);
    SORUN_C_CHECK_NOT_NULL(device);
    SORUN_ASSIGN_OR_RETURN(*device, sorun::ParseDevice(text));
    return Status::Ok();
  });
}

sorun_status_t sorun_model_load_from_memory(const void* data, size_t size, const char* name,
                                            const sorun_runtime_options_t* options, sorun_model_t** model) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    if (data == nullptr && size > 0) return sorun::InvalidArgument(std::string(function) + ": data is NULL");
    SORUN_C_CHECK_NOT_NULL(model);
    SORUN_ASSIGN_OR_RETURN(sorun::RuntimeOptions runtime_options, sorun::ToRuntimeOptions(function, options));
    const std::string_view bytes(static_cast<const char*>(data), size);
    return sorun::LoadInto(sorun::Model::LoadFromMemory(bytes, runtime_options, name != nullptr ? name : "<memory>"),
                           model);
  });
}

sorun_status_t sorun_plaintext_sink_write(sorun_plaintext_sink_t* sink, const void* data, size_t size) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(sink);
    if (data == nullptr && size > 0) return sorun::InvalidArgument(std::string(function) + ": data is NULL");
    return reinterpret_cast<sorun::PlaintextSink*>(sink)->Write(data, size);
  });
}

sorun_status_t sorun_plaintext_sink_reserve(sorun_plaintext_sink_t* sink, size_t size) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(sink);
    return reinterpret_cast<sorun::PlaintextSink*>(sink)->Reserve(size);
  });
}

sorun_status_t sorun_model_load(const char* path, const sorun_runtime_options_t* options, sorun_model_t** model) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(path);
    SORUN_C_CHECK_NOT_NULL(model);
    SORUN_ASSIGN_OR_RETURN(sorun::RuntimeOptions runtime_options, sorun::ToRuntimeOptions(function, options));
    return sorun::LoadInto(sorun::Model::Load(path, runtime_options), model);
  });
}

sorun_status_t sorun_model_load_files(const char* graph_json_path, const char* library_path, const char* params_path,
                                      const sorun_runtime_options_t* options, sorun_model_t** model) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(graph_json_path);
    SORUN_C_CHECK_NOT_NULL(library_path);
    SORUN_C_CHECK_NOT_NULL(model);
    SORUN_ASSIGN_OR_RETURN(sorun::RuntimeOptions runtime_options, sorun::ToRuntimeOptions(function, options));
    return sorun::LoadInto(sorun::Model::LoadFromFiles(graph_json_path, library_path,
                                                       params_path != nullptr ? params_path : "", runtime_options),
                           model);
  });
}

void sorun_model_free(sorun_model_t* model) { delete model; }

sorun_status_t sorun_model_num_inputs(const sorun_model_t* model, int32_t* count) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(model);
    SORUN_C_CHECK_NOT_NULL(count);
    *count = static_cast<int32_t>(model->model.inputs().size());
    return Status::Ok();
  });
}

sorun_status_t sorun_model_num_outputs(const sorun_model_t* model, int32_t* count) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(model);
    SORUN_C_CHECK_NOT_NULL(count);
    *count = static_cast<int32_t>(model->model.outputs().size());
    return Status::Ok();
  });
}

sorun_status_t sorun_model_input_info(const sorun_model_t* model, int32_t index, sorun_tensor_info_t* info) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(model);
    return sorun::FillTensorInfo(function, model->model.inputs(), index, "input", info);
  });
}

sorun_status_t sorun_model_output_info(const sorun_model_t* model, int32_t index, sorun_tensor_info_t* info) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(model);
    return sorun::FillTensorInfo(function, model->model.outputs(), index, "output", info);
  });
}

sorun_status_t sorun_executor_new(const sorun_model_t* model, const sorun_executor_options_t* options,
                                  sorun_executor_t** executor) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(model);
    SORUN_C_CHECK_NOT_NULL(executor);
    SORUN_ASSIGN_OR_RETURN(sorun::ExecutorOptions executor_options, sorun::ToExecutorOptions(function, options));
    SORUN_ASSIGN_OR_RETURN(sorun::Executor created, model->model.NewExecutor(executor_options));
    *executor = new sorun_executor{model->model, std::move(created)};
    return Status::Ok();
  });
}

void sorun_executor_free(sorun_executor_t* executor) { delete executor; }

sorun_status_t sorun_executor_input_index(const sorun_executor_t* executor, const char* name, int32_t* index) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(executor);
    SORUN_C_CHECK_NOT_NULL(name);
    SORUN_C_CHECK_NOT_NULL(index);
    SORUN_ASSIGN_OR_RETURN(*index, executor->executor.InputIndex(name));
    return Status::Ok();
  });
}

sorun_status_t sorun_executor_output_index(const sorun_executor_t* executor, const char* name, int32_t* index) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(executor);
    SORUN_C_CHECK_NOT_NULL(name);
    SORUN_C_CHECK_NOT_NULL(index);
    SORUN_ASSIGN_OR_RETURN(*index, executor->executor.OutputIndex(name));
    return Status::Ok();
  });
}

sorun_status_t sorun_executor_num_outputs(const sorun_executor_t* executor, int32_t* count) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(executor);
    SORUN_C_CHECK_NOT_NULL(count);
    *count = static_cast<int32_t>(executor->executor.num_outputs());
    return Status::Ok();
  });
}

sorun_status_t sorun_executor_output_info(const sorun_executor_t* executor, int32_t index, sorun_tensor_info_t* info) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(executor);
    const sorun::Executor& ex = executor->executor;
    SORUN_RETURN_IF_ERROR(sorun::CheckIndex(function, index, static_cast<size_t>(ex.num_outputs()), "output"));
    // Before the first run (or while another thread holds the executor), the model's description.
    auto output = ex.GetOutput(index);
    if (!output.ok()) return sorun::FillTensorInfo(function, ex.outputs(), index, "output", info);
    std::vector<sorun::TensorInfo>& run = executor->run_outputs;
    if (run.size() != static_cast<size_t>(ex.num_outputs())) run.assign(static_cast<size_t>(ex.num_outputs()), {});
    sorun::TensorInfo& entry = run[static_cast<size_t>(index)];
    if (entry.name.empty()) {
      const auto& described = ex.outputs();
      entry.name = static_cast<size_t>(index) < described.size() ? described[static_cast<size_t>(index)].name
                                                                 : "output_" + std::to_string(index);
      entry.shape = output->shape();
      entry.dtype = output->dtype();
    }
    return sorun::FillTensorInfo(function, run, index, "output", info);
  });
}

sorun_status_t sorun_executor_num_threads(const sorun_executor_t* executor, int32_t* count) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(executor);
    SORUN_C_CHECK_NOT_NULL(count);
    *count = static_cast<int32_t>(executor->executor.num_threads());
    return Status::Ok();
  });
}

sorun_status_t sorun_executor_set_input(sorun_executor_t* executor, int32_t index, const DLTensor* value) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(executor);
    SORUN_RETURN_IF_ERROR(sorun::CheckTensorArgument(function, "value", value));
    return executor->executor.SetInput(static_cast<int>(index), *value);
  });
}

sorun_status_t sorun_executor_set_input_by_name(sorun_executor_t* executor, const char* name, const DLTensor* value) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(executor);
    SORUN_C_CHECK_NOT_NULL(name);
    SORUN_RETURN_IF_ERROR(sorun::CheckTensorArgument(function, "value", value));
    return executor->executor.SetInput(std::string_view(name), *value);
  });
}

sorun_status_t sorun_executor_set_input_zero_copy(sorun_executor_t* executor, int32_t index, const DLTensor* value) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(executor);
    SORUN_RETURN_IF_ERROR(sorun::CheckTensorArgument(function, "value", value));
    return executor->executor.SetInputZeroCopy(static_cast<int>(index), *value);
  });
}

sorun_status_t sorun_executor_set_output_zero_copy(sorun_executor_t* executor, int32_t index, const DLTensor* value) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(executor);
    SORUN_RETURN_IF_ERROR(sorun::CheckTensorArgument(function, "value", value));
    return executor->executor.SetOutputZeroCopy(static_cast<int>(index), *value);
  });
}

sorun_status_t sorun_executor_run(sorun_executor_t* executor) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(executor);
    executor->run_outputs.clear();
    return executor->executor.Run();
  });
}

sorun_status_t sorun_executor_synchronize(sorun_executor_t* executor) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(executor);
    return executor->executor.Synchronize();
  });
}

sorun_status_t sorun_executor_get_stream(sorun_executor_t* executor, DLDevice device, void** stream) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(executor);
    SORUN_C_CHECK_NOT_NULL(stream);
    SORUN_ASSIGN_OR_RETURN(*stream, executor->executor.GetStream(device));
    return Status::Ok();
  });
}

sorun_status_t sorun_executor_set_stream(sorun_executor_t* executor, DLDevice device, void* stream) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(executor);
    return executor->executor.SetStream(device, stream);
  });
}

sorun_status_t sorun_executor_get_output(sorun_executor_t* executor, int32_t index, DLManagedTensor** out) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(executor);
    SORUN_C_CHECK_NOT_NULL(out);
    SORUN_ASSIGN_OR_RETURN(sorun::NDArray output, executor->executor.GetOutput(static_cast<int>(index)));
    DLManagedTensor* managed = output.ToDLPack();
    if (managed == nullptr) return sorun::Internal(std::string(function) + ": output has no DLPack view");
    *out = managed;
    return Status::Ok();
  });
}

sorun_status_t sorun_executor_copy_output(sorun_executor_t* executor, int32_t index, const DLTensor* dst) {
  return Guarded(__func__, [&, function = __func__]() -> Status {
    SORUN_C_CHECK_NOT_NULL(executor);
    SORUN_RETURN_IF_ERROR(sorun::CheckTensorArgument(function, "dst", dst));
    return executor->executor.CopyOutputTo(static_cast<int>(index), *dst);
  });
}

}  // extern "C"
