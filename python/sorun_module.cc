// _sorun: the CPython extension behind `import sorun` (python/sorun/__init__.py re-exports it). Binds
// the public C++ API (api/sorun.h): sorun::Model, sorun::Executor (ExecutorOptions from the
// keywords of Model.executor) and sorun::NDArray (sorun.Tensor).
//
// Ownership: a Model holds a sorun::Model (shared, immutable); an Executor owns its sorun::Executor,
// which itself keeps the model's kernel library and shared weights alive, so any drop order is safe,
// and the Python-side owners of zero-copy bindings. Tensors returned to Python own (a reference to)
// their memory.
// Threads: the GIL is released while loading, creating executors, copying inputs/outputs, running and
// profiling, so Python threads with one executor each run in parallel. One executor used by two
// threads at once fails with FailedPreconditionError (the C++ executor's own check).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/sorun.h"
#include "python/pack_binding.h"
#include "python/py_support.h"

namespace sorun::python {
namespace {

// A loaded model: `sorun.load(...)`. Immutable; shared by its executors.
struct PyModel {
  Model model;
};

// An executor: `model.executor(...)`. Holds the model's Python object only to expose it as `.model`,
// and what keeps the memory of zero-copy bindings alive (Python objects: touched with the GIL held).
struct PyExecutor {
  std::map<int, std::shared_ptr<void>> input_owners;   // by input index
  std::map<int, std::shared_ptr<void>> output_owners;  // by output index
  py::object model;
  std::optional<Executor> ex;  // declared last: destroyed first, before the owners of its bindings
};

std::vector<DLDevice> ParseDevices(const py::object& device) {
  std::vector<std::string> names;
  if (py::isinstance<py::str>(device)) {
    names.push_back(device.cast<std::string>());
  } else {
    names = device.cast<std::vector<std::string>>();
  }
  if (names.empty()) Check(InvalidArgument("device: an empty list (give e.g. \"cpu\" or [\"opencl\", \"cpu\"])"));
  std::vector<DLDevice> devices;
  for (const std::string& name : names) {
    StatusOr<DLDevice> d = ParseDevice(name);
    if (!d.ok()) Check(InvalidArgument("device: " + d.status().message()));
    devices.push_back(*d);
  }
  return devices;
}

// Input/output index of `key` (a name or an int; the C++ calls check the range).
int InputIndex(const Executor& ex, const py::handle& key) {
  if (py::isinstance<py::str>(key)) return Value(ex.InputIndex(key.cast<std::string>()));
  return key.cast<int>();
}
int OutputIndex(const Executor& ex, const py::handle& key) {
  if (py::isinstance<py::str>(key)) return Value(ex.OutputIndex(key.cast<std::string>()));
  return key.cast<int>();
}
std::string Describe(const py::handle& key) { return std::string(py::str(py::repr(key))); }

void SetInput(Executor& ex, const py::handle& key, const py::handle& value) {
  int index = InputIndex(ex, key);
  PyTensorArg arg = ToTensorArg(value, "set_input " + Describe(key));
  py::gil_scoped_release release;
  Check(ex.SetInput(index, arg.dl));
}

py::list TensorInfos(const std::vector<TensorInfo>& infos) {
  py::list out;
  for (const TensorInfo& info : infos) out.append(py::cast(info));
  return out;
}

// run() with the inputs already set: one GIL release around Executor::Run().
void RunPreset(PyExecutor& self) {
  py::gil_scoped_release release;
  Check(self.ex->Run());
}

py::object Run(PyExecutor& self, const py::args& args, const py::kwargs& kwargs) {
  Executor& ex = *self.ex;
  bool has_inputs = kwargs.size() > 0;
  if (args.size() > 1 || (args.size() == 1 && !py::isinstance<py::dict>(args[0]))) {
    throw py::type_error("run(): give inputs as keywords (run(data=x)) or as one dict (run({'data': x}))");
  }
  if (args.size() == 1) {
    for (auto item : args[0].cast<py::dict>()) SetInput(ex, item.first, item.second);
    has_inputs = true;
  }
  for (auto item : kwargs) SetInput(ex, item.first, item.second);
  {
    py::gil_scoped_release release;
    Check(ex.Run());
  }
  if (!has_inputs) return py::none();
  // With inputs: every output, copied to new CPU tensors (they survive the next run).
  std::vector<NDArray> outputs;
  {
    py::gil_scoped_release release;
    const int n = ex.num_outputs();
    for (int i = 0; i < n; ++i) outputs.push_back(Value(Value(ex.GetOutput(i)).CopyTo(DLDevice{kDLCPU, 0})));
  }
  py::list out;
  for (NDArray& t : outputs) out.append(WrapTensor(std::move(t)));
  return std::move(out);
}

void BindTensorInfo(py::module_& m) {
  py::class_<TensorInfo>(m, "TensorInfo", "Name, shape and dtype of a graph input or output (immutable).")
      .def_property_readonly("name", [](const TensorInfo& i) { return i.name; })
      .def_property_readonly("shape", [](const TensorInfo& i) { return py::tuple(py::cast(i.shape)); })
      .def_property_readonly("dtype", [](const TensorInfo& i) { return DataTypeName(i.dtype); })
      .def_property_readonly(
          "is_param", [](const TensorInfo& i) { return i.is_param; },
          "True for a parameter bound from the model's weights.")
      .def("__repr__", [](const TensorInfo& i) {
        return "TensorInfo(name=" + Describe(py::str(i.name)) + ", shape=" + Describe(py::tuple(py::cast(i.shape))) +
               ", dtype='" + DataTypeName(i.dtype) + "'" + (i.is_param ? ", is_param=True" : "") + ")";
      });
}

py::dict CapabilitiesDict(const ExecutorCapabilities& c) {
  py::dict out;
  out["output_zero_copy"] = c.output_zero_copy;
  out["params_files"] = c.params_files;
  return out;
}

void BindModel(py::module_& m) {
  py::class_<PyModel, std::shared_ptr<PyModel>>(m, "Model", "A loaded model (sorun.load). Shared by its executors.")
      .def_property_readonly("path", [](const PyModel& self) { return self.model.path(); })
      .def_property_readonly(
          "inputs", [](const PyModel& self) { return TensorInfos(self.model.inputs()); },
          "Every graph input, parameters included (is_param=True).")
      .def_property_readonly("outputs", [](const PyModel& self) { return TensorInfos(self.model.outputs()); })
      .def_property_readonly(
          "executor_kind", [](const PyModel& self) { return std::string(self.model.executor_kind()); },
          "Which executor kind runs the model: 'graph executor' or 'Relax VM'.")
      .def_property_readonly(
          "device_types_needed",
          [](const PyModel& self) {
            std::vector<std::string> names;
            for (DLDeviceType type : self.model.device_types_needed()) names.emplace_back(DeviceTypeName(type));
            return names;
          },
          "The device types the model's kernels need: ['cuda'] (a CUDA module), ['opencl'] (an OpenCL module), "
          "['cpu'] (no device module). executor() needs a device of each and refuses any other non-CPU device.")
      .def(
          "executor",
          [](py::object self, const py::object& device, std::optional<int> num_threads,
             std::optional<std::vector<int>> cpu_affinity, std::optional<int64_t> spin_us, bool warmup,
             bool cuda_graph) {
            ExecutorOptions options;
            options.devices = ParseDevices(device);
            options.num_threads = num_threads.value_or(0);
            if (cpu_affinity) options.cpu_affinity = *cpu_affinity;
            options.spin_us = spin_us;
            options.warmup = warmup;
            options.cuda_graph = cuda_graph;
            auto model = self.cast<std::shared_ptr<PyModel>>();
            PyExecutor ex;
            {
              py::gil_scoped_release release;
              ex.ex.emplace(Value(model->model.NewExecutor(options)));
            }
            ex.model = std::move(self);
            return ex;
          },
          py::arg("device") = "cpu", py::arg("num_threads") = py::none(), py::arg("cpu_affinity") = py::none(),
          py::arg("spin_us") = py::none(), py::kw_only(), py::arg("warmup") = false, py::arg("cuda_graph") = false,
          "A new executor on `device` (\"cpu\", \"opencl\", \"opencl:1\", \"cuda:0\", or a list, first = default). "
          "Executors of one model share its weights. num_threads / cpu_affinity / spin_us (sorun::ExecutorOptions) "
          "give the executor a thread pool of its own; left out, its kernels use the process-wide pool. "
          "warmup=True touches every page the first run would fault in before returning; cuda_graph=True "
          "records a run's CUDA kernels once and replays them with one launch (graph_report() says how it went).")
      .def_property_readonly(
          "capabilities", [](const PyModel& self) { return CapabilitiesDict(self.model.capabilities()); },
          "What the model's executor kind offers beyond every executor's calls: {'output_zero_copy': bool, "
          "'params_files': bool} (set_output_zero_copy; load_params / share_params).")
      .def("__repr__", [](const PyModel& self) { return "sorun.Model(" + Describe(py::str(self.model.path())) + ")"; });
}

void BindExecutor(py::module_& m) {
  py::class_<PyExecutor>(m, "Executor", R"doc(
Runs a model's graph. Single-threaded: use one executor per thread (a second thread inside the same
executor gets FailedPreconditionError). Method names follow TVM's GraphModule.
)doc")
      .def_property_readonly("model", [](const PyExecutor& self) { return self.model; })
      .def_property_readonly("devices",
                             [](const PyExecutor& self) {
                               std::vector<std::string> out;
                               for (DLDevice d : self.ex->devices()) out.push_back(DeviceName(d));
                               return out;
                             })
      .def_property_readonly(
          "num_threads", [](const PyExecutor& self) { return self.ex->num_threads(); },
          "Threads of the pool its kernels use (its own, or the process-wide pool).")
      .def_property_readonly("inputs", [](const PyExecutor& self) { return TensorInfos(self.ex->inputs()); })
      .def_property_readonly(
          "outputs", [](const PyExecutor& self) { return TensorInfos(self.ex->outputs()); },
          "The model's description of its outputs (a dim known only at run time is -1; a Relax model whose "
          "bytecode tells its outputs only by running lists none). A run's shapes are its outputs' shapes.")
      .def_property_readonly(
          "num_outputs", [](const PyExecutor& self) { return self.ex->num_outputs(); },
          "Outputs of the last run (before the first run, len(outputs)). Any thread.")
      .def(
          "set_input",
          [](PyExecutor& self, const py::object& key, const py::object& value, const py::kwargs& kwargs) {
            if (!key.is_none()) {
              if (value.is_none()) throw py::type_error("set_input(key, value): value is missing");
              SetInput(*self.ex, key, value);
            }
            for (auto item : kwargs) SetInput(*self.ex, item.first, item.second);
          },
          py::arg("key") = py::none(), py::arg("value") = py::none(),
          "Copies `value` (buffer protocol or __dlpack__; same shape and dtype) into input `key` (name or index). "
          "Also set_input(data=x, ...).")
      .def(
          "set_input_zero_copy",
          [](PyExecutor& self, const py::object& key, const py::object& value) {
            int index = InputIndex(*self.ex, key);
            PyTensorArg arg = ToTensorArg(value, "set_input_zero_copy " + Describe(key));
            {
              py::gil_scoped_release release;
              Check(self.ex->SetInputZeroCopy(index, arg.dl));
            }
            self.input_owners[index] = std::move(arg.owner);  // kept while bound
          },
          py::arg("key"), py::arg("value"),
          "The kernels read input `key` from `value` itself (compact, 64-byte aligned on the CPU); the executor "
          "keeps `value` alive while bound.")
      .def(
          "set_output_zero_copy",
          [](PyExecutor& self, const py::object& key, const py::object& value) {
            int index = OutputIndex(*self.ex, key);
            PyTensorArg arg = ToTensorArg(value, "set_output_zero_copy " + Describe(key));
            {
              py::gil_scoped_release release;
              Check(self.ex->SetOutputZeroCopy(index, arg.dl));
            }
            self.output_owners[index] = std::move(arg.owner);  // kept while bound
          },
          py::arg("key"), py::arg("value"), "The kernels write output `key` into `value` (same checks).")
      // run() without inputs is the hot path: its own overload, tried first, so a call builds no
      // args tuple / kwargs dict; calls with inputs fall through to the general overload.
      .def("run", &RunPreset, "Runs the graph on the inputs already set; returns None.")
      .def("run", &Run,
           "Runs the graph. With inputs (run(data=x) or run({'data': x})) sets them first and returns a list "
           "of every output as new CPU tensors; without, returns None (read outputs with get_output).")
      .def("__call__", &RunPreset)
      .def("__call__", &Run, "Same as run().")
      .def(
          "get_output",
          [](PyExecutor& self, const py::object& key) {
            int index = OutputIndex(*self.ex, key);
            return Value(self.ex->GetOutput(index));
          },
          py::arg("key"),
          "Output `key` (index or name) as a zero-copy view of the executor's memory. The view keeps that "
          "memory alive (also after the executor is gone), and the next run() overwrites its contents: "
          "use .copy() or np.array(...) to keep a result.")
      .def(
          "get_num_inputs", [](const PyExecutor& self) { return self.ex->inputs().size(); },
          "Number of graph inputs, parameters included (as TVM).")
      .def(
          "get_num_outputs", [](const PyExecutor& self) { return self.ex->num_outputs(); },
          "Number of outputs of the last run (as TVM).")
      .def(
          "get_input_info",
          [](const PyExecutor& self) {
            py::dict shapes, dtypes;
            for (const TensorInfo& i : self.ex->inputs()) {
              if (i.is_param) continue;
              shapes[py::str(i.name)] = py::tuple(py::cast(i.shape));
              dtypes[py::str(i.name)] = DataTypeName(i.dtype);
            }
            return py::make_tuple(shapes, dtypes);
          },
          "(shape_dict, dtype_dict) of the inputs that are not parameters, as TVM's GraphModule.")
      .def(
          "load_params",
          [](PyExecutor& self, const py::bytes& params) {
            std::string_view bytes = params;
            py::gil_scoped_release release;
            Check(self.ex->LoadParams(bytes));
          },
          py::arg("params"), "Copies each tensor of a params file's bytes into the input of its name.")
      .def(
          "share_params",
          [](PyExecutor& self, const PyExecutor& other, const py::bytes& params) {
            std::string_view bytes = params;
            py::gil_scoped_release release;
            Check(self.ex->ShareParams(*other.ex, bytes));
          },
          py::arg("other"), py::arg("params"),
          "Inputs named in the params bytes alias `other`'s tensors for them (no copy).")
      .def(
          "profile",
          [](PyExecutor& self, int repeat) {
            std::vector<NodeProfile> rows;
            {
              py::gil_scoped_release release;
              rows = Value(self.ex->Profile(repeat));
            }
            py::list out;
            for (const NodeProfile& r : rows) {
              py::dict row;
              row["node_id"] = r.node_id;
              row["name"] = r.name;
              row["func_name"] = r.func_name;
              row["mean_us"] = r.mean_us;
              row["min_us"] = r.min_us;
              out.append(row);
            }
            return out;
          },
          py::arg("repeat") = 10,
          "Per-kernel times over `repeat` repetitions: one dict per kernel call site (a graph's operator, a "
          "Relax instruction) with node_id, name, func_name, mean_us, min_us.")
      .def(
          "trace",
          [](PyExecutor& self) {
            std::vector<KernelEvent> events;
            {
              py::gil_scoped_release release;
              events = Value(self.ex->Trace());
            }
            py::list out;
            for (const KernelEvent& e : events) {
              py::dict row;
              row["node_id"] = e.node_id;
              row["name"] = e.name;
              row["func_name"] = e.func_name;
              row["start_us"] = e.start_us;
              row["duration_us"] = e.duration_us;
              out.append(row);
            }
            return out;
          },
          "Runs once and returns every kernel call in order: dicts with node_id, name, func_name, start_us "
          "(from the start of the run) and duration_us.")
      .def_property_readonly(
          "capabilities", [](const PyExecutor& self) { return CapabilitiesDict(self.ex->capabilities()); },
          "Same as Model.capabilities.")
      .def(
          "warmup",
          [](PyExecutor& self) {
            py::gil_scoped_release release;
            Check(self.ex->Warmup());
          },
          "Touches every page the first run would fault in (weights read in place, activation pools).")
      .def(
          "memory",
          [](const PyExecutor& self) {
            py::list out;
            for (const DeviceMemory& m : self.ex->Memory()) {
              py::dict row;
              row["device"] = DeviceName(m.device);
              row["weight_bytes"] = m.weight_bytes;
              row["activation_bytes"] = m.activation_bytes;
              row["workspace_bytes"] = m.workspace_bytes;
              out.append(row);
            }
            return out;
          },
          "Bytes per device: dicts with device, weight_bytes (shared by every executor of the model), "
          "activation_bytes (this executor's pools) and workspace_bytes (kernel workspace so far; 0 before a run).")
      .def(
          "graph_report",
          [](const PyExecutor& self) {
            const DeviceGraphReport r = Value(self.ex->GraphReport());
            py::dict out;
            out["requested"] = r.requested;
            out["active"] = r.active;
            out["captures"] = r.captures;
            out["replays"] = r.replays;
            out["uncaptured_runs"] = r.uncaptured_runs;
            out["operations"] = r.operations;
            out["refusal"] = r.refusal;
            return out;
          },
          "How CUDA graphs (executor(cuda_graph=True)) ran: requested, active (a graph is recorded for the "
          "current bindings), captures, replays, uncaptured_runs, operations (in the current graph), refusal "
          "(why runs are not recorded; '' when they are or may be).")
      .def(
          "synchronize",
          [](PyExecutor& self) {
            py::gil_scoped_release release;
            Check(self.ex->Synchronize());
          },
          "Waits until the device work this executor queued has finished (run() may return before a GPU "
          "has; run(inputs) and reading outputs as CPU tensors wait themselves).")
      .def(
          "stream",
          [](PyExecutor& self, const std::string& device) {
            return reinterpret_cast<uintptr_t>(Value(self.ex->GetStream(ParseDevices(py::str(device))[0])));
          },
          py::arg("device"),
          "The stream (an integer handle: a CUstream for 'cuda:N') this executor queues its work on `device` "
          "on: its own, or the one given to set_stream; 0 where the device has no streams.")
      .def(
          "set_stream",
          [](PyExecutor& self, const std::string& device, uintptr_t stream) {
            const DLDevice d = ParseDevices(py::str(device))[0];
            py::gil_scoped_release release;
            Check(self.ex->SetStream(d, reinterpret_cast<void*>(stream)));
          },
          py::arg("device"), py::arg("stream"),
          "Queues this executor's work on `device` on `stream` from now on: an integer stream handle the caller "
          "keeps alive, e.g. torch.cuda.current_stream().cuda_stream; 0 goes back to the executor's own stream. "
          "Work queued on the previous stream is waited for first.");
}

}  // namespace

