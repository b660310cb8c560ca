#include "python/py_support.h"

#include <cstring>

namespace sorun::python {

namespace {

// ---------------------------------------------------------------- errors

struct ErrorType {
  StatusCode code;
  const char* name;
  const char* doc;
};
constexpr ErrorType kErrorTypes[] = {
    {StatusCode::kInvalidArgument, "InvalidArgumentError", "A caller passed a bad value (shape, dtype, name, device)."},
    {StatusCode::kNotFound, "NotFoundError", "A named thing (input, output, file, function) does not exist."},
    {StatusCode::kAlreadyExists, "AlreadyExistsError", "Something was registered twice."},
    {StatusCode::kOutOfRange, "OutOfRangeError", "An index past the end."},
    {StatusCode::kFailedPrecondition, "FailedPreconditionError",
     "The object is not in a state that allows the call (e.g. an executor used by two threads at once)."},
    {StatusCode::kDataLoss, "DataLossError", "A malformed or truncated artifact (blob, graph JSON, params, ELF)."},
    {StatusCode::kUnavailable, "UnavailableError", "A device or driver is absent (no OpenCL platform, no CUDA)."},
    {StatusCode::kUnimplemented, "UnimplementedError", "A valid request this build does not support."},
    {StatusCode::kResourceExhausted, "ResourceExhaustedError", "An allocation failed."},
    {StatusCode::kInternal, "InternalError", "A broken invariant inside sorun (please report)."},
    {StatusCode::kAborted, "AbortedError", "A kernel reported failure; the message is the kernel's."},
    {StatusCode::kPermissionDenied, "PermissionDeniedError",
     "A check the caller configured (a signature) refused the model before any of its code ran."},
};

// Indexed by StatusCode; set once at import (module init holds the GIL), never freed.
PyObject* g_error_types[static_cast<int>(StatusCode::kPermissionDenied) + 1] = {};

// ---------------------------------------------------------------- inputs

// Releases a Py_buffer (taking the GIL: the last reference may drop on a thread without it).
// Py_IsFinalizing is public from CPython 3.13 on (the private _Py_IsFinalizing is gone there).
inline bool InterpreterFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

class BufferOwner {
 public:
  Py_buffer view{};
  ~BufferOwner() {
    if (view.obj == nullptr || InterpreterFinalizing()) return;
    PyGILState_STATE gil = PyGILState_Ensure();
    PyBuffer_Release(&view);
    PyGILState_Release(gil);
  }
};

// The DLPack dtype of a struct-module format character with `itemsize` bytes (native byte order).
StatusOr<DLDataType> BufferDType(const char* format, Py_ssize_t itemsize, const std::string& what) {
  std::string f = format != nullptr ? format : "B";
  if (!f.empty() && (f[0] == '@' || f[0] == '=' || f[0] == '<')) f.erase(0, 1);
  const uint8_t bits = static_cast<uint8_t>(itemsize * 8);
  if (f.size() == 1 && itemsize >= 1 && itemsize <= 8) {
    if (std::strchr("bhilq", f[0]) != nullptr) return DLDataType{kDLInt, bits, 1};
    if (std::strchr("BHILQ", f[0]) != nullptr) return DLDataType{kDLUInt, bits, 1};
    if (std::strchr("efd", f[0]) != nullptr) return DLDataType{kDLFloat, bits, 1};
    if (f[0] == '?' && itemsize == 1) return DLDataType{kDLUInt, 1, 1};  // bool
  }
  return InvalidArgument(what + ": buffer format '" + (format != nullptr ? format : "") + "' (itemsize " +
                         std::to_string(itemsize) +
                         ") has no tensor dtype (expected a native-endian bool, int, uint or float array)");
}

PyTensorArg FromBuffer(const py::handle& value, const std::string& what) {
  auto owner = std::make_shared<BufferOwner>();
  if (PyObject_GetBuffer(value.ptr(), &owner->view, PyBUF_RECORDS_RO) != 0) throw py::error_already_set();
  const Py_buffer& v = owner->view;
  PyTensorArg arg;
  DLDataType dtype = Value(BufferDType(v.format, v.itemsize, what));
  arg.shape.assign(v.shape, v.shape + v.ndim);
  for (int i = 0; i < v.ndim; ++i) {
    if (v.strides[i] % v.itemsize != 0) {
      Check(InvalidArgument(what + ": stride " + std::to_string(v.strides[i]) + " bytes of dimension " +
                            std::to_string(i) + " is not a multiple of the item size " + std::to_string(v.itemsize)));
    }
    arg.strides.push_back(v.strides[i] / v.itemsize);
  }
  arg.dl.data = v.buf;
  arg.dl.device = DLDevice{kDLCPU, 0};
  arg.dl.ndim = v.ndim;
  arg.dl.dtype = dtype;
  arg.dl.shape = arg.shape.data();
  arg.dl.strides = arg.strides.data();
  arg.dl.byte_offset = 0;
  arg.owner = std::move(owner);
  return arg;
}

PyTensorArg FromDLPackObject(const py::handle& value, const std::string& what) {
  py::object capsule = value.attr("__dlpack__")();
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (managed == nullptr) throw py::error_already_set();  // wrong name or a consumed capsule
  // The capsule is consumed: from here on the NDArray owns the DLManagedTensor (its deleter runs when
  // the last reference goes, also on an error below).
  if (PyCapsule_SetName(capsule.ptr(), "used_dltensor") != 0) throw py::error_already_set();
  auto array = std::make_shared<NDArray>(Value(NDArray::FromDLPack(managed)));
  PyTensorArg arg;
  arg.dl = array->dl();
  arg.shape = array->shape();
  arg.dl.shape = arg.shape.data();
  if (array->dl().strides != nullptr) {
    arg.strides.assign(array->dl().strides, array->dl().strides + array->dl().ndim);
    arg.dl.strides = arg.strides.data();
  }
  arg.owner = std::move(array);
  return arg;
}

// ---------------------------------------------------------------- sorun.Tensor

void DeleteCapsule(PyObject* capsule) {
  // Only a capsule nobody consumed still owns its DLManagedTensor (DLPack's rule).
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

py::tuple ShapeTuple(const std::vector<int64_t>& shape) {
  py::tuple t(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) t[i] = py::int_(shape[i]);
  return t;
}

// The struct-module format of `t` for the buffer protocol (native byte order).
std::string BufferFormat(DLDataType t) {
  if (t.lanes != 1) return {};
  if (t.code == kDLUInt && t.bits == 1) return "?";
  const char* ints[] = {"b", "h", "i", "q"};
  const char* uints[] = {"B", "H", "I", "Q"};
  int k = t.bits == 8 ? 0 : t.bits == 16 ? 1 : t.bits == 32 ? 2 : t.bits == 64 ? 3 : -1;
  if (k < 0) return {};
  if (t.code == kDLInt) return ints[k];
  if (t.code == kDLUInt) return uints[k];
  if (t.code == kDLFloat && k > 0) return k == 1 ? "e" : k == 2 ? "f" : "d";
  return {};
}

}  // namespace

void RegisterErrors(py::module_& m) {
  PyObject* base = PyErr_NewExceptionWithDoc(
      "sorun.Error",
      "Base of every sorun error. `code` is the C++ StatusCode name ('invalid_argument'); str(e) is the C++ "
      "message unchanged.",
      PyExc_RuntimeError, nullptr);
  if (base == nullptr) throw py::error_already_set();
  m.add_object("Error", py::handle(base));
  for (const ErrorType& e : kErrorTypes) {
    std::string qualified = std::string("sorun.") + e.name;
    PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), e.doc, base, nullptr);
    if (type == nullptr) throw py::error_already_set();
    py::handle(type).attr("code") = py::str(StatusCodeName(e.code));
    g_error_types[static_cast<int>(e.code)] = type;
    m.add_object(e.name, py::handle(type));
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusException& e) {
      PyObject* type = g_error_types[static_cast<int>(e.status.code())];
      PyErr_SetString(type != nullptr ? type : g_error_types[static_cast<int>(StatusCode::kInternal)],
                      e.status.message().c_str());
    }
  });
}

