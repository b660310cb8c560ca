#!/usr/bin/env python3
"""Writes the Relax system-lib fixtures of tests/embedded (docs/embedded.md, "System-lib models"): the MLP of
tests/interop/relax_models.py built by TVM 0.27 with relax.build(..., system_lib=True) and exported as a
.tar, whose two objects are kept as TVM wrote them, for x86-64 and for aarch64 (NEON):

  <name>.<arch>.kernels.o  TVM's lib0.o: the kernels (__tvm_ffi_<prefix><kernel>) and a global constructor
                           registering them and <prefix>__tvm_ffi__library_ctx with
                           TVMFFIEnvModRegisterSystemLibSymbol
  <name>.<arch>.blob.o     TVM's <prefix>devc.o: <prefix>__tvm_ffi__library_bin (the module blob carrying
                           the relax.VMExecutable) and a global constructor registering it

for <name> "mlp" (no prefix, TVM's default) and "mlp_prefixed" (system_lib_prefix "relax_mlp_"), and, for
comparison, the same model as an ordinary x86-64 export: mlp.so, with mlp.input_0.npy and mlp.output_0.npy
(TVM's own run of mlp.so by relax.VirtualMachine on tvm.cpu()).

Run with the pinned TVM 0.27 venv (tests/interop/install_tvm027.sh):
    ~/.cache/sorun/tvm027-venv/bin/python testdata/relax_system_lib/make_relax_system_lib_fixtures.py \
        testdata/relax_system_lib
"""
import os
import shutil
import sys
import tarfile
import tempfile

import tvm
from tvm import relax

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "interop"))
import relax_models as rm  # noqa: E402

TARGETS = {
    "x86_64": tvm.target.Target("llvm"),
    "aarch64": tvm.target.Target({"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": ["+neon"]}),
}
# TVM 0.27's IRModule.get_attr fails on strings of up to 7 bytes (tvm-ffi's small-string form), which
# relax.build's system_lib path reads: a prefix must be 8 bytes or longer (or empty).
PREFIXES = {"mlp": "", "mlp_prefixed": "relax_mlp_"}


def export_system_lib(mod, target, prefix, tar):
    """TVM 0.27's Relax system-lib build of mod for target, exported as a .tar: lib0.o and <prefix>devc.o."""
    if prefix:  # "" is TVM's default: no prefix
        mod = mod.with_attr("system_lib_prefix", prefix)
    relax.build(mod, target, system_lib=True).export_library(tar)


def system_lib_objects(mod, target, prefix, out_dir, stem):
    """export_system_lib, then the kernels' and the blob's object copied out of the .tar."""
    with tempfile.TemporaryDirectory() as tmp:
        tar = os.path.join(tmp, "model.tar")
        export_system_lib(mod, target, prefix, tar)
        with tarfile.open(tar) as archive:
            archive.extractall(tmp)
        names = sorted(os.listdir(tmp))
        assert names == sorted(["model.tar", "lib0.o", prefix + "devc.o"]), names
        for piece, name in (("kernels", "lib0.o"), ("blob", prefix + "devc.o")):
            path = os.path.join(out_dir, "%s.%s.o" % (stem, piece))
            shutil.copyfile(os.path.join(tmp, name), path)
            print("%s %d bytes" % (path, os.path.getsize(path)))


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else HERE
    mod = rm.mlp_module(rm.seeded("mlp"))[0]
    inputs = [rm.seeded("mlp.input").standard_normal((1, 16)).astype("float32")]
    path = rm.build_export(mod, os.path.join(out_dir, "mlp.so"))
    rm.save_arrays(os.path.join(out_dir, "mlp."), inputs, rm.tvm_reference(path, inputs))
    print("%s %d bytes" % (path, os.path.getsize(path)))
    for name, prefix in PREFIXES.items():
        for arch, target in TARGETS.items():
            system_lib_objects(mod, target, prefix, out_dir, "%s.%s" % (name, arch))


if __name__ == "__main__":
    main()
