#!/usr/bin/env python3
"""Builds the CUDA models of the GPU benchmark (bench/gpu/README.md) on this machine: TVM 0.27 and nvcc, no
GPU or driver needed.

usage: make_gpu_models.py OUT_DIR [--arch sm_90] [resnet18 mobilenetv2 ...]
       (the pinned TVM 0.27 venv's Python: tests/interop/install_tvm027.sh; its onnx is used)

For each model writes OUT_DIR/<model>.so and OUT_DIR/<model>.input.npy (float32 1x3x224x224):
  - bench/peer's hand-built ONNX model (bench/peer/onnx_models.py: ResNet-18, MobileNetV2 1.0, batch 1, the
    layer structure of torchvision's), its weights rounded to bfloat16 precision (the low 16 bits of each
    float32 zeroed) so the staged folder compresses under the 64 MiB a GPU run may carry; kernel speed does not
    depend on the values;
  - imported with TVM 0.27's Relax ONNX frontend and built by `relax.build` with TVM's default GPU pipeline for
    target {"kind": "cuda", "arch": ARCH} (host "llvm");
  - exported with the CUDA source compiled by nvcc into a fatbin with machine code for ARCH and its PTX
    (sorun compile's `fpack_imports` hook, python/sorun/compile/cuda_fatbin.py), so the driver loads it with no
    JIT on that GPU.
Prints one line per model with the build time.
"""
import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench", "peer"))
sys.path.insert(0, os.path.join(ROOT, "python", "sorun", "compile"))

import onnx_models  # noqa: E402  (bench/peer)
import cuda_fatbin  # noqa: E402  (the nvcc export hook; standalone: the TVM venv has no sorun)


def rounded_to_bfloat16(model):
    """`model` with every float32 initializer's low 16 mantissa bits zeroed."""
    from onnx import numpy_helper

    for i, init in enumerate(model.graph.initializer):
        a = numpy_helper.to_array(init)
        if a.dtype != np.float32:
            continue
        bits = a.view(np.uint32) & np.uint32(0xFFFF0000)
        model.graph.initializer[i].CopyFrom(numpy_helper.from_array(bits.view(np.float32), init.name))
    return model


def build(name, out_dir, arch, nvcc):
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx

    model = rounded_to_bfloat16(onnx_models.MODELS[name]())
    t0 = time.time()
    mod = from_onnx(model, shape_dict={"data": [1, 3, 224, 224]}, keep_params_in_input=False)
    target = tvm.target.Target({"kind": "cuda", "arch": arch}, host="llvm")
    executable = relax.build(mod, target=target)
    # A fatbin with machine code for `arch` and its PTX.
    path = os.path.join(out_dir, name + ".so")
    executable.export_library(path, fpack_imports=cuda_fatbin.compiled_cuda_packer("fatbin", nvcc, [arch]))
    np.save(os.path.join(out_dir, name + ".input.npy"),
            np.random.RandomState(1).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32))
    print("%s: %s (%.0f s, %d bytes)" % (name, path, time.time() - t0, os.path.getsize(path)), flush=True)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--arch", default="sm_90", help="the GPU's architecture (H100/H200: sm_90)")
    parser.add_argument("models", nargs="*", default=sorted(onnx_models.MODELS))
    args = parser.parse_args(argv[1:])
    os.makedirs(args.out_dir, exist_ok=True)
    nvcc = cuda_fatbin.find_nvcc()
    if nvcc is None:
        sys.exit("make_gpu_models.py: no nvcc (set NVCC or put the CUDA Toolkit's bin on PATH)")
    for name in args.models:
        if name not in onnx_models.MODELS:
            sys.exit("make_gpu_models.py: unknown model %r (models: %s)" % (name, ", ".join(sorted(onnx_models.MODELS))))
        build(name, args.out_dir, args.arch, nvcc)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
