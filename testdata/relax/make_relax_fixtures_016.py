#!/usr/bin/env python3
"""Writes the TVM 0.16 Relax VM fixture of tests/relax: legacy_mlp.so, exported by hhb-tvm 3.2.3
(TVM 0.16.dev0) with relax.build + export_library, plus its input and TVM's output.

Run with the pinned TVM 0.16 venv (tests/interop/install_tvm.sh, CPython 3.10):
    ~/.cache/sorun/tvm-venv/bin/python testdata/relax/make_relax_fixtures_016.py testdata/relax
legacy_mlp.so is mlp.so's model with mlp.so's weights and input (numpy default_rng(17) and (18)), compiled
for "llvm -mtriple=x86_64-linux-gnu" (hhb's default triple is riscv64): the legacy container
(`__tvm_dev_mblob`, root `relax.Executable`, packed-C kernels). Writes legacy_mlp.input_0.npy and
legacy_mlp.output_0.npy (relax.VirtualMachine(load_module(legacy_mlp.so), tvm.cpu())["main"]). The model
builder is that of tests/interop/relax_models.py.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "interop"))
import relax_models as rm  # noqa: E402
from relax_models_016 import X86  # noqa: E402


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else HERE
    mod = rm.mlp_module(np.random.default_rng(17))[0]
    args = [np.random.default_rng(18).standard_normal((1, 16)).astype("float32")]
    path = rm.build_export(mod, os.path.join(out_dir, "legacy_mlp.so"), X86)
    outputs = rm.tvm_reference(path, args)
    rm.save_arrays(os.path.join(out_dir, "legacy_mlp."), args, outputs)
    print("%s %d bytes, inputs %s, outputs %s" % (path, os.path.getsize(path), rm.input_names(mod),
                                                  [o.shape for o in outputs]))


if __name__ == "__main__":
    main()
