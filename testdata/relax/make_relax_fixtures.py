#!/usr/bin/env python3
"""Writes the TVM 0.27 Relax VM fixtures of tests/relax: small models exported with export_library, plus
their inputs and TVM's outputs.

Run with the pinned TVM 0.27 venv (tests/interop/install_tvm027.sh):
    ~/.cache/sorun/tvm027-venv/bin/python testdata/relax/make_relax_fixtures.py testdata/relax [NAME,...]
Writes, all compiled for target "llvm" from seeded weights (numpy default_rng(17), drawn in this order):
  mlp.so        static MLP 16-32-10, weights as constants
  dyn_batch.so  dynamic batch n, tuple output (run with n = 3)
  tir_par.so    a TIR kernel with T.parallel and a 64 KiB workspace buffer
  cnn.so        conv2d+relu+max_pool+reshape (vm.builtin.reshape)+matmul+softmax
  bool_if.so    a bool scalar input choosing an If branch, a bool output (TVM 0.23+ bool: DLPack code 6)
  prim_scale.so an R.Prim("int64") parameter k (recorded with k = 3) passed on to a kernel: y = x * k
  sort_topk.so  sort, argsort and topk on small integers (ties): kernels calling tvm.contrib.sort.*
  row_argmax.so x[n, 8] (n dynamic) -> (argmax, max) over axis 1: one value per row
and for each <name>.so: <name>.input_<k>.npy (main's parameters) and <name>.output_<k>.npy (the flattened
return value of main, depth-first, as run by relax.VirtualMachine(load_module(<name>.so), tvm.cpu())).
The model builders are those of tests/interop/relax_models.py (the Relax interop job).

With --aarch64 (Debian's gcc-aarch64-linux-gnu): the same models and weights cross-compiled for
{"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": ["+neon"]} into OUT_DIR/<name>.so only
(testdata/relax/aarch64: what the tests load on aarch64, docs/embedded.md). TVM's runtime does not run
them here; the x86-64 build's .npy files beside it stay the reference, and this mode checks that the
inputs it drew equal the recorded ones:
    .../python testdata/relax/make_relax_fixtures.py testdata/relax/aarch64 --aarch64 mlp,cnn
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "interop"))
import relax_models as rm  # noqa: E402


def main():
    argv = [a for a in sys.argv[1:] if a != "--aarch64"]
    aarch64 = len(argv) != len(sys.argv) - 1
    out_dir = argv[0] if argv else HERE
    weights = np.random.default_rng(17)  # mlp and dyn_batch draw first: the original fixtures' weights
    inputs = np.random.default_rng(18)
    fixtures = [
        ("mlp", rm.mlp_module(weights)[0], [inputs.standard_normal((1, 16))]),
        ("dyn_batch", rm.dyn_batch_module(weights), [inputs.standard_normal((3, 8))]),
        ("tir_par", rm.tir_par_module(), [inputs.standard_normal((64, 256))]),
        ("cnn", rm.cnn_module(weights), [inputs.standard_normal((1, 3, 16, 16))]),
        ("bool_if", rm.bool_if_module(), [inputs.standard_normal((4, 8)), np.array(True)]),
        ("prim_scale", rm.prim_scale_module(), [inputs.standard_normal((4, 8)), np.array(3, "int64")]),
        ("sort_topk", rm.sort_topk_module(), [inputs.integers(0, 5, (6, 16)).astype("float32")]),
        ("row_argmax", rm.row_argmax_module(), [inputs.standard_normal((3, 8))]),
    ]
    scalars = {"prim_scale": [1]}  # R.Prim parameters: TVM takes them as Python numbers
    only = argv[1].split(",") if len(argv) > 1 else None  # e.g. "bool_if": one fixture, same inputs
    for name, mod, args in fixtures:
        if only and name not in only:
            continue
        args = [a.astype("float32") if a.dtype == np.float64 else a for a in args]
        if aarch64:
            write_aarch64(mod, name, args, out_dir)
            continue
        path = rm.build_export(mod, os.path.join(out_dir, name + ".so"))
        outputs = rm.tvm_reference(path, args, scalars.get(name, []))
        rm.save_arrays(os.path.join(out_dir, name + "."), args, outputs)
        print("%s %d bytes, inputs %s, outputs %s" % (path, os.path.getsize(path), rm.input_names(mod),
                                                      [o.shape for o in outputs]))


def write_aarch64(mod, name, args, out_dir):
    """OUT_DIR/<name>.so cross-compiled for aarch64; its inputs must be the recorded ones in HERE."""
    import tvm
    from tvm.support import cc as tvm_cc

    for k, a in enumerate(args):
        recorded = np.load(os.path.join(HERE, "%s.input_%d.npy" % (name, k)))
        if recorded.dtype != a.dtype or not np.array_equal(recorded, a):
            sys.exit("%s input %d differs from %s's: regenerate the x86-64 fixtures first" % (name, k, HERE))
    target = tvm.target.Target({"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": ["+neon"]})
    path = rm.build_export(mod, os.path.join(out_dir, name + ".so"), target,
                           fcompile=tvm_cc.cross_compiler("aarch64-linux-gnu-gcc"))
    print("%s %d bytes (aarch64)" % (path, os.path.getsize(path)))


if __name__ == "__main__":
    main()
