#!/usr/bin/env python3
"""Writes the large aarch64 Relax exports (docs/embedded.md, "TVM 0.27 exports for aarch64"): ResNet-18 and
MobileNetV2 cross-compiled for 64-bit Arm with NEON, their inputs, and reference outputs from the same model
built for x86-64 and run by TVM's own runtime. Too big to commit (ResNet-18's .so is 47 MB): CI writes them
into a cache folder (tools/ci/aarch64.sh) and tests/e2e/aarch64_exports_test.cc reads them from
$SORUN_AARCH64_LARGE_MODELS under qemu.

usage: ~/.cache/sorun/tvm027-venv/bin/python testdata/relax_aarch64/make_relax_aarch64_large.py OUT_DIR
       [--size N] [resnet18 mobilenetv2 ...]
  (the pinned TVM venv of tests/interop/install_tvm027.sh, and Debian's gcc-aarch64-linux-gnu)

Models: bench/peer/onnx_models.py's hand-built ONNX models (torchvision's layer structure, seeded weights:
ResNet-18 11.7 M parameters, MobileNetV2 1.0 3.5 M), imported by TVM 0.27's Relax ONNX frontend with the
input fixed at 1x3xNxN (N = --size, default 64: the layers and weights are the 224x224 model's, the global
average pool makes any N >= 32 valid; 64 keeps the unscheduled kernels of TVM's default CPU pipeline at
seconds under qemu), built with that default pipeline (tvm.compile: FuseOps, FuseTIR, ...) for the same
target and cross compiler as make_relax_aarch64_fixtures.py. Per model, in OUT_DIR:
  <model>.so                                  the aarch64 export
  <model>.input_0.npy                         uniform(-1, 1), seeded by "<model>.input"
  <model>.output_0.npy                        logits [1, 1000]: the x86-64 build run by relax.VirtualMachine
Prints one line per model with its build seconds.
"""
import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench", "peer"))
sys.path.insert(0, os.path.join(ROOT, "tests", "interop"))

import onnx_models  # noqa: E402  (bench/peer: ResNet-18 and MobileNetV2 as ONNX)
import relax_models as rm  # noqa: E402  (building, TVM's reference run, writing the arrays)
from make_relax_aarch64_fixtures import AARCH64, CROSS_CC  # noqa: E402  (the aarch64 target and compiler)


def build(name, out_dir, size):
    """Imports model NAME at 1x3xSIZExSIZE, writes its x86-64 reference outputs and its aarch64 export."""
    from tvm.relax.frontend.onnx import from_onnx

    t0 = time.time()
    shape = (1, 3, size, size)
    mod = from_onnx(onnx_models.MODELS[name](), shape_dict={"data": list(shape)})
    inputs = [rm.seeded(name + ".input").uniform(-1, 1, shape).astype("float32")]
    with tempfile.TemporaryDirectory() as tmp:
        outputs = rm.tvm_reference(rm.build_export(mod, os.path.join(tmp, "x86_64.so"), fused=True), inputs)
    rm.save_arrays(os.path.join(out_dir, name + "."), inputs, outputs)
    path = rm.build_export(mod, os.path.join(out_dir, name + ".so"), AARCH64, fused=True, fcompile=CROSS_CC)
    print("%s: %s %d bytes, input %s, x86-64 top class %d (%.0f s)" %
          (name, path, os.path.getsize(path), "x".join(map(str, shape)), outputs[0].argmax(), time.time() - t0),
          flush=True)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--size", type=int, default=64, help="input height and width (>= 32)")
    parser.add_argument("models", nargs="*", default=sorted(onnx_models.MODELS))
    args = parser.parse_args(argv[1:])
    if args.size < 32:
        sys.exit("make_relax_aarch64_large.py: --size must be >= 32 (five stride-2 stages)")
    os.makedirs(args.out_dir, exist_ok=True)
    for name in args.models:
        if name not in onnx_models.MODELS:
            sys.exit("make_relax_aarch64_large.py: unknown model %r (models: %s)" %
                     (name, ", ".join(sorted(onnx_models.MODELS))))
        build(name, args.out_dir, args.size)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
