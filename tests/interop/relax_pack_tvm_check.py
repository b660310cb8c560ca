#!/usr/bin/env python3
"""Checks that TVM's own runtime loads and runs a Relax export packed by `sorun pack` (realigned
constants + checksum record, docs/relax.md "Packing") with the reference outputs.

    relax_pack_tvm_check.py PACKED.so [--original ORIG.so] INPUT.npy... [REF.npy...]

Arguments ending in `.output_<k>.npy` (testdata/relax's naming) are the reference outputs, the other
.npy files are main's inputs, in order. Without references, --original is run by the same TVM for them.
Runs relax.VirtualMachine(tvm.runtime.load_module(PACKED.so), tvm.cpu())["main"](*inputs) through
tests/interop/relax_models.py's tvm_reference (TVM 0.27, or TVM 0.16 for a legacy export with the
hhb-tvm venv) and requires bit-identical outputs. Exit status 0 when they match, 1 otherwise.
"""
import argparse
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import relax_models as rm  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("packed")
    parser.add_argument("arrays", nargs="+", help="inputs, then references (*.output_<k>.npy)")
    parser.add_argument("--original", help="the unpacked export, run for the references when none are given")
    args = parser.parse_args()
    refs = [p for p in args.arrays if re.search(r"\.output_\d+\.npy$", p)]
    inputs = [np.load(p) for p in args.arrays if p not in refs]
    if refs:
        expected = [np.load(p) for p in refs]
    elif args.original:
        expected = rm.tvm_reference(args.original, inputs)
    else:
        parser.error("give reference outputs (*.output_<k>.npy) or --original")
    got = rm.tvm_reference(args.packed, inputs)
    name = os.path.basename(args.packed)
    if len(got) != len(expected):
        print("FAIL %s: %d outputs, expected %d" % (name, len(got), len(expected)))
        return 1
    for k, (g, e) in enumerate(zip(got, expected)):
        if g.shape != e.shape or g.dtype != e.dtype or not np.array_equal(g, e):
            diff = np.max(np.abs(g.astype("float64") - e.astype("float64"))) if g.shape == e.shape else "shape"
            print("FAIL %s: output %d %s %s differs from %s %s (max |diff| %s)" %
                  (name, k, g.dtype, g.shape, e.dtype, e.shape, diff))
            return 1
    print("OK %s: TVM loads it; %d output(s) bit-identical to the reference" % (name, len(got)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
