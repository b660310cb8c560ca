#!/usr/bin/env python3
"""Writes the runnable CUDA Relax exports of tests/cuda: TVM 0.27 exports for target "cuda" (host "llvm")
whose "cuda" module holds nvcc-compiled code (fmt "ptx", "cubin" or "fatbin") instead of CUDA C++ source,
plus their inputs and reference outputs (.npy).

Run with the pinned TVM venv (tests/interop/install_tvm027.sh) on a machine with the CUDA Toolkit (nvcc; no
GPU or driver needed):
    ~/.cache/sorun/tvm027-venv/bin/python testdata/relax_cuda/make_relax_cuda_fixtures.py testdata/relax_cuda

Why the rewrite: without a CUDA driver TVM 0.27 cannot load its CUDA runtime, so its codegen's module keeps
fmt "cuda" (source) and TVM's compile hook `tvm_callback_cuda_compile` is never called; sorun has no NVRTC
and refuses that payload. So this script exports with TVM's own `export_library`, passing its documented
`fpack_imports` hook: the hook takes TVM's packed container (`ModulePackImportsToC`, the
`__tvm_ffi__library_bin` array of a C file that TVM then compiles and links itself), compiles the source of
the one "cuda" module with nvcc, replaces that payload's fmt and code (the kernel table is kept byte for
byte) and writes the C file back with the new bytes. Nothing else in the container changes.

Writes, with weights from numpy default_rng(17) and inputs from default_rng(18) as testdata/relax does (so
the models and inputs are those of testdata/relax/mlp.so and dyn_batch.so):
  mlp_ptx.so           MLP 16-32-10, fmt "ptx" (compute_80: JIT-compiled by the driver on sm_80 and newer)
  mlp_cubin.so         the same, fmt "cubin" for sm_90 (H100) only
  dyn_batch_fatbin.so  x[n,8], dynamic batch n, tuple output (h, softmax(h)); fmt "fatbin" (sm_80, sm_90 and
                       compute_90 PTX)
  <model>.input_0.npy, <model>.output_<k>.npy   mlp (x[1,16]) and dyn_batch (x[3,8]) with the outputs of the
                       same model built for "llvm" and run by relax.VirtualMachine on tvm.cpu()
  dyn_batch.b5.input_0.npy, dyn_batch.b5.output_<k>.npy   dyn_batch again with n = 5
"""
import importlib.util
import os
import sys
import tempfile

import numpy as np
import tvm
from tvm import relax

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "interop"))
import relax_models as rm  # noqa: E402

# The nvcc export hook is sorun compile's (python/sorun/compile/cuda_fatbin.py), loaded by path: this
# script runs in the TVM venv, which has no sorun installed.
_spec = importlib.util.spec_from_file_location(
    "cuda_fatbin", os.path.join(HERE, "..", "..", "python", "sorun", "compile", "cuda_fatbin.py"))
cuda_fatbin = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cuda_fatbin)

# SM architectures per payload fmt: ptx for compute_80 (JIT on sm_80 and newer), cubin for sm_90 only,
# fatbin with machine code for sm_80 and sm_90 plus compute_90 PTX.
ARCHS = {"ptx": ["sm_80"], "cubin": ["sm_90"], "fatbin": ["sm_80", "sm_90"]}


def find_nvcc():
    nvcc = cuda_fatbin.find_nvcc()
    if nvcc is None:
        sys.exit("make_relax_cuda_fixtures.py: no nvcc (set NVCC or put the CUDA Toolkit's bin on PATH)")
    return nvcc


def cuda_module(mod):
    """`mod` built for target "cuda" (arch sm_80, host "llvm") as testdata/relax_device does: the zero
    pipeline, then dlight's GPU fallback schedule."""
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_80"}, host="llvm")
    with target:
        mod = relax.get_pipeline("zero")(mod)
        mod = tvm.s_tir.dlight.ApplyDefaultSchedule(tvm.s_tir.dlight.gpu.Fallback())(mod)
    return relax.build(mod, target=target)


def save_reference(out_dir, prefix, mod, inputs):
    """prefix.input_<k>.npy and prefix.output_<k>.npy: `mod` built for "llvm", run by TVM's VM on the CPU."""
    with tempfile.TemporaryDirectory() as tmp:
        outputs = rm.tvm_reference(rm.build_export(mod, os.path.join(tmp, "cpu.so")), inputs)
    rm.save_arrays(os.path.join(out_dir, prefix + "."), inputs, outputs)
    return outputs


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else HERE
    nvcc = find_nvcc()
    weights = np.random.default_rng(17)  # drawn in testdata/relax's order: mlp, then dyn_batch
    inputs = np.random.default_rng(18)
    mlp = rm.mlp_module(weights)[0]
    dyn_batch = rm.dyn_batch_module(weights)
    mlp_in = [inputs.standard_normal((1, 16)).astype("float32")]
    dyn_in = [inputs.standard_normal((3, 8)).astype("float32")]
    dyn_in5 = [np.random.default_rng(19).standard_normal((5, 8)).astype("float32")]

    save_reference(out_dir, "mlp", mlp, mlp_in)
    save_reference(out_dir, "dyn_batch", dyn_batch, dyn_in)
    save_reference(out_dir, "dyn_batch.b5", dyn_batch, dyn_in5)
    for name, mod, fmt in (("mlp_ptx", mlp, "ptx"), ("mlp_cubin", mlp, "cubin"),
                           ("dyn_batch_fatbin", dyn_batch, "fatbin")):
        path = os.path.join(out_dir, name + ".so")
        cuda_module(mod).export_library(path, fpack_imports=cuda_fatbin.compiled_cuda_packer(fmt, nvcc, ARCHS[fmt]))
        print("%s %d bytes, cuda payload fmt %s" % (path, os.path.getsize(path), fmt))


if __name__ == "__main__":
    main()
