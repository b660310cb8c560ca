"""Runs a packed model library with TVM's own runtime and compares its outputs with .npy files.

usage: python tvm_run_packed.py LIB.so --input NAME=X.npy [...] --expect Y0.npy [...] [--rtol R] [--atol A]

Loads LIB.so with tvm.runtime.load_module (TVM's loader: dlopen, dlsym("__tvm_dev_mblob"), blob
parsing), creates the GraphExecutor from the "default" factory on tvm.cpu(), runs it and compares
every expected output. Exit status 0 when all match. Used by tools/interop/inject_check.sh.
"""
import argparse
import sys

import numpy as np
import tvm
from tvm.contrib import graph_executor


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--input", action="append", default=[])
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--rtol", type=float, default=1e-5)
    ap.add_argument("--atol", type=float, default=1e-5)
    args = ap.parse_args()

    lib = tvm.runtime.load_module(args.lib)
    print("tvm %s loaded %s: type_key=%s imports=%s" % (
        tvm.__version__, args.lib, lib.type_key, [m.type_key for m in lib.imported_modules]))
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    for spec in args.input:
        name, path = spec.split("=", 1)
        module.set_input(name, np.load(path))
    module.run()
    ok = True
    for i, path in enumerate(args.expect):
        got = module.get_output(i).numpy()
        want = np.load(path)
        if got.shape != want.shape or got.dtype != want.dtype:
            print("output %d: %s %s vs expected %s %s" % (i, got.shape, got.dtype, want.shape, want.dtype))
            ok = False
            continue
        if np.issubdtype(got.dtype, np.floating):
            err = float(np.max(np.abs(got.astype(np.float64) - want))) if got.size else 0.0
            match = np.allclose(got, want, rtol=args.rtol, atol=args.atol)
        else:
            err = 0.0 if np.array_equal(got, want) else float("inf")
            match = err == 0.0
        print("output %d %s %s: max abs error %.3g, bit-identical %s -> %s" % (
            i, got.shape, got.dtype, err, np.array_equal(got, want), "OK" if match else "MISMATCH"))
        ok = ok and match
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
