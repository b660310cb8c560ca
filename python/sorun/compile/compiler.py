"""compile_onnx: an ONNX file in, one packed sorun model file out (docs/compile.md).

The TVM side (toolchain check, ONNX operators and shapes, import into Relax, MetaSchedule tuning, build,
export, pack, TVM's VM on the result) runs in a worker process (sorun.compile.tvm_worker: TVM and sorun cannot
share a process); this side runs the result in sorun and ONNX Runtime, compares, and writes the output under
a temporary name beside it, renamed when complete, so a failed or interrupted compile never leaves a
half-written file. Every refusal is a CompileError naming the step and what failed."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

from . import checks, tuning
from .errors import CompileError
from .onnx_input import InputSpec


def _check_output_path(output):
    output = os.path.abspath(output)
    parent = os.path.dirname(output)
    if not os.path.isdir(parent):
        raise CompileError("output", "%s: the directory %s does not exist" % (output, parent))
    if os.path.isdir(output) or (os.path.exists(output) and not os.path.isfile(output)):
        raise CompileError("output", "%s exists and is not a regular file" % output)
    if not os.access(parent, os.W_OK):
        raise CompileError("output", "%s: cannot write in %s" % (output, parent))
    return output


def _run_worker(request, work):
    req_path, res_path = os.path.join(work, "request.json"), os.path.join(work, "result.json")
    with open(req_path, "w") as f:
        json.dump(request, f)
    proc = subprocess.Popen([sys.executable, "-m", "sorun.compile.tvm_worker", req_path, res_path])
    try:
        proc.wait()
    except KeyboardInterrupt:
        # Ctrl-C reached the worker too (one process group): it stops its step and says which it was.
        try:
            proc.wait(timeout=120)
        except (KeyboardInterrupt, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
    if not os.path.isfile(res_path):
        how = "was killed by signal %d" % -proc.returncode if proc.returncode < 0 else "exited %d" % proc.returncode
        raise CompileError("build", "the TVM worker process %s without a result (its output is above)" % how)
    with open(res_path) as f:
        result = json.load(f)
    if "error" in result:
        raise CompileError(result["error"]["step"], result["error"]["message"])
    return result


def compile_onnx(onnx_path, output, target="host", input_shapes=None, tune=None, database=None, check=True,
                 rtol=checks.DEFAULT_RTOL, atol=checks.DEFAULT_ATOL, seed=0, dynamic_size=1):
    """Compiles ONNX model `onnx_path` for `target` into the sorun model file `output`; returns the report
    (a dict: model, inputs, target, kernels, tuning, checks, size, seconds per step).

    input_shapes: {name: [dims]} overriding the file's shapes (a str dim is symbolic).
    tune: a budget ("64" trials, "90s", "10m") tuned with MetaSchedule on this machine into `database`
          (required with tune; kernels already recorded there are not tuned again).
    database: a MetaSchedule database directory whose records are applied (tuned here or elsewhere).
    check: run the result in sorun and TVM's VM against ONNX Runtime on inputs seeded with `seed` (a symbolic
           dimension takes `dynamic_size`) before writing; rtol/atol are the tolerances.
    """
    t_start = time.time()
    output = _check_output_path(output)
    if not os.path.isfile(onnx_path):
        raise CompileError("onnx", "%s: no such file" % onnx_path)
    if tune is not None:
        tuning.parse_budget(tune)  # refuse a bad budget before any work
        if database is None:
            raise CompileError("tune", "--tune needs --database DIR (where MetaSchedule keeps its records, reused "
                               "by the next compile)")
    request = {
        "onnx": os.path.abspath(onnx_path), "target": target, "input_shapes": dict(input_shapes or {}),
        "tune": tune, "database": os.path.abspath(database) if database else None, "check": check,
        "seed": seed, "dynamic_size": dynamic_size,
    }
    with tempfile.TemporaryDirectory(prefix="sorun-compile-") as work:
        request["work_dir"] = work
        try:
            result = _run_worker(request, work)
        except CompileError as e:
            if "interrupted" in str(e):
                raise CompileError(e.step, "%s; nothing was written to %s" % (e, output)) from None
            raise
        seconds = dict(result["seconds"])
        specs = [InputSpec(i["name"], i["dtype"], i["shape"]) for i in result["inputs"]]

        check_report = None
        if check:
            t = time.time()
            with np.load(os.path.join(work, "inputs.npz")) as z:
                inputs = {s.name: z[s.name] for s in specs}
            with np.load(os.path.join(work, "tvm_outputs.npz")) as z:
                got_tvm = [z["arr_%d" % i] for i in range(len(z.files))]
            want = checks.onnx_runtime_outputs(onnx_path, inputs)
            got_sorun = checks.sorun_outputs(os.path.join(work, "check.so"), specs, inputs)
            check_report = {
                "what": result["check_what"], "seed": seed, "rtol": rtol, "atol": atol,
                "inputs": {s.name: list(inputs[s.name].shape) for s in specs},
                "sorun_vs_onnxruntime": checks.compare("sorun", got_sorun, want, rtol, atol),
                "tvm_vm_vs_onnxruntime": checks.compare("TVM's VM", got_tvm, want, rtol, atol),
                "sorun_vs_tvm_vm_identical": len(got_sorun) == len(got_tvm) and all(
                    a.shape == b.shape and (a == b).all() for a, b in zip(got_sorun, got_tvm)),
            }
            seconds["check"] = seconds.pop("tvm_vm", 0.0) + time.time() - t

        t = time.time()
        partial = "%s.partial-%d" % (output, os.getpid())
        try:
            shutil.copyfile(os.path.join(work, "packed.so"), partial)
            os.chmod(partial, 0o755)
            os.replace(partial, output)
        except OSError as e:
            raise CompileError("output", "%s: %s" % (output, e.strerror or e)) from None
        finally:
            if os.path.exists(partial):
                os.unlink(partial)
        seconds["output"] = time.time() - t

    seconds["total"] = time.time() - t_start
    return {
        "model": os.path.abspath(onnx_path),
        "output": output,
        "bytes": os.path.getsize(output),
        "target": {"name": target, "tvm": result["target_tvm"]},
        "inputs": [s.describe() for s in specs],
        "kernels": result["kernels"],
        "tuning": result["tuning"],
        "constants": result["constants"],
        "checksum": result["checksum"],
        "check": check_report,
        "note": result["note"],
        "seconds": {k: round(v, 2) for k, v in seconds.items()},
    }