namespace {

// A Python callable as a load hook: called with the GIL held, its exception becomes the load's error
// (PermissionDenied, with the exception's text; a sorun.Error keeps its message).
DecryptHook PythonDecryptHook(py::object fn) {
  auto held = std::make_shared<py::object>(std::move(fn));
  return [held](std::string_view stored, PlaintextSink& sink, const std::string& name) -> Status {
    py::gil_scoped_acquire gil;
    try {
      py::memoryview view = py::memoryview::from_memory(stored.data(), static_cast<py::ssize_t>(stored.size()));
      py::object plain = (*held)(view, name);
      py::buffer_info info = py::buffer(plain).request();
      const size_t size = static_cast<size_t>(info.size) * static_cast<size_t>(info.itemsize);
      SORUN_RETURN_IF_ERROR(sink.Reserve(size));
      return sink.Write(info.ptr, size);
    } catch (py::error_already_set& e) {
      return PermissionDenied("decrypt: " + std::string(py::str(e.value())));
    } catch (const std::exception& e) {
      return PermissionDenied(std::string("decrypt: ") + e.what());
    }
  };
}

LibraryVerifier PythonVerifyHook(py::object fn) {
  auto held = std::make_shared<py::object>(std::move(fn));
  return [held](std::string_view library, const std::string& name) -> Status {
    py::gil_scoped_acquire gil;
    try {
      (*held)(py::memoryview::from_memory(library.data(), static_cast<py::ssize_t>(library.size())), name);
      return Status::Ok();
    } catch (py::error_already_set& e) {
      return PermissionDenied(std::string(py::str(e.value())));
    } catch (const std::exception& e) {
      return PermissionDenied(e.what());
    }
  };
}

}  // namespace

