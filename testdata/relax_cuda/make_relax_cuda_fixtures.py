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
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import tvm
from tvm import relax
from tvm.runtime import _ffi_api

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "interop"))
import relax_models as rm  # noqa: E402

BLOB_SYMBOL = "__tvm_ffi__library_bin"  # TVM 0.22+ container: tree first (docs/spec/RELAX_FORMAT.md section 3)

# nvcc arguments per payload fmt.
NVCC_ARGS = {
    "ptx": ["--ptx", "-arch=compute_80"],  # the target's "arch" below is sm_80 too
    "cubin": ["--cubin", "-arch=sm_90"],
    "fatbin": ["--fatbin", "-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=[sm_90,compute_90]"],
}


def find_nvcc():
    for candidate in (os.environ.get("NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    sys.exit("make_relax_cuda_fixtures.py: no nvcc (set NVCC or put the CUDA Toolkit's bin on PATH)")


class Reader:
    """Little-endian reads over bytes, in TVM's stream encoding (u64 lengths)."""

    def __init__(self, data, what):
        self.data, self.pos, self.what = data, 0, what

    def take(self, n):
        if self.pos + n > len(self.data):
            raise ValueError("%s: truncated at byte %d (need %d)" % (self.what, self.pos, n))
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def bytes(self):
        return self.take(self.u64())

    def u64s(self):
        return [self.u64() for _ in range(self.u64())]


def pack_bytes(b):
    return struct.pack("<Q", len(b)) + b


def split_cuda_payload(payload):
    """(fmt, kernel table bytes, kernel names, data) of a "cuda" payload in the tvm-ffi grammar:
    string fmt; u64 n; n x (string key, FunctionInfo{string name; vector<DLDataType> arg_types;
    vector<string> launch_param_tags; vector<i32> arg_extra_tags}); string data."""
    r = Reader(payload, "cuda payload")
    fmt = r.bytes().decode()
    table_start = r.pos
    names = []
    for _ in range(r.u64()):
        names.append(r.bytes().decode())
        r.bytes()  # FunctionInfo.name
        r.take(4 * r.u64())  # arg_types
        for _ in range(r.u64()):
            r.bytes()  # launch_param_tags
        r.take(4 * r.u64())  # arg_extra_tags
    table = payload[table_start:r.pos]
    data = r.bytes()
    if r.pos != len(payload):
        raise ValueError("cuda payload: %d trailing bytes" % (len(payload) - r.pos))
    return fmt, table, names, data


def compile_cuda(source, fmt, kernels, nvcc):
    """nvcc's image of `source` in `fmt`; checks that every kernel is a launchable .entry in the PTX."""
    with tempfile.TemporaryDirectory() as tmp:
        cu = os.path.join(tmp, "kernels.cu")
        with open(cu, "wb") as f:
            f.write(source)
        ptx = os.path.join(tmp, "kernels.ptx")
        subprocess.check_call([nvcc, "-w"] + NVCC_ARGS["ptx"] + ["-o", ptx, cu])  # -w: TVM's unused cse_v*
        with open(ptx) as f:
            entries = set(re.findall(r"\.visible\s+\.entry\s+(\w+)\(", f.read()))
        missing = sorted(set(kernels) - entries)
        if missing:
            raise ValueError("nvcc's PTX has no .entry for %s" % missing)
        out = ptx if fmt == "ptx" else os.path.join(tmp, "kernels." + fmt)
        if fmt != "ptx":
            subprocess.check_call([nvcc, "-w"] + NVCC_ARGS[fmt] + ["-o", out, cu])
        with open(out, "rb") as f:
            return f.read()


def rewrite_container(blob, fmt, nvcc):
    """The length-prefixed tree-first container `blob` with its one "cuda" payload compiled to `fmt`."""
    (nbytes,) = struct.unpack_from("<Q", blob, 0)
    if nbytes != len(blob) - 8:
        raise ValueError("%s: length prefix %d, %d bytes follow" % (BLOB_SYMBOL, nbytes, len(blob) - 8))
    r = Reader(blob[8:], BLOB_SYMBOL)
    indptr, children = r.u64s(), r.u64s()
    out = struct.pack("<Q", len(indptr)) + b"".join(struct.pack("<Q", v) for v in indptr)
    out += struct.pack("<Q", len(children)) + b"".join(struct.pack("<Q", v) for v in children)
    rewritten = 0
    for _ in range(len(indptr) - 1):
        kind = r.bytes()
        out += pack_bytes(kind)
        if kind == b"_lib":
            continue
        payload = r.bytes()
        if kind == b"cuda":
            old_fmt, table, kernels, source = split_cuda_payload(payload)
            if old_fmt != "cuda":
                raise ValueError("the cuda module has fmt %r, expected CUDA source ('cuda')" % old_fmt)
            image = compile_cuda(source, fmt, kernels, nvcc)
            payload = pack_bytes(fmt.encode()) + table + pack_bytes(image)
            rewritten += 1
        out += pack_bytes(payload)
    if r.pos != len(r.data):
        raise ValueError("%s: %d trailing bytes" % (BLOB_SYMBOL, len(r.data) - r.pos))
    if rewritten != 1:
        raise ValueError("%s: %d cuda modules, expected 1" % (BLOB_SYMBOL, rewritten))
    return struct.pack("<Q", len(out)) + out


def compiled_cuda_packer(fmt, nvcc):
    """An export_library `fpack_imports` hook: TVM's C container with the cuda payload compiled to `fmt`."""

    def pack(module, is_system_lib, prefix, workspace_dir):
        source = _ffi_api.ModulePackImportsToC(module, is_system_lib, prefix)
        array = re.search(r"(%s\[)(\d+)(\] = \{)(.*?)(\};)" % BLOB_SYMBOL, source, re.S)
        if array is None:
            raise ValueError("ModulePackImportsToC wrote no %s array" % BLOB_SYMBOL)
        blob = bytes(int(x, 16) for x in re.findall(r"0x([0-9a-fA-F]{2})", array.group(4)))
        if len(blob) != int(array.group(2)):
            raise ValueError("%s: %s bytes declared, %d listed" % (BLOB_SYMBOL, array.group(2), len(blob)))
        new = rewrite_container(blob, fmt, nvcc)
        rows = ",\n".join("  " + ",".join("0x%02x" % b for b in new[i:i + 20]) for i in range(0, len(new), 20))
        source = (source[:array.start()] + array.group(1) + str(len(new)) + array.group(3) + "\n" + rows + ",\n" +
                  array.group(5) + source[array.end():])
        path = os.path.join(workspace_dir, prefix + "devc.c")
        with open(path, "w") as f:
            f.write(source)
        return path

    return pack


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
        cuda_module(mod).export_library(path, fpack_imports=compiled_cuda_packer(fmt, nvcc))
        print("%s %d bytes, cuda payload fmt %s" % (path, os.path.getsize(path), fmt))


if __name__ == "__main__":
    main()
