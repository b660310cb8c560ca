"""TVM 0.27's side of bench/relax_vs_tvm.py: ONE fresh process loads a Relax export with TVM's own runtime,
runs main on fixed inputs and prints one JSON line (the counterpart of bench/relax_bench_main.cc).

usage (the TVM 0.27 venv of tests/interop/install_tvm027.sh):
  python tvm_relax_bench.py MODEL.so X0.npy [X1.npy ...] [--warmup W] [--repeat R] [--output-dir DIR]

Threads: TVM_NUM_THREADS from the environment (the caller sets it). TVM is imported runtime-only
(TVM_USE_RUNTIME_LIB=1: libtvm_runtime.so + libtvm_ffi.so, not the 250 MB compiler library), which is all a
deployment needs. Measured, in this order:
  bare_rss      VmRSS once numpy is imported (the interpreter and what the harness needs to read .npy)
  init_ms       `import tvm` (runtime only); init_rss: VmRSS after it
  ready_ms      tvm.runtime.load_module(MODEL) + tvm.runtime.vm.VirtualMachine(lib, tvm.cpu())
                (relax.VirtualMachine is this class)
  first_run_ms  the inputs copied into TVM tensors + the first vm["main"](...)
  run_ms        R calls timed inside TVM's C++ (vm.time_evaluator("main", cpu, number=1, repeat=R): one call
                per sample, no Python in the timed region) after W warm-up calls: median, p99 (nearest rank)
  py_call_ms    median of R calls of vm["main"](...) timed from Python (what a Python caller sees)
  peak_rss      VmHWM at the end
With --output-dir the outputs of the last call (flattened depth-first through tuples) are written as
DIR/output_<k>.npy.
"""
import argparse
import json
import math
import os
import time


def proc_status_bytes(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def flatten(value):
    if hasattr(value, "numpy"):
        return [value.numpy()]
    out = []
    for item in value:
        out += flatten(item)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("inputs", nargs="*")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--output-dir")
    a = ap.parse_args()

    import numpy as np

    bare_rss = proc_status_bytes("VmRSS")
    arrays = [np.load(p) for p in a.inputs]

    os.environ["TVM_USE_RUNTIME_LIB"] = "1"
    t0 = time.perf_counter()
    import tvm  # noqa: E402
    from tvm.runtime.vm import VirtualMachine  # noqa: E402

    init_ms = (time.perf_counter() - t0) * 1e3
    init_rss = proc_status_bytes("VmRSS")

    t0 = time.perf_counter()
    lib = tvm.runtime.load_module(a.model)
    vm = VirtualMachine(lib, tvm.cpu())
    ready_ms = (time.perf_counter() - t0) * 1e3

    t0 = time.perf_counter()
    args = [tvm.runtime.tensor(x) for x in arrays]
    out = vm["main"](*args)
    first_run_ms = (time.perf_counter() - t0) * 1e3

    for _ in range(a.warmup):
        out = vm["main"](*args)
    runs = sorted(r * 1e3 for r in vm.time_evaluator("main", tvm.cpu(), number=1, repeat=a.repeat)(*args).results)
    py_calls = []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        out = vm["main"](*args)
        py_calls.append((time.perf_counter() - t0) * 1e3)
    peak_rss = proc_status_bytes("VmHWM")

    if a.output_dir:
        for k, y in enumerate(flatten(out)):
            np.save(os.path.join(a.output_dir, "output_%d.npy" % k), y)

    n = len(runs)
    median = runs[n // 2] if n % 2 else 0.5 * (runs[n // 2 - 1] + runs[n // 2])
    py_calls.sort()
    print(json.dumps({
        "runtime": "tvm", "version": tvm.__version__, "runtime_only": bool(tvm.base._RUNTIME_ONLY),
        "threads": os.environ.get("TVM_NUM_THREADS"), "bare_rss_bytes": bare_rss, "init_ms": init_ms,
        "init_rss_bytes": init_rss, "ready_ms": ready_ms, "first_run_ms": first_run_ms,
        "run_ms": {"median": median, "p99": runs[max(math.ceil(0.99 * n), 1) - 1], "min": runs[0], "n": n},
        "py_call_ms": {"median": py_calls[len(py_calls) // 2]}, "peak_rss_bytes": peak_rss}))


if __name__ == "__main__":
    main()