PYBIND11_MODULE(_sorun, m) {
  m.doc() = "sorun's C++ runtime (use the `sorun` package).";
  Check(Initialize());
  RegisterErrors(m);
  RegisterTensor(m);
  BindTensorInfo(m);
  BindModel(m);
  BindExecutor(m);
  BindPacker(m);
  m.def(
      "load",
      [](py::object source, std::optional<std::string> graph, std::optional<std::string> params,
         std::optional<bool> verify_checksum, std::optional<std::string> name, py::object decrypt,
         py::object verify_library) {
        // Python opens extensions RTLD_LOCAL: make the TVM C ABI (the only exports besides PyInit, per
        // python/BUILD.bazel's version script) visible to the kernel libraries we dlopen. At the first
        // load, not at import: `import sorun` must not change what `import tvm` binds to (sorun.compile
        // runs TVM in a process that imports sorun but loads no model).
        static const Status global = MakeTvmAbiGlobal();
        Check(global);
        RuntimeOptions options;
        options.verify_checksum = verify_checksum;
        if (!decrypt.is_none()) options.decrypt = PythonDecryptHook(decrypt);
        if (!verify_library.is_none()) options.verify_library = PythonVerifyHook(verify_library);
        std::optional<Model> loaded;
        if (!py::isinstance<py::str>(source) && !py::hasattr(source, "__fspath__")) {
          // Bytes from memory: any C-contiguous buffer (bytes, bytearray, memoryview, numpy uint8).
          if (graph || params) Check(InvalidArgument("load(bytes): graph= and params= need a library path"));
          py::buffer_info info = py::buffer(source).request();
          const std::string_view bytes(static_cast<const char*>(info.ptr),
                                       static_cast<size_t>(info.size) * static_cast<size_t>(info.itemsize));
          py::gil_scoped_release release;
          loaded.emplace(Value(Model::LoadFromMemory(bytes, options, name.value_or("<memory>"))));
          return std::make_shared<PyModel>(PyModel{std::move(*loaded)});
        }
        const std::string path = py::str(py::module_::import("os").attr("fspath")(source));
        if (params && !graph) Check(InvalidArgument("load(" + path + "): params= needs graph= (the three-file form)"));
        {
          py::gil_scoped_release release;
          // A bare kernel library is refused by Model::Load: it needs graph=.
          loaded.emplace(graph ? Value(Model::LoadFromFiles(*graph, path, params.value_or(""), options))
                               : Value(Model::Load(path, options)));
        }
        return std::make_shared<PyModel>(PyModel{std::move(*loaded)});
      },
      py::arg("source"), py::arg("graph") = py::none(), py::arg("params") = py::none(),
      py::arg("verify_checksum") = py::none(), py::kw_only(), py::arg("name") = py::none(),
      py::arg("decrypt") = py::none(), py::arg("verify_library") = py::none(),
      "Loads a model: a path (.so or .tar), or the model's bytes (any buffer: bytes, memoryview...),\n"
      "loaded through a sealed memory file with nothing written to disk (name= names it in errors).\n"
      "Three-file form: load(lib, graph=\"g.json\", params=\"p.params\").\n"
      "decrypt(stored: memoryview, name: str) -> bytes: the library's plaintext (decryption on the way in).\n"
      "verify_library(library: memoryview, name: str) -> None: raise to refuse the library before dlopen.");
  // Private, for bench/python_overhead.py only: the C++ baseline measured in this process, on this
  // executor. Releases the GIL once, calls Executor::Run() n times back to back and returns the
  // elapsed nanoseconds (steady_clock), so the per-call difference to n Python ex.run() calls is the
  // binding's cost. Stops at the first failing Run() and raises its error.
  m.def(
      "_bench_run_loop",
      [](PyExecutor& self, int n) {
        if (n < 1) Check(InvalidArgument("_bench_run_loop(n=" + std::to_string(n) + "): n must be >= 1"));
        py::gil_scoped_release release;
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < n; ++i) Check(self.ex->Run());
        return static_cast<int64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
      },
      py::arg("executor"), py::arg("n"),
      "Private (bench/python_overhead.py): ns taken by n back-to-back C++ Run() calls, GIL released once.");
  m.def(
      "num_threads", [] { return ProcessPoolThreads(); },
      "Size of the process-wide kernel thread pool (SORUN_NUM_THREADS, else the hardware threads).");
}

}  // namespace sorun::python
