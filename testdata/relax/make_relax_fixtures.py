#!/usr/bin/env python3
"""Writes the Relax VM fixtures of tests/relax: small models exported by TVM 0.27 with export_library.

Run with the pinned TVM venv (CPython 3.11, apache-tvm==0.27.0.post1, apache-tvm-ffi==0.1.15.post2, numpy):
    ~/.cache/sorun/tvm027-venv/bin/python testdata/relax/make_relax_fixtures.py testdata/relax
Writes mlp.so (static MLP, weights as constants) and dyn_batch.so (dynamic batch n, tuple output),
both from seeded weights, compiled for target "llvm".
"""
import os
import sys

import numpy as np
import tvm
from tvm import relax
from tvm.script import relax as R


def make_mlp(rng):
    w0 = rng.standard_normal((16, 32)).astype("float32")
    b0 = rng.standard_normal((32,)).astype("float32")
    w1 = rng.standard_normal((32, 10)).astype("float32")
    b1 = rng.standard_normal((10,)).astype("float32")
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((1, 16), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit(relax.op.matmul(x, relax.const(w0)))
            h = bb.emit(relax.op.add(h, relax.const(b0)))
            h = bb.emit(relax.op.nn.relu(h))
            h = bb.emit(relax.op.matmul(h, relax.const(w1)))
            out = bb.emit_output(relax.op.add(h, relax.const(b1)))
        bb.emit_func_output(out)
    return bb.get()


def make_dyn_batch(rng):
    w = rng.standard_normal((8, 4)).astype("float32")
    b = rng.standard_normal((4,)).astype("float32")
    n = tvm.tirx.Var("n", "int64")
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((n, 8), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit(relax.op.matmul(x, relax.const(w)))
            h = bb.emit(relax.op.add(h, relax.const(b)))
            h = bb.emit(relax.op.nn.relu(h))
            s = bb.emit(relax.op.nn.softmax(h))
            out = bb.emit_output(relax.Tuple([h, s]))
        bb.emit_func_output(out)
    return bb.get()


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = np.random.default_rng(17)
    for name, make in (("mlp", make_mlp), ("dyn_batch", make_dyn_batch)):
        mod = make(rng)
        ex = relax.build(mod, target="llvm")
        path = os.path.join(out_dir, name + ".so")
        ex.export_library(path)
        print(path, os.path.getsize(path))


if __name__ == "__main__":
    main()
