// Helpers of the Python extension (_sorun): sorun::Status -> Python exceptions, Python objects ->
// DLTensors (buffer protocol or __dlpack__), and sorun::NDArray -> the Python `sorun.Tensor` type
// (__dlpack__, __dlpack_device__, buffer protocol). Built on the public C++ API (api/sorun.h) only.
// Used only by python/*.cc; every function here is called with the GIL held unless its comment says
// otherwise.
#ifndef SORUN_PYTHON_PY_SUPPORT_H_
#define SORUN_PYTHON_PY_SUPPORT_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/sorun.h"

namespace sorun::python {

namespace py = pybind11;

// Thrown by Check()/Value() and translated into the sorun.Error subclass of the status code, with the
// C++ message unchanged (RegisterErrors).
struct StatusException {
  Status status;
};

// Creates sorun.Error and one subclass per StatusCode on `m` and installs the translator.
void RegisterErrors(py::module_& m);

inline void Check(Status status) {
  if (!status.ok()) throw StatusException{std::move(status)};
}
template <typename T>
T Value(StatusOr<T> value) {
  if (!value.ok()) throw StatusException{std::move(value).status()};
  return std::move(value).value();
}

// A Python value seen as a DLTensor: a buffer-protocol object (NumPy arrays, memoryview, array.array)
// or any object with __dlpack__ (PyTorch, JAX, CuPy, sorun.Tensor). `owner` keeps the memory alive
// (it holds the Py_buffer or the NDArray that owns the DLManagedTensor) and may be released from any
// thread. Strides are passed on as they are: the C++ executor decides (and says) what it accepts.
struct PyTensorArg {
  DLTensor dl{};
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // empty: compact
  std::shared_ptr<void> owner;
};
// `what` names the argument in errors ("set_input 'data'").
PyTensorArg ToTensorArg(const py::handle& value, const std::string& what);

// Registers sorun.Tensor (a sorun::NDArray: an output, or a copy of one) on `m`.
void RegisterTensor(py::module_& m);
// The sorun.Tensor for `array`.
py::object WrapTensor(NDArray array);

}  // namespace sorun::python

#endif  // SORUN_PYTHON_PY_SUPPORT_H_
