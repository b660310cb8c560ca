#!/usr/bin/env python3
"""libsorun.so through Python's ctypes: the C API is usable from a foreign-function interface that
knows nothing of C++. Declares the structs of api/sorun_c.h by hand, runs the zoo MLP (copied and
DLPack outputs) against mlp_expected.npy, checks error codes and texts, and that no C++ symbol can
be looked up. Standard library only (no numpy).

Usage: ctypes_test.py LIBSORUN_SO MLP_SO MLP_INPUT_NPY MLP_EXPECTED_NPY
"""
import ast
import ctypes
import os
import struct
import sys
import threading

SORUN_OK = 0
SORUN_INVALID_ARGUMENT = 1
SORUN_NOT_FOUND = 2
SORUN_OUT_OF_RANGE = 4
KDL_CPU = 1
KDL_FLOAT = 2
TOLERANCE = 1e-4


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))),
]


class TensorInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("name", ctypes.c_char_p),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("is_param", ctypes.c_int32),
    ]


class ExecutorOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("devices", ctypes.POINTER(DLDevice)),
        ("num_devices", ctypes.c_size_t),
        ("num_threads", ctypes.c_int32),
        ("warmup", ctypes.c_int32),
        ("cpu_affinity", ctypes.POINTER(ctypes.c_int32)),
        ("num_cpu_affinity", ctypes.c_size_t),
        ("spin_us", ctypes.c_int64),
        ("spin_us_set", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
    ]


class RuntimeOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("verify_checksum", ctypes.c_int32), ("prefetch", ctypes.c_int32)]


