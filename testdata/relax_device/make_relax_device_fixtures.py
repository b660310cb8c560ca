#!/usr/bin/env python3
"""Writes the device-payload fixtures of tests/opencl and tests/cuda: a tiny Relax MLP exported by TVM 0.27
for target "opencl" and for target "cuda" (host "llvm"), and the device module payload of each, cut out of
the export's `__tvm_ffi__library_bin` container (docs/spec/RELAX_FORMAT.md sections 3 and 7).

Run with the pinned TVM venv (CPython 3.11, apache-tvm==0.27.0.post1, apache-tvm-ffi==0.1.15.post2, numpy):
    ~/.cache/sorun/tvm027-venv/bin/python testdata/relax_device/make_relax_device_fixtures.py testdata/relax_device
Writes mlp_opencl.so, mlp_cuda.so, mlp_nvptx.so (the exports) and mlp_opencl.payload, mlp_cuda.payload,
mlp_nvptx.payload (the bytes TVM's "ffi.Module.load_from_bytes.<kind>" receives). No GPU or CUDA driver is
needed: without a driver TVM writes target "cuda"'s module as fmt "cuda" (CUDA C++ source, which sorun
refuses), while target "nvptx" (LLVM's PTX backend) writes a "cuda" module with fmt "ptx".
"""
import ctypes
import os
import struct
import sys

import numpy as np
import tvm
from tvm import relax
from tvm.script import relax as R


def make_mlp(rng):
    w0 = rng.standard_normal((16, 32)).astype("float32")
    b0 = rng.standard_normal((32,)).astype("float32")
    w1 = rng.standard_normal((32, 10)).astype("float32")
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((1, 16), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit(relax.op.matmul(x, relax.const(w0)))
            h = bb.emit(relax.op.add(h, relax.const(b0)))
            h = bb.emit(relax.op.nn.relu(h))
            out = bb.emit_output(relax.op.matmul(h, relax.const(w1)))
        bb.emit_func_output(out)
    return bb.get()


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def u64(self):
        (v,) = struct.unpack_from("<Q", self.data, self.pos)
        self.pos += 8
        return v

    def bytes(self):
        n = self.u64()
        out = self.data[self.pos:self.pos + n]
        assert len(out) == n, "truncated container"
        self.pos += n
        return out


def device_payload(so_path, kind):
    """The payload of the one `kind` module in the export's tree-first container."""
    lib = ctypes.CDLL(so_path)
    sym = ctypes.c_char.in_dll(lib, "__tvm_ffi__library_bin")
    addr = ctypes.addressof(sym)
    (nbytes,) = struct.unpack("<Q", ctypes.string_at(addr, 8))
    r = Reader(ctypes.string_at(addr + 8, nbytes))
    indptr = [r.u64() for _ in range(r.u64())]
    [r.u64() for _ in range(r.u64())]  # child_indices
    found = []
    for _ in range(len(indptr) - 1):
        k = r.bytes().decode()
        if k == "_lib":
            continue
        payload = r.bytes()
        if k == kind:
            found.append(payload)
    assert r.pos == nbytes, "trailing bytes in the container"
    assert len(found) == 1, f"{so_path}: {len(found)} '{kind}' modules"
    return found[0]


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for name, kind, target in (("opencl", "opencl", "opencl"), ("cuda", "cuda", "cuda"), ("nvptx", "cuda", "nvptx")):
        rng = np.random.default_rng(17)
        mod = make_mlp(rng)
        tgt = tvm.target.Target(target, host="llvm")
        with tgt:
            mod = relax.get_pipeline("zero")(mod)
            mod = tvm.s_tir.dlight.ApplyDefaultSchedule(tvm.s_tir.dlight.gpu.Fallback())(mod)
        ex = relax.build(mod, target=tgt)
        so_path = os.path.join(out_dir, f"mlp_{name}.so")
        ex.export_library(so_path)
        payload = device_payload(os.path.abspath(so_path), kind)
        with open(os.path.join(out_dir, f"mlp_{name}.payload"), "wb") as f:
            f.write(payload)
        print(so_path, os.path.getsize(so_path), f"{kind} payload", len(payload))


if __name__ == "__main__":
    main()
