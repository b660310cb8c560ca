#include "serving/triton/model_state.h"

#include <rapidjson/document.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <utility>

#include "serving/triton/config_auto_complete.h"
#include "serving/triton/data_types.h"
#include "serving/triton/output_probe.h"
#include "serving/triton/signature_verifier.h"
#include "serving/triton/triton_errors.h"

namespace sorun::triton {
namespace {

constexpr uint32_t kConfigVersion = 1;  // the model configuration JSON layout TRITONBACKEND_ModelConfig returns
constexpr int64_t kTritonDefaultMaxBatchSize = 4;

// The model configuration as JSON text.
StatusOr<std::string> ReadConfigJson(TRITONBACKEND_Model* model) {
  TRITONSERVER_Message* message = nullptr;
  SORUN_RETURN_IF_ERROR(
      FromTritonError(TRITONBACKEND_ModelConfig(model, kConfigVersion, &message), "TRITONBACKEND_ModelConfig"));
  const char* base = nullptr;
  size_t size = 0;
  Status status = FromTritonError(TRITONSERVER_MessageSerializeToJson(message, &base, &size),
                                  "TRITONSERVER_MessageSerializeToJson");
  std::string json = status.ok() ? std::string(base, size) : std::string();
  FromTritonError(TRITONSERVER_MessageDelete(message), "TRITONSERVER_MessageDelete").IgnoreError();
  if (!status.ok()) return status;
  return json;
}

Status WriteConfigJson(TRITONBACKEND_Model* model, const std::string& json) {
  TRITONSERVER_Message* message = nullptr;
  SORUN_RETURN_IF_ERROR(FromTritonError(TRITONSERVER_MessageNewFromSerializedJson(&message, json.data(), json.size()),
                                        "TRITONSERVER_MessageNewFromSerializedJson"));
  Status status =
      FromTritonError(TRITONBACKEND_ModelSetConfig(model, kConfigVersion, message), "TRITONBACKEND_ModelSetConfig");
  FromTritonError(TRITONSERVER_MessageDelete(message), "TRITONSERVER_MessageDelete").IgnoreError();
  return status;
}

// The server's --backend-config=default-max-batch-size (Triton passes it to every backend in the
// backend configuration's "cmdline" object), else Triton's default of 4.
int64_t DefaultMaxBatchSize(TRITONBACKEND_Model* model) {
  TRITONBACKEND_Backend* backend = nullptr;
  TRITONSERVER_Message* message = nullptr;
  if (!FromTritonError(TRITONBACKEND_ModelBackend(model, &backend), "TRITONBACKEND_ModelBackend").ok() ||
      !FromTritonError(TRITONBACKEND_BackendConfig(backend, &message), "TRITONBACKEND_BackendConfig").ok()) {
    return kTritonDefaultMaxBatchSize;
  }
  int64_t value = kTritonDefaultMaxBatchSize;
  const char* base = nullptr;
  size_t size = 0;
  if (FromTritonError(TRITONSERVER_MessageSerializeToJson(message, &base, &size), "TRITONSERVER_MessageSerializeToJson")
          .ok()) {
    rapidjson::Document doc;
    doc.Parse(base, size);
    if (!doc.HasParseError() && doc.IsObject()) {
      auto cmdline = doc.FindMember("cmdline");
      if (cmdline != doc.MemberEnd() && cmdline->value.IsObject()) {
        auto entry = cmdline->value.FindMember("default-max-batch-size");
        if (entry != cmdline->value.MemberEnd() && entry->value.IsString()) {
          value = std::atoll(entry->value.GetString());
        }
      }
    }
  }
  return value;  // the backend configuration message belongs to Triton: not deleted
}

// The library's bytes read into memory and loaded from there (Model::LoadFromMemory: a sealed memfd);
// messages name `path`, as a file load's would.
StatusOr<sorun::Model> LoadModelFromMemory(const std::string& path, const RuntimeOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open the model file: " + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Internal(path + ": reading the model file failed");
  return sorun::Model::LoadFromMemory(bytes, options, path);
}

bool FileExists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

// The shape a client sends or receives: the config's dims, after -1 for the batch when batching.
std::string ClientShape(const TensorBinding& binding, bool batching) {
  std::vector<int64_t> shape = binding.client_dims;
  if (batching) shape.insert(shape.begin(), -1);
  return ShapeString(shape);
}

// Bytes of `shape` (its first dimension left out when `skip_first`) in `dtype`.
uint64_t ShapeBytes(const std::vector<int64_t>& shape, DLDataType dtype, bool skip_first) {
  uint64_t elements = 1;
  for (size_t d = skip_first ? 1 : 0; d < shape.size(); ++d) elements *= static_cast<uint64_t>(shape[d]);
  return elements * ElementBytes(dtype);
}

// Checks one configured tensor against the model's and fills its binding. A dynamic (-1) model
// dimension is served only as Triton's batch dimension (the first, with max_batch_size > 0): the
// backend creates a response's outputs before it runs, so every other dimension must be fixed.
StatusOr<TensorBinding> Bind(const ConfigTensor& configured, const TensorInfo& info, const char* kind, bool batching) {
  const std::string what = std::string(kind) + " '" + configured.name + "'";
  SORUN_ASSIGN_OR_RETURN(TRITONSERVER_DataType model_type, ToTritonDataType(info.dtype));
  if (configured.data_type != model_type) {
    return InvalidArgument(what + " is " + ConfigDataTypeName(configured.data_type) + " in config.pbtxt but " +
                           ConfigDataTypeName(model_type) + " (" + DataTypeName(info.dtype) + ") in the model");
  }
  std::vector<int64_t> expected = info.shape;
  if (batching) {
    if (expected.empty()) {
      return InvalidArgument(what + " is a scalar in the model, so it has no batch dimension: use max_batch_size: 0");
    }
    expected.erase(expected.begin());
  }
  for (int64_t dim : expected) {
    if (dim >= 0) continue;
    const bool first_only = !batching && info.shape[0] < 0 &&
                            std::all_of(info.shape.begin() + 1, info.shape.end(), [](int64_t d) { return d >= 0; });
    if (first_only) {
      const std::vector<int64_t> rest(info.shape.begin() + 1, info.shape.end());
      return InvalidArgument(what + " has a dynamic first dimension (model shape " + ShapeString(info.shape) +
                             "): serve it as Triton's batch dimension, with max_batch_size > 0 and dims " +
                             (rest.empty() ? "[1]" : ShapeString(rest)));
    }
    return InvalidArgument(what + " has a dimension known only at run time (model shape " + ShapeString(info.shape) +
                           "); the sorun backend serves fixed shapes and a dynamic batch dimension (the first)");
  }
  if (configured.has_reshape) {
    // Clients send and receive `dims`; the model sees `reshape` (Triton allows an empty one, a 0-d
    // tensor per row, only under batching). Both fixed, the same number of elements.
    const auto elements = [](const std::vector<int64_t>& v) {  // -1: a dynamic dimension, or it overflows
      int64_t n = 1;
      for (int64_t d : v) {
        if (d < 0 || __builtin_mul_overflow(n, d, &n)) return int64_t{-1};
      }
      return n;
    };
    if (configured.reshape != expected) {
      return InvalidArgument(what + " has reshape " + ShapeString(configured.reshape) +
                             " in config.pbtxt but the model's " +
                             (batching ? "shape after the batch dimension is " : "shape is ") + ShapeString(expected) +
                             " (model shape " + ShapeString(info.shape) + "; reshape is the shape the model sees)");
    }
    const int64_t client_elements = elements(configured.dims);
    if (client_elements < 0 || client_elements != elements(expected)) {
      return InvalidArgument(what + " has dims " + ShapeString(configured.dims) + " and reshape " +
                             ShapeString(configured.reshape) +
                             " in config.pbtxt: dims must be fixed and hold as many elements as the reshape");
    }
  } else if (configured.dims != expected && !(expected.empty() && configured.dims == std::vector<int64_t>{1})) {
    // Triton has no 0-d tensors (dims may not be empty): a 0-d model tensor is served as dims [1].
    return InvalidArgument(what + " has dims " + ShapeString(configured.dims) + " in config.pbtxt but the model's " +
                           (batching ? "shape after the batch dimension is " : "shape is ") + ShapeString(expected) +
                           (expected.empty() ? " (0-d: write dims [1])" : "") + " (model shape " +
                           ShapeString(info.shape) + ", max_batch_size " + (batching ? "> 0" : "0") +
                           "; the sorun backend serves fixed shapes, no -1)");
  }
  TensorBinding binding;
  binding.name = configured.name;
  binding.dtype = info.dtype;
  binding.triton_dtype = model_type;
  binding.model_shape = info.shape;
  binding.client_dims = configured.dims;
  binding.model_bytes = info.shape.empty() || info.shape[0] >= 0 ? ShapeBytes(info.shape, info.dtype, false) : 0;
  return binding;
}

const TensorInfo* FindInfo(const std::vector<TensorInfo>& infos, const std::string& name) {
  for (const TensorInfo& info : infos) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

std::string Names(const std::vector<TensorInfo>& infos) {
  std::string out;
  for (const TensorInfo& info : infos) {
    if (info.is_param) continue;
    out += (out.empty() ? "" : ", ") + info.name;
  }
  return out.empty() ? "(none)" : out;
}

}  // namespace

StatusOr<std::unique_ptr<ModelState>> ModelState::Create(TRITONBACKEND_Model* triton_model) {
  const char* name = nullptr;
  uint64_t version = 0;
  SORUN_RETURN_IF_ERROR(FromTritonError(TRITONBACKEND_ModelName(triton_model, &name), "TRITONBACKEND_ModelName"));
  SORUN_RETURN_IF_ERROR(
      FromTritonError(TRITONBACKEND_ModelVersion(triton_model, &version), "TRITONBACKEND_ModelVersion"));
  const std::string context = "model '" + std::string(name) + "' version " + std::to_string(version);

  TRITONBACKEND_ArtifactType artifact = TRITONBACKEND_ARTIFACT_FILESYSTEM;
  const char* location = nullptr;
  SORUN_RETURN_IF_ERROR_CTX(FromTritonError(TRITONBACKEND_ModelRepository(triton_model, &artifact, &location),
                                            "TRITONBACKEND_ModelRepository"),
                            context);
  if (artifact != TRITONBACKEND_ARTIFACT_FILESYSTEM || location == nullptr) {
    return Unimplemented(context +
                         ": the model repository is not a local file system (cloud repositories are "
                         "not supported by the sorun backend)");
  }

  SORUN_ASSIGN_OR_RETURN(std::string json, ReadConfigJson(triton_model));
  StatusOr<ModelConfig> config = ParseModelConfig(json);
  if (!config.ok()) return Status(config.status()).Annotate(context);
  StatusOr<SorunParameters> parameters = ParseSorunParameters(config->parameters, config->default_model_filename);
  if (!parameters.ok()) return Status(parameters.status()).Annotate(context);

  const std::string version_dir = std::string(location) + "/" + std::to_string(version) + "/";
  if (parameters->model_file_from_default && !FileExists(version_dir + parameters->model_file) &&
      FileExists(version_dir + kDefaultModelFile)) {
    // A repository entry "<name>.sorun/1/model.so" without config.pbtxt: Triton picks the backend from
    // the directory name and sets default_model_filename to "model.sorun"; serve the model.so there.
    parameters->model_file = kDefaultModelFile;
  }
  const std::string path = version_dir + parameters->model_file;
  RuntimeOptions load_options;
  load_options.verify_checksum = parameters->verify_checksum;
  if (!parameters->public_key_path.empty()) {
    StatusOr<LibraryVerifier> verifier = MakeSignatureVerifier(parameters->public_key_path);
    if (!verifier.ok()) return Status(verifier.status()).Annotate(context);
    load_options.verify_library = std::move(*verifier);
  }
  // A load request's "file:" override: Triton writes the files to a temporary directory of its own
  // (not named after the model, as every repository's model directory is) and removes it after the
  // load; nothing may stay mapped from there, so such a model is loaded from memory by default.
  std::string directory = location;
  while (directory.size() > 1 && directory.back() == '/') directory.pop_back();
  const bool override_files = std::filesystem::path(directory).filename().string() != name;
  const bool from_memory = parameters->load_from == SorunParameters::LoadFrom::kMemory ||
                           (parameters->load_from == SorunParameters::LoadFrom::kAuto && override_files);
  StatusOr<sorun::Model> model =
      from_memory ? LoadModelFromMemory(path, load_options) : sorun::Model::Load(path, load_options);
  if (!model.ok()) return Status(model.status()).Annotate(context);  // sorun's message names the file
  LogInfo(context + ": " + (from_memory ? "loaded from memory (" : "loaded from the file (") + path +
          (override_files ? ", files from the load request" : "") +
          (parameters->public_key_path.empty() ? "" : ", signature checked with " + parameters->public_key_path) + ")");

  std::unique_ptr<ModelState> state(new ModelState(name, version, std::move(*model)));
  state->model_path_ = path;
  state->parameters_ = std::move(*parameters);
  state->model_outputs_ = state->model_.outputs();
  if (state->model_outputs_.empty()) {
    // A Relax export whose bytecode does not tell main's outputs before a run.
    StatusOr<std::vector<TensorInfo>> probed = ProbeOutputs(state->model_);
    if (!probed.ok()) return Status(probed.status()).Annotate(context + " (" + path + ")");
    state->model_outputs_ = std::move(*probed);
    state->outputs_probed_ = true;
    LogInfo(context + ": " + std::to_string(state->model_outputs_.size()) + " output(s) learnt by running " + path +
            " on zero inputs (the bytecode does not tell them)");
  }

  bool auto_complete = false;
  SORUN_RETURN_IF_ERROR_CTX(FromTritonError(TRITONBACKEND_ModelAutoCompleteConfig(triton_model, &auto_complete),
                                            "TRITONBACKEND_ModelAutoCompleteConfig"),
                            context);
  if (auto_complete) {
    StatusOr<std::optional<std::string>> completed =
        AutoCompleteConfig(json, state->model_.inputs(), state->model_outputs_, DefaultMaxBatchSize(triton_model));
    if (!completed.ok()) return Status(completed.status()).Annotate(context + ": auto-completing the configuration");
    if (completed->has_value()) {
      SORUN_RETURN_IF_ERROR_CTX(WriteConfigJson(triton_model, **completed), context);
      // Triton may add fields of its own: read the configuration back, as its API asks.
      SORUN_ASSIGN_OR_RETURN(json, ReadConfigJson(triton_model));
      config = ParseModelConfig(json);
      if (!config.ok()) return Status(config.status()).Annotate(context);
      LogInfo(context + ": configuration auto-completed from " + path);
    }
  }
  state->config_ = std::move(*config);
  SORUN_RETURN_IF_ERROR_CTX(state->BindTensors(), context + " (" + path + ")");
  return state;
}

Status ModelState::BindTensors() {
  const std::vector<TensorInfo>& model_inputs = model_.inputs();
  const std::vector<TensorInfo>& model_outputs = model_outputs_;
  if (config_.sequence_batching) {
    return Unimplemented(
        "sequence_batching is configured; the sorun backend serves stateless models "
        "(use dynamic_batching or none)");
  }
  if (config_.outputs.empty()) {
    return InvalidArgument("config.pbtxt lists no output (the model's outputs: " + Names(model_outputs) +
                           "); list them, or start Triton with --strict-model-config=false to fill them in");
  }
  for (const ConfigTensor& configured : config_.inputs) {
    const TensorInfo* info = FindInfo(model_inputs, configured.name);
    if (info == nullptr || info->is_param) {
      return InvalidArgument("config.pbtxt input '" + configured.name + "' is not an input of the model" +
                             (info != nullptr ? " (it is a weight bound from the model)" : "") +
                             "; the model's inputs: " + Names(model_inputs));
    }
    SORUN_ASSIGN_OR_RETURN(TensorBinding binding, Bind(configured, *info, "input", batching()));
    inputs_.push_back(std::move(binding));
  }
  for (const TensorInfo& info : model_inputs) {
    if (!info.is_param && FindInput(info.name) == nullptr) {
      return InvalidArgument("the model's input '" + info.name + "' is missing from config.pbtxt (" +
                             DataTypeName(info.dtype) + " " + ShapeString(info.shape) + ")");
    }
  }
  for (const ConfigTensor& configured : config_.outputs) {
    const TensorInfo* info = FindInfo(model_outputs, configured.name);
    if (info == nullptr) {
      return InvalidArgument("config.pbtxt output '" + configured.name + "' is not an output of the model; " +
                             "the model's outputs: " + Names(model_outputs));
    }
    SORUN_ASSIGN_OR_RETURN(TensorBinding binding, Bind(configured, *info, "output", batching()));
    outputs_.push_back(std::move(binding));
  }

  if (batching()) {
    // Every configured tensor shares the model's batch (its first dimension): the executor runs that
    // many rows at a time; a dynamic batch (-1 everywhere) runs Triton's whole batch at once.
    model_batch_ = -1;
    int dynamic = 0;
    const TensorBinding* fixed = nullptr;
    for (const auto* list : {&inputs_, &outputs_}) {
      for (const TensorBinding& binding : *list) {
        const int64_t rows = binding.model_shape[0];
        if (rows == -1) {
          ++dynamic;
          continue;
        }
        if (rows < 1 || (model_batch_ != -1 && rows != model_batch_)) {
          return InvalidArgument("max_batch_size is " + std::to_string(config_.max_batch_size) +
                                 " but the model's tensors do not share a first (batch) dimension ('" + binding.name +
                                 "' has shape " + ShapeString(binding.model_shape) +
                                 "); use max_batch_size: 0 to serve the model's fixed shapes");
        }
        model_batch_ = rows;
        fixed = &binding;
      }
    }
    if (dynamic > 0 && fixed != nullptr) {
      return InvalidArgument("max_batch_size is " + std::to_string(config_.max_batch_size) + " but '" + fixed->name +
                             "' has a fixed first dimension (shape " + ShapeString(fixed->model_shape) +
                             ") while other tensors' is dynamic (-1); the batch dimension must be one or the other");
    }
    batch_is_dynamic_ = dynamic > 0;
    if (batch_is_dynamic_) model_batch_ = config_.max_batch_size;
    for (auto* list : {&inputs_, &outputs_}) {
      for (TensorBinding& binding : *list) binding.row_bytes = ShapeBytes(binding.model_shape, binding.dtype, true);
    }
  } else {
    model_batch_ = 1;
    for (auto* list : {&inputs_, &outputs_}) {
      for (TensorBinding& binding : *list) binding.row_bytes = binding.model_bytes;
    }
  }
  LogInfo("model '" + name_ + "' version " + std::to_string(version_) + ": loaded " + model_path_ + " (inputs " +
          DescribeInputs() + "; max_batch_size " + std::to_string(config_.max_batch_size) +
          (batch_is_dynamic_ ? ", dynamic batch: Triton's batch in one run"
           : batching()      ? ", " + std::to_string(model_batch_) + " row(s) per run"
                             : "") +
          ")");
  return Status::Ok();
}

const TensorBinding* ModelState::FindInput(const std::string& name) const {
  for (const TensorBinding& binding : inputs_) {
    if (binding.name == name) return &binding;
  }
  return nullptr;
}

const TensorBinding* ModelState::FindOutput(const std::string& name) const {
  for (const TensorBinding& binding : outputs_) {
    if (binding.name == name) return &binding;
  }
  return nullptr;
}

std::string ModelState::DescribeInputs() const {
  std::string out;
  for (const TensorBinding& binding : inputs_) {
    if (!out.empty()) out += ", ";
    out +=
        binding.name + " (" + TritonDataTypeName(binding.triton_dtype) + " " + ClientShape(binding, batching()) + ")";
  }
  return out.empty() ? "none" : out;
}

}  // namespace sorun::triton