def bind(lib):
    """Declares the signatures used here (ctypes would otherwise truncate pointers to int)."""
    p = ctypes.POINTER
    status = ctypes.c_int
    signatures = {
        "sorun_api_version": (ctypes.c_uint32, []),
        "sorun_version": (ctypes.c_char_p, []),
        "sorun_status_name": (ctypes.c_char_p, [status]),
        "sorun_last_error": (ctypes.c_char_p, []),
        "sorun_parse_device": (status, [ctypes.c_char_p, p(DLDevice)]),
        "sorun_model_load": (status, [ctypes.c_char_p, p(RuntimeOptions), p(ctypes.c_void_p)]),
        "sorun_model_free": (None, [ctypes.c_void_p]),
        "sorun_model_num_inputs": (status, [ctypes.c_void_p, p(ctypes.c_int32)]),
        "sorun_model_num_outputs": (status, [ctypes.c_void_p, p(ctypes.c_int32)]),
        "sorun_model_input_info": (status, [ctypes.c_void_p, ctypes.c_int32, p(TensorInfo)]),
        "sorun_model_output_info": (status, [ctypes.c_void_p, ctypes.c_int32, p(TensorInfo)]),
        "sorun_executor_new": (status, [ctypes.c_void_p, p(ExecutorOptions), p(ctypes.c_void_p)]),
        "sorun_executor_free": (None, [ctypes.c_void_p]),
        "sorun_executor_input_index": (status, [ctypes.c_void_p, ctypes.c_char_p, p(ctypes.c_int32)]),
        "sorun_executor_num_threads": (status, [ctypes.c_void_p, p(ctypes.c_int32)]),
        "sorun_executor_set_input": (status, [ctypes.c_void_p, ctypes.c_int32, p(DLTensor)]),
        "sorun_executor_set_input_by_name": (status, [ctypes.c_void_p, ctypes.c_char_p, p(DLTensor)]),
        "sorun_executor_run": (status, [ctypes.c_void_p]),
        "sorun_executor_get_output": (status, [ctypes.c_void_p, ctypes.c_int32, p(p(DLManagedTensor))]),
        "sorun_executor_copy_output": (status, [ctypes.c_void_p, ctypes.c_int32, p(DLTensor)]),
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes


def read_npy_float32(path):
    """(shape, values) of a little-endian float32 .npy file, version 1.0."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x93NUMPY\x01\x00":
        raise ValueError(path + ": not a version 1.0 .npy file")
    (header_len,) = struct.unpack("<H", data[8:10])
    header = ast.literal_eval(data[10 : 10 + header_len].decode("latin1"))
    if header["descr"] != "<f4" or header["fortran_order"]:
        raise ValueError(path + ": expected C-order '<f4', got " + repr(header))
    shape = tuple(header["shape"])
    count = 1
    for d in shape:
        count *= d
    values = struct.unpack("<%df" % count, data[10 + header_len : 10 + header_len + 4 * count])
    return shape, values


class Check:
    def __init__(self, lib):
        self.lib = lib
        self.failures = 0

    def true(self, cond, what):
        if not cond:
            print("FAIL: %s (last error: %s)" % (what, self.lib.sorun_last_error().decode()), file=sys.stderr)
            self.failures += 1

    def ok(self, status, what):
        if status != SORUN_OK:
            raise SystemExit(
                "FAIL: %s returned %s: %s"
                % (what, self.lib.sorun_status_name(status).decode(), self.lib.sorun_last_error().decode())
            )

    def fails(self, status, expected, text, what):
        error = self.lib.sorun_last_error().decode()
        self.true(status == expected and text in error, "%s: expected status %d with '%s', got %d: '%s'"
                  % (what, expected, text, status, error))


def float_tensor(values, shape):
    """A CPU float32 DLTensor over a new ctypes array (returned too: it must stay alive)."""
    array = (ctypes.c_float * len(values))(*values)
    dims = (ctypes.c_int64 * len(shape))(*shape)
    tensor = DLTensor()
    tensor.data = ctypes.cast(array, ctypes.c_void_p)
    tensor.device = DLDevice(KDL_CPU, 0)
    tensor.ndim = len(shape)
    tensor.dtype = DLDataType(KDL_FLOAT, 32, 1)
    tensor.shape = dims
    return tensor, (array, dims)


def max_error(actual, expected):
    return max(abs(a - e) for a, e in zip(actual, expected)) if len(actual) == len(expected) else float("inf")


def run(lib, check, model, input_shape, input_values, expected_shape, expected_values, threads):
    """One executor on its own thread-count; returns the copied output."""
    options = ExecutorOptions()
    options.struct_size = ctypes.sizeof(ExecutorOptions)
    options.num_threads = threads
    executor = ctypes.c_void_p()
    check.ok(lib.sorun_executor_new(model, ctypes.byref(options), ctypes.byref(executor)), "sorun_executor_new")
    try:
        count = ctypes.c_int32()
        check.ok(lib.sorun_executor_num_threads(executor, ctypes.byref(count)), "sorun_executor_num_threads")
        check.true(count.value == threads, "num_threads %d, expected %d" % (count.value, threads))

        tensor, keep = float_tensor(input_values, input_shape)
        check.ok(lib.sorun_executor_set_input_by_name(executor, b"data", ctypes.byref(tensor)), "set_input_by_name")
        check.ok(lib.sorun_executor_run(executor), "sorun_executor_run")

        out, out_keep = float_tensor([0.0] * len(expected_values), expected_shape)
        check.ok(lib.sorun_executor_copy_output(executor, 0, ctypes.byref(out)), "sorun_executor_copy_output")
        copied = list(out_keep[0])
        check.true(max_error(copied, expected_values) <= TOLERANCE, "copied output differs from mlp_expected.npy")

        managed = ctypes.POINTER(DLManagedTensor)()
        check.ok(lib.sorun_executor_get_output(executor, 0, ctypes.byref(managed)), "sorun_executor_get_output")
        dl = managed.contents.dl_tensor
        shape = tuple(dl.shape[i] for i in range(dl.ndim))
        check.true(shape == expected_shape, "DLPack output shape %r" % (shape,))
        check.true((dl.dtype.code, dl.dtype.bits, dl.device.device_type) == (KDL_FLOAT, 32, KDL_CPU),
                   "DLPack output dtype/device")
        values = ctypes.cast(ctypes.c_void_p(dl.data + dl.byte_offset), ctypes.POINTER(ctypes.c_float))
        viewed = [values[i] for i in range(len(expected_values))]
        check.true(max_error(viewed, expected_values) <= TOLERANCE, "DLPack output differs from mlp_expected.npy")
        managed.contents.deleter(managed)

        # Errors: codes and texts.
        index = ctypes.c_int32(-1)
        check.fails(lib.sorun_executor_input_index(executor, b"nope", ctypes.byref(index)), SORUN_NOT_FOUND, "nope",
                    "input_index('nope')")
        check.true(index.value == -1, "index written on failure")
        check.fails(lib.sorun_executor_set_input(executor, 0, None), SORUN_INVALID_ARGUMENT, "value is NULL",
                    "set_input(NULL)")
        wrong, wrong_keep = float_tensor([0.0] * 8, (2, 4))
        check.fails(lib.sorun_executor_set_input(executor, 0, ctypes.byref(wrong)), SORUN_INVALID_ARGUMENT, "[2, 4]",
                    "set_input(wrong shape)")
        return copied
    finally:
        lib.sorun_executor_free(executor)


def main():
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    lib_path, model_path, input_path, expected_path = (os.path.abspath(a) for a in sys.argv[1:])
    lib = ctypes.CDLL(lib_path)
    bind(lib)
    check = Check(lib)

    version = lib.sorun_api_version()
    check.true(version >> 16 == 1, "sorun_api_version() = %#x, expected major 1" % version)
    check.true(len(lib.sorun_version()) > 0, "sorun_version() is empty")
    check.true(lib.sorun_status_name(SORUN_NOT_FOUND) == b"not_found", "sorun_status_name(2)")
    # No C++ crosses the ABI: the C++ API's mangled names are not in the dynamic symbol table.
    for mangled in ("_ZN5sorun10InitializeEv", "_ZN5sorun7VersionEv", "_ZNK5sorun6Status8ToStringB5cxx11Ev"):
        check.true(not hasattr(lib, mangled), "C++ symbol %s is exported" % mangled)

    device = DLDevice()
    check.ok(lib.sorun_parse_device(b"opencl:1", ctypes.byref(device)), "sorun_parse_device")
    check.true((device.device_type, device.device_id) == (4, 1), "opencl:1 parsed as %d:%d"
               % (device.device_type, device.device_id))

    model = ctypes.c_void_p()
    missing = os.path.join(os.path.dirname(model_path), "no_such_model.so")
    check.fails(lib.sorun_model_load(missing.encode(), None, ctypes.byref(model)), SORUN_NOT_FOUND, missing,
                "load(missing)")
    check.true(not model.value, "model handle written on failure")

    options = RuntimeOptions(ctypes.sizeof(RuntimeOptions), 1, 0)  # verify the checksum
    check.ok(lib.sorun_model_load(model_path.encode(), ctypes.byref(options), ctypes.byref(model)), "sorun_model_load")
    try:
        count = ctypes.c_int32()
        check.ok(lib.sorun_model_num_inputs(model, ctypes.byref(count)), "num_inputs")
        check.true(count.value == 7, "num_inputs %d" % count.value)
        info = TensorInfo()
        info.struct_size = ctypes.sizeof(TensorInfo)
        check.ok(lib.sorun_model_input_info(model, 0, ctypes.byref(info)), "input_info(0)")
        input_shape = tuple(info.shape[i] for i in range(info.ndim))
        check.true(info.name == b"data" and info.is_param == 0, "input 0 is %r" % info.name)
        check.fails(lib.sorun_model_input_info(model, 7, ctypes.byref(info)), SORUN_OUT_OF_RANGE, "7",
                    "input_info(7)")

        shape, input_values = read_npy_float32(input_path)
        check.true(shape == input_shape, "mlp_input.npy shape %r, model input %r" % (shape, input_shape))
        expected_shape, expected_values = read_npy_float32(expected_path)
        check.ok(lib.sorun_model_output_info(model, 0, ctypes.byref(info)), "output_info(0)")
        check.true(tuple(info.shape[i] for i in range(info.ndim)) == expected_shape, "output shape")

        run(lib, check, model, input_shape, input_values, expected_shape, expected_values, threads=1)

        # Two executors of one model on two Python threads (ctypes releases the GIL during calls); the
        # last-error text is per thread.
        results = {}

        def worker(threads):
            try:
                results[threads] = run(lib, check, model, input_shape, input_values, expected_shape,
                                       expected_values, threads)
            except BaseException as e:  # SystemExit from check.ok: report it from this thread
                print("FAIL: worker with %d thread(s): %s" % (threads, e), file=sys.stderr)

        workers = [threading.Thread(target=worker, args=(n,)) for n in (1, 2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        check.true(sorted(results) == [1, 2], "a worker thread did not finish")
    finally:
        lib.sorun_model_free(model)

    if check.failures:
        raise SystemExit("%d check(s) failed" % check.failures)
    print("ctypes_test: MLP output matches mlp_expected.npy; C API %d.%d, sorun %s"
          % (version >> 16, version & 0xFFFF, lib.sorun_version().decode()))


if __name__ == "__main__":
    main()