PyTensorArg ToTensorArg(const py::handle& value, const std::string& what) {
  if (PyObject_CheckBuffer(value.ptr())) return FromBuffer(value, what);
  if (py::hasattr(value, "__dlpack__")) return FromDLPackObject(value, what);
  Check(InvalidArgument(what + ": expected an array (buffer protocol or __dlpack__), got " +
                        std::string(py::str(py::type::of(value).attr("__name__")))));
  return {};
}

void RegisterTensor(py::module_& m) {
  py::class_<NDArray>(m, "Tensor", py::buffer_protocol(), R"doc(
An n-d array owned by sorun (an output, or a copy of one). Zero-copy to NumPy / PyTorch through
__dlpack__ (np.from_dlpack, torch.from_dlpack) and, on the CPU, the buffer protocol (np.asarray).
It keeps its memory alive by itself: it stays valid after its executor and model are gone.
)doc")
      .def_property_readonly("shape", [](const NDArray& t) { return ShapeTuple(t.shape()); })
      .def_property_readonly("dtype", [](const NDArray& t) { return DataTypeName(t.dtype()); })
      .def_property_readonly("device", [](const NDArray& t) { return DeviceName(t.device()); })
      .def_property_readonly("ndim", [](const NDArray& t) { return t.dl().ndim; })
      .def(
          "__dlpack__",
          [](const NDArray& t, const py::object& stream) {
            (void)stream;  // sorun's device work is complete when a call returns: nothing to order.
            DLManagedTensor* managed = t.ToDLPack();
            if (managed == nullptr) Check(FailedPrecondition("__dlpack__ of an undefined sorun.Tensor"));
            PyObject* capsule = PyCapsule_New(managed, "dltensor", &DeleteCapsule);
            if (capsule == nullptr) throw py::error_already_set();
            return py::reinterpret_steal<py::object>(capsule);
          },
          py::arg("stream") = py::none(), "A DLPack capsule sharing this tensor's memory (zero copy).")
      .def(
          "__dlpack_device__",
          [](const NDArray& t) {
            return py::make_tuple(static_cast<int>(t.device().device_type), t.device().device_id);
          },
          "(DLDeviceType, device id).")
      .def(
          "copy",
          [](const NDArray& t) {
            py::gil_scoped_release release;
            return Value(t.CopyTo(DLDevice{kDLCPU, 0}));
          },
          "A new CPU tensor holding a copy (also how a device tensor reaches the host).")
      .def("__repr__", [](const NDArray& t) { return "sorun.Tensor(" + t.Describe() + ")"; })
      .def_buffer([](const NDArray& t) -> py::buffer_info {
        if (t.device().device_type != kDLCPU) {
          Check(
              InvalidArgument("sorun.Tensor on " + DeviceName(t.device()) + " has no host buffer: call .copy() first"));
        }
        std::string format = BufferFormat(t.dtype());
        if (format.empty()) {
          Check(InvalidArgument("sorun.Tensor of dtype " + DataTypeName(t.dtype()) + " has no buffer format"));
        }
        const ssize_t item = static_cast<ssize_t>((t.dtype().bits * t.dtype().lanes + 7) / 8);
        std::vector<ssize_t> shape(t.shape().begin(), t.shape().end());
        std::vector<ssize_t> strides(shape.size());
        ssize_t stride = item;
        for (size_t i = shape.size(); i-- > 0;) {
          strides[i] = t.dl().strides != nullptr ? t.dl().strides[i] * item : stride;
          stride *= shape[i];
        }
        // Outputs and their copies are writable executor or host memory (never the mapped weights).
        return py::buffer_info(t.data(), item, format, static_cast<ssize_t>(shape.size()), shape, strides,
                               /*readonly=*/false);
      });
}

py::object WrapTensor(NDArray array) { return py::cast(std::move(array)); }

}  // namespace sorun::python
