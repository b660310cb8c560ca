"""Runs a packed model library with TVM's own runtime and compares its outputs with .npy files.

usage: python tvm_run_packed.py LIB [--input NAME=X.npy ...] [--expect Y0.npy ...] [--rtol R] [--atol A]
                                    [--save-outputs DIR] [--load-only] [--json]

Loads LIB with tvm.runtime.load_module (TVM's loader: dlopen, dlsym("__tvm_dev_mblob"), blob parsing; a
.tar is extracted and linked by TVM first), prints the module tree, creates the GraphExecutor from the
"default" factory on tvm.cpu(), runs it and compares every expected output.
  --save-outputs DIR  also write DIR/output_<i>.npy
  --load-only         stop after loading and printing the tree (for models TVM cannot run here)
  --json              end with one line `JSON {...}`: tree, outputs (shape, dtype, max errors), ok
Exit status 0 when all match (or the load succeeded with --load-only), 1 otherwise.
Used by tools/interop/inject_check.sh and tests/interop/run_interop.sh.
"""
import argparse
import json
import os
import sys

import numpy as np
import tvm
from tvm.contrib import graph_executor


def module_tree(mod):
    return {"type_key": mod.type_key, "imports": [module_tree(m) for m in mod.imported_modules]}


def tree_text(t):
    if not t["imports"]:
        return t["type_key"]
    return "%s -> [%s]" % (t["type_key"], ", ".join(tree_text(c) for c in t["imports"]))


def compare(got, want, rtol, atol):
    """(match, max abs error, max relative error, bit-identical)"""
    if got.shape != want.shape or got.dtype != want.dtype:
        return False, float("inf"), float("inf"), False
    identical = bool(np.array_equal(got, want))
    if got.size == 0:
        return True, 0.0, 0.0, identical
    if np.issubdtype(got.dtype, np.floating):
        g, w = got.astype(np.float64), want.astype(np.float64)
        diff = np.abs(g - w)
        err = float(np.max(diff))
        rel = float(np.max(diff / np.maximum(np.abs(w), 1e-30)))
        return bool(np.allclose(g, w, rtol=rtol, atol=atol)), err, rel, identical
    return identical, 0.0 if identical else float("inf"), 0.0 if identical else float("inf"), identical


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--input", action="append", default=[])
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--rtol", type=float, default=1e-5)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--save-outputs")
    ap.add_argument("--load-only", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    summary = {"lib": args.lib, "tvm_version": tvm.__version__, "ok": False}

    def finish(ok):
        summary["ok"] = ok
        if args.json:
            print("JSON " + json.dumps(summary), flush=True)
        return 0 if ok else 1

    lib = tvm.runtime.load_module(args.lib)
    tree = module_tree(lib)
    summary["tree"] = tree
    print("tvm %s loaded %s: %s" % (tvm.__version__, args.lib, tree_text(tree)))
    if args.load_only:
        return finish(True)
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    for spec in args.input:
        name, path = spec.split("=", 1)
        module.set_input(name, np.load(path))
    module.run()
    n = module.get_num_outputs()
    outputs = [module.get_output(i).numpy() for i in range(n)]
    summary["outputs"] = [{"shape": list(o.shape), "dtype": str(o.dtype)} for o in outputs]
    if args.save_outputs:
        os.makedirs(args.save_outputs, exist_ok=True)
        for i, o in enumerate(outputs):
            np.save(os.path.join(args.save_outputs, "output_%d.npy" % i), o)
    ok = True
    if args.expect and len(args.expect) != n:
        print("the model has %d outputs but %d expected files were given" % (n, len(args.expect)))
        ok = False
    for i, path in enumerate(args.expect[:n]):
        got, want = outputs[i], np.load(path)
        match, err, rel, identical = compare(got, want, args.rtol, args.atol)
        summary["outputs"][i].update({"max_abs_error": err, "max_rel_error": rel, "bit_identical": identical,
                                      "match": match})
        if got.shape != want.shape or got.dtype != want.dtype:
            print("output %d: %s %s vs expected %s %s -> MISMATCH" % (i, got.shape, got.dtype, want.shape, want.dtype))
        else:
            print("output %d %s %s: max abs error %.3g, bit-identical %s -> %s" % (
                i, got.shape, got.dtype, err, identical, "OK" if match else "MISMATCH"))
        ok = ok and match
    return finish(ok)


if __name__ == "__main__":
    sys.exit(main())
