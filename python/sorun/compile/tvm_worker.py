"""The TVM side of `sorun compile`, in a process of its own (python -m sorun.compile.tvm_worker REQUEST RESULT).

TVM and sorun each define the TVM C ABI (TVMFFIFunctionCall, TVMBackendAllocWorkspace, ...) that kernel
libraries bind by name from the process's global scope, so one process cannot both load sorun models and run
TVM: this worker imports TVM and never loads a model (importing the sorun package here is harmless: the
extension makes its ABI global only at the first sorun.load); the parent (sorun.compile.compiler) loads the
result in sorun and never imports TVM.

REQUEST (JSON): onnx, target, input_shapes, tune, database, work_dir, check, seed, dynamic_size.
RESULT (JSON): {"error": {"step", "message"}} or the worker's part of the report; in work_dir it leaves
packed.so (the output), check.so (what the parent runs in sorun: packed.so, or the same model built for this
machine when the target does not run here), inputs.npz and tvm_outputs.npz (TVM's VM on check.so).
"""
import json
import os
import signal
import sys
import time

from . import checks, onnx_input, targets, tuning
from .blob_export import BlobPacker
from .errors import CompileError, last_line


def _import_tvm():
    try:
        import onnx  # pylint: disable=import-outside-toplevel,unused-import
        import tvm  # pylint: disable=import-outside-toplevel
    except ImportError as e:
        raise CompileError("toolchain", "%s is not installed: sorun compile needs the 'compile' extra (apache-tvm "
                           "0.27, onnx, onnxruntime): pip install 'sorun[compile]'" % e.name) from None
    if not tvm.__version__.startswith("0.27"):
        raise CompileError("toolchain", "sorun compile is made for TVM 0.27 (the 'compile' extra); this Python has "
                           "TVM %s" % tvm.__version__)


def _import_onnx(model, specs):
    from tvm.relax.frontend.onnx import from_onnx  # pylint: disable=import-outside-toplevel

    shapes = {s.name: s.shape for s in specs if not s.dynamic}
    dtypes = {s.name: s.dtype for s in specs}
    try:
        return from_onnx(model, shape_dict=shapes, dtype_dict=dtypes, keep_params_in_input=False)
    except Exception as e:  # the frontend's errors: one line, naming the step
        raise CompileError("import", "TVM's ONNX frontend could not import the graph: %s" % last_line(e)) from None


def _kernel_count(mod):
    return sum(1 for _, f in mod.functions.items() if type(f).__name__ == "PrimFunc")


def _build(mod, target, step):
    import tvm  # pylint: disable=import-outside-toplevel
    from tvm import relax  # pylint: disable=import-outside-toplevel

    try:
        with tvm.transform.PassContext(opt_level=3):
            return relax.build(mod, target=target)
    except Exception as e:
        raise CompileError(step, "TVM could not build the model: %s" % last_line(e)) from None


def _export(executable, path, kwargs):
    import subprocess  # pylint: disable=import-outside-toplevel

    try:
        executable.export_library(path, **kwargs)
    except CompileError:
        raise
    except subprocess.CalledProcessError as e:
        out = (e.output or b"").decode(errors="replace").strip().splitlines()
        raise CompileError("export", "%s failed: %s" % (os.path.basename(str(e.cmd[0])), out[-1] if out else e))
    except Exception as e:
        raise CompileError("export", "exporting the library failed: %s" % last_line(e)) from None


