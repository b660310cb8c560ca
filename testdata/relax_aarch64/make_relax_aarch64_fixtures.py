#!/usr/bin/env python3
"""Writes the checked-in aarch64 Relax exports of tests/e2e/aarch64_exports_test.cc (docs/embedded.md): TVM
0.27 models cross-compiled for 64-bit Arm with NEON, their inputs, and reference outputs from the same model
built for x86-64 and run by TVM's own runtime (TVM's runtime does not run on aarch64 here; sorun runs the
aarch64 files under qemu).

Run with the pinned TVM venv (tests/interop/install_tvm027.sh) and Debian's gcc-aarch64-linux-gnu:
    ~/.cache/sorun/tvm027-venv/bin/python testdata/relax_aarch64/make_relax_aarch64_fixtures.py testdata/relax_aarch64

Models (tests/interop/relax_models.py, weights and inputs seeded by name as there; small on purpose, so
the committed files stay a few hundred KB):
  mlp.so        MLP 16-32-10
  cnn.so        the small CNN (conv, relu, pool, dense) of testdata/relax
  dyn_tuple.so  x[n,8], dynamic batch n, tuple output (h, softmax(h)); run with n = 3
  mlp_tar.tar   the MLP as a .tar export (objects cross-compiled, linked by sorun at load with $CC)
  <model>.input_<k>.npy, <model>.output_<k>.npy   the x86-64 build run by relax.VirtualMachine on tvm.cpu()
"""
import os
import sys
import tempfile

import numpy as np
import tvm
from tvm import relax
from tvm.support import cc as tvm_cc

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "interop"))
import relax_models as rm  # noqa: E402

AARCH64 = tvm.target.Target({"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": ["+neon"]})
CROSS_CC = tvm_cc.cross_compiler("aarch64-linux-gnu-gcc")


def modules():
    """(name, module, inputs) of every fixture."""
    mlp = rm.mlp_module(rm.seeded("mlp"))[0]
    cnn = rm.cnn_module(rm.seeded("cnn"))
    dyn = rm.dyn_batch_module(rm.seeded("dyn_tuple"))
    return [
        ("mlp", mlp, [rm.seeded("mlp.input").standard_normal((1, 16)).astype("float32")]),
        ("cnn", cnn, [rm.seeded("cnn.input").standard_normal((1, 3, 16, 16)).astype("float32")]),
        ("dyn_tuple", dyn, [rm.seeded("dyn_tuple.input").standard_normal((3, 8)).astype("float32")]),
    ]


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else HERE
    for name, mod, inputs in modules():
        with tempfile.TemporaryDirectory() as tmp:
            outputs = rm.tvm_reference(rm.build_export(mod, os.path.join(tmp, "x86_64.so")), inputs)
        rm.save_arrays(os.path.join(out_dir, name + "."), inputs, outputs)
        path = os.path.join(out_dir, name + ".so")
        rm.build_export(mod, path, AARCH64, fcompile=CROSS_CC)
        print("%s %d bytes, %d outputs" % (path, os.path.getsize(path), len(outputs)))
        if name == "mlp":
            tar = os.path.join(out_dir, "mlp_tar.tar")
            relax.build(mod, AARCH64).export_library(tar)
            print("%s %d bytes" % (tar, os.path.getsize(tar)))


if __name__ == "__main__":
    main()
