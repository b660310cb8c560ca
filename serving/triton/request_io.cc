#include "serving/triton/request_io.h"

#include <algorithm>
#include <string>

#include "serving/triton/data_types.h"
#include "serving/triton/triton_errors.h"

namespace sorun::triton {
namespace {

std::string ModelPrefix(const ModelState& model) { return "model '" + model.name() + "': "; }

// Reads the input named by `binding` into segments; `rows` gets its batch rows (1 without batching).
Status ReadInput(const ModelState& model, const TensorBinding& binding, TRITONBACKEND_Request* request, int64_t* rows,
                 std::vector<BufferSegment>* segments) {
  TRITONBACKEND_Input* input = nullptr;
  TRITONSERVER_Error* missing = TRITONBACKEND_RequestInput(request, binding.name.c_str(), &input);
  if (missing != nullptr) {
    TRITONSERVER_ErrorDelete(missing);
    return InvalidArgument(ModelPrefix(model) + "input '" + binding.name + "' is missing; the model takes " +
                           model.DescribeInputs());
  }
  TRITONSERVER_DataType datatype = TRITONSERVER_TYPE_INVALID;
  const int64_t* shape = nullptr;
  uint32_t dims_count = 0;
  uint64_t byte_size = 0;
  uint32_t buffer_count = 0;
  SORUN_RETURN_IF_ERROR(FromTritonError(
      TRITONBACKEND_InputProperties(input, nullptr, &datatype, &shape, &dims_count, &byte_size, &buffer_count),
      "TRITONBACKEND_InputProperties"));
  const std::vector<int64_t> request_shape(shape, shape + dims_count);
  if (datatype != binding.triton_dtype) {
    return InvalidArgument(ModelPrefix(model) + "input '" + binding.name + "' has datatype " +
                           TritonDataTypeName(datatype) + "; the model takes " +
                           TritonDataTypeName(binding.triton_dtype) + " (inputs: " + model.DescribeInputs() + ")");
  }
  // After the batch dimension: the model's shape (Triton hands the backend an input with a `reshape`
  // in its reshaped shape) or the config's dims (a 0-d model tensor served as dims [1]). Batching
  // implies a model shape of at least one dimension (ModelState refuses 0-d tensors there).
  const size_t skip = model.batching() ? 1 : 0;
  const auto item_is = [&](auto first, auto last) {
    return request_shape.size() == skip + static_cast<size_t>(last - first) &&
           std::equal(first, last, request_shape.begin() + static_cast<std::ptrdiff_t>(skip));
  };
  bool shape_ok = item_is(binding.model_shape.begin() + static_cast<std::ptrdiff_t>(skip), binding.model_shape.end()) ||
                  item_is(binding.client_dims.begin(), binding.client_dims.end());
  if (shape_ok && model.batching()) {
    shape_ok = request_shape[0] >= 1 && request_shape[0] <= model.config().max_batch_size;
  }
  if (!shape_ok) {
    return InvalidArgument(
        ModelPrefix(model) + "input '" + binding.name + "' has shape " + ShapeString(request_shape) +
        "; the model takes " + model.DescribeInputs() +
        (model.batching() ? " with a batch of 1 to " + std::to_string(model.config().max_batch_size) : std::string()));
  }
  *rows = model.batching() ? request_shape[0] : 1;
  const uint64_t expected_bytes =
      model.batching() ? static_cast<uint64_t>(*rows) * binding.row_bytes : binding.model_bytes;
  if (byte_size != expected_bytes) {
    return InvalidArgument(ModelPrefix(model) + "input '" + binding.name + "' carries " + std::to_string(byte_size) +
                           " bytes; its shape " + ShapeString(request_shape) + " needs " +
                           std::to_string(expected_bytes));
  }
  uint64_t total = 0;
  for (uint32_t b = 0; b < buffer_count; ++b) {
    BufferSegment segment;
    const void* data = nullptr;
    SORUN_RETURN_IF_ERROR(FromTritonError(
        TRITONBACKEND_InputBuffer(input, b, &data, &segment.size, &segment.memory_type, &segment.memory_type_id),
        "TRITONBACKEND_InputBuffer"));
    segment.data = static_cast<char*>(const_cast<void*>(data));
    total += segment.size;
    if (segment.size > 0) segments->push_back(segment);
  }
  if (total != expected_bytes) {
    return InvalidArgument(ModelPrefix(model) + "input '" + binding.name + "' buffers hold " + std::to_string(total) +
                           " bytes; expected " + std::to_string(expected_bytes));
  }
  return Status::Ok();
}

Status ReadInputs(const ModelState& model, PendingRequest& pending) {
  uint32_t count = 0;
  SORUN_RETURN_IF_ERROR(
      FromTritonError(TRITONBACKEND_RequestInputCount(pending.request, &count), "TRITONBACKEND_RequestInputCount"));
  for (uint32_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    SORUN_RETURN_IF_ERROR(
        FromTritonError(TRITONBACKEND_RequestInputName(pending.request, i, &name), "TRITONBACKEND_RequestInputName"));
    if (model.FindInput(name) == nullptr) {
      return InvalidArgument(ModelPrefix(model) + "unknown input '" + std::string(name) + "'; the model takes " +
                             model.DescribeInputs());
    }
  }
  pending.inputs.resize(model.inputs().size());
  int64_t rows = -1;
  for (size_t i = 0; i < model.inputs().size(); ++i) {
    const TensorBinding& binding = model.inputs()[i];
    int64_t input_rows = 1;
    SORUN_RETURN_IF_ERROR(ReadInput(model, binding, pending.request, &input_rows, &pending.inputs[i]));
    if (rows != -1 && input_rows != rows) {
      return InvalidArgument(ModelPrefix(model) + "input '" + binding.name + "' has a batch of " +
                             std::to_string(input_rows) + " but input '" + model.inputs()[0].name + "' has " +
                             std::to_string(rows));
    }
    rows = input_rows;
  }
  pending.rows = rows == -1 ? 1 : rows;
  return Status::Ok();
}

Status CreateOutputs(const ModelState& model, PendingRequest& pending) {
  uint32_t count = 0;
  SORUN_RETURN_IF_ERROR(
      FromTritonError(TRITONBACKEND_RequestOutputCount(pending.request, &count), "TRITONBACKEND_RequestOutputCount"));
  for (uint32_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    SORUN_RETURN_IF_ERROR(
        FromTritonError(TRITONBACKEND_RequestOutputName(pending.request, i, &name), "TRITONBACKEND_RequestOutputName"));
    const TensorBinding* binding = model.FindOutput(name);
    if (binding == nullptr) {
      return InvalidArgument(ModelPrefix(model) + "unknown output '" + std::string(name) + "'");
    }
    OutputTarget target;
    target.binding = static_cast<size_t>(binding - model.outputs().data());
    // Clients receive the config's dims (with the batch dimension first).
    std::vector<int64_t> shape = binding->client_dims;
    uint64_t bytes = binding->model_bytes;
    if (model.batching()) {
      shape.insert(shape.begin(), pending.rows);
      bytes = static_cast<uint64_t>(pending.rows) * binding->row_bytes;
    }
    TRITONBACKEND_Output* output = nullptr;
    SORUN_RETURN_IF_ERROR(
        FromTritonError(TRITONBACKEND_ResponseOutput(pending.response, &output, name, binding->triton_dtype,
                                                     shape.data(), static_cast<uint32_t>(shape.size())),
                        "TRITONBACKEND_ResponseOutput"));
    void* buffer = nullptr;
    target.buffer.memory_type = TRITONSERVER_MEMORY_CPU;
    target.buffer.memory_type_id = 0;
    SORUN_RETURN_IF_ERROR(FromTritonError(
        TRITONBACKEND_OutputBuffer(output, &buffer, bytes, &target.buffer.memory_type, &target.buffer.memory_type_id),
        "TRITONBACKEND_OutputBuffer"));
    target.buffer.data = static_cast<char*>(buffer);
    target.buffer.size = bytes;
    pending.outputs.push_back(target);
  }
  return Status::Ok();
}

}  // namespace

DLDevice DeviceOf(const BufferSegment& segment) {
  if (segment.memory_type == TRITONSERVER_MEMORY_GPU) {
    return DLDevice{kDLCUDA, static_cast<int32_t>(segment.memory_type_id)};
  }
  return DLDevice{kDLCPU, 0};
}

bool IsHostMemory(const BufferSegment& segment) { return segment.memory_type != TRITONSERVER_MEMORY_GPU; }

void PrepareRequest(const ModelState& model, PendingRequest& pending) {
  pending.status =
      FromTritonError(TRITONBACKEND_ResponseNew(&pending.response, pending.request), "TRITONBACKEND_ResponseNew");
  if (!pending.status.ok()) {
    pending.response = nullptr;
    LogError(ModelPrefix(model) + "cannot create a response: " + pending.status.message());
    return;
  }
  bool cancelled = false;
  if (FromTritonError(TRITONBACKEND_RequestIsCancelled(pending.request, &cancelled), "TRITONBACKEND_RequestIsCancelled")
          .ok() &&
      cancelled) {
    pending.cancelled = true;
    return;
  }
  pending.status = ReadInputs(model, pending);
  if (pending.status.ok()) pending.status = CreateOutputs(model, pending);
}

}  // namespace sorun::triton