def run(req, step, log):
    """The TVM side of a compile (see the module doc); `step["name"]` follows the step being done."""
    import numpy as np  # pylint: disable=import-outside-toplevel

    seconds = {}
    work = req["work_dir"]
    step["name"] = "toolchain"
    _import_tvm()
    spec = targets.resolve(req["target"])
    budget = tuning.parse_budget(req["tune"]) if req["tune"] is not None else None
    if budget and not spec.tunable_here:
        raise CompileError("tune", "target %s cannot be tuned on this machine: %s" % (
            req["target"], spec.note or "MetaSchedule measures kernels where they run"))

    t = time.time()
    step["name"] = "onnx"
    model = onnx_input.load_model(req["onnx"])
    from tvm.relax.frontend.onnx.onnx_frontend import _get_convert_map  # pylint: disable=import-outside-toplevel

    bad = onnx_input.unsupported_operators(model, _get_convert_map())
    if bad:
        op, node, opset = bad[0]
        more = " (and %s)" % ", ".join(b[0] for b in bad[1:]) if len(bad) > 1 else ""
        raise CompileError("onnx", "%s: ONNX operator %r (node %r, opset %s) is not supported by TVM 0.27's ONNX "
                           "frontend%s" % (req["onnx"], op, node, opset, more))
    specs = onnx_input.graph_inputs(model, req["onnx"], {k: v for k, v in req["input_shapes"].items()})
    if budget and any(s.dynamic for s in specs):
        raise CompileError("tune", "MetaSchedule tunes static shapes: give every input's shape with --input "
                           "(dynamic: %s)" % ", ".join(s.describe() for s in specs if s.dynamic))
    step["name"] = "import"
    imported = _import_onnx(model, specs)
    seconds["import"] = time.time() - t
    target = spec.tvm_target()

    tuned = None
    t = time.time()
    step["name"] = "tune"
    mod = tuning.prepare(imported, target)
    kernels = _kernel_count(mod)
    if budget:
        tuned = tuning.tune(mod, target, req["database"], budget, log)
        seconds["tune"] = time.time() - t
    if budget or req["database"]:
        mod = tuning.apply_database(mod, target, req["database"])
        if tuned is None:
            tuned = {"database": req["database"], "applied": True}
    else:
        mod = imported  # relax.build's own pipeline for the target (TVM's default schedules)

    t = time.time()
    step["name"] = "build"
    log("build: %s for %s" % (os.path.basename(req["onnx"]), target))
    executable = _build(mod, target, "build")
    seconds["build"] = time.time() - t
    t = time.time()
    step["name"] = "export"
    # Exported already packed (blob_export.BlobPacker): constants realigned, checksum record, one blob.
    _export(executable, os.path.join(work, "packed.so"), spec.export_kwargs)
    pack = spec.export_kwargs["fpack_imports"].report
    seconds["export"] = time.time() - t

    check_what = None
    if req["check"]:
        t = time.time()
        step["name"] = "check"
        check_so = os.path.join(work, "packed.so")
        check_what = "the compiled file"
        if not spec.runs_here:
            host = targets.resolve("host")
            host_exec = _build(imported, host.tvm_target(), "check")
            _export(host_exec, os.path.join(work, "check.so"), {"fpack_imports": BlobPacker(x86_64=True)})
            check_so = os.path.join(work, "check.so")
            check_what = "the same model built for this machine (the %s library does not run here)" % spec.kind
        else:
            os.link(check_so, os.path.join(work, "check.so"))
        inputs = checks.seeded_inputs(specs, req["seed"], req["dynamic_size"])
        np.savez(os.path.join(work, "inputs.npz"), **inputs)
        outs = checks.tvm_vm_outputs(check_so, specs, inputs)
        np.savez(os.path.join(work, "tvm_outputs.npz"), *outs)
        seconds["tvm_vm"] = time.time() - t

    return {
        "inputs": [{"name": s.name, "dtype": s.dtype, "shape": s.shape} for s in specs],
        "target_tvm": str(target),
        "kernels": kernels,
        "tuning": tuned,
        "constants": {"tensors": pack["tensor_constants"], "aligned_after": pack["aligned_after"]},
        "checksum": pack["checksum"],
        "check_what": check_what,
        "note": spec.note,
        "seconds": seconds,
    }


def main(argv):
    request_path, result_path = argv
    with open(request_path) as f:
        req = json.load(f)
    step = {"name": "setup"}

    def on_sigint(_signum, _frame):
        tuning.INTERRUPTED.set()
        if not tuning.MEASURING.is_set():  # MetaSchedule's run ends itself at the flag (tuning.py)
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)

    def log(msg):
        print("sorun compile: " + msg, file=sys.stderr, flush=True)

    try:
        result = run(req, step, log)
        code = 0
    except CompileError as e:
        result, code = {"error": {"step": e.step, "message": str(e)}}, 2
    except KeyboardInterrupt:
        result, code = {"error": {"step": step["name"], "message": "interrupted"}}, 130
    except Exception as e:  # a bug or an unexpected TVM failure: still one line, naming the step
        result, code = {"error": {"step": step["name"], "message": "%s: %s" % (type(e).__name__, last_line(e))}}, 2
    with open(result_path, "w") as f:
        json.dump(result, f)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
