"""Builds the TVM 0.16 Relax models of the Relax interop job (tests/interop/README.md, "Relax VM exports").

usage: python relax_models_016.py OUT [--only NAME[,NAME...]]
  (the hhb-tvm venv of install_tvm.sh: hhb-tvm 3.2.3 = TVM 0.16.dev0, CPython 3.10)

The same models, weights, inputs and folder layout as relax_models.py (OUT/<name>/ with model.so,
input_<k>.npy, output_<k>.npy, meta.json), exported by TVM 0.16's relax.build + export_library: the legacy
container (`__tvm_dev_mblob`, root `relax.Executable`, kernels with the packed-C ABI). Target
"llvm -mtriple=x86_64-linux-gnu": hhb's default LLVM triple is riscv64.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import relax_models as rm  # noqa: E402

X86 = "llvm -mtriple=x86_64-linux-gnu"
MODELS = ["mlp", "cnn"]


def make_016(name):
    """The model NAME of relax_models.make, built with TVM 0.16's zero pipeline (no fused variants)."""
    if name not in MODELS:
        raise ValueError("unknown TVM 0.16 model %r (known: %s)" % (name, ", ".join(MODELS)))
    mod, inputs, _, extra = rm.make(name)
    return mod, inputs, {}, extra


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--only", default=",".join(MODELS), help="comma-separated model names")
    args = ap.parse_args()
    rc = 0
    for name in [n for n in args.only.split(",") if n]:
        try:
            meta = rm.build_one(args.out, name, make_fn=make_016, cpu_target=X86)
            print("built %-12s %5.1f s  inputs %s (TVM %s)" % (name, meta["build_seconds"], meta["inputs"],
                                                              meta["tvm"]), flush=True)
        except Exception as e:  # noqa: BLE001  (one model's failure is reported; the others still build)
            print("FAILED %s: %s: %s" % (name, type(e).__name__, str(e).strip().splitlines()[-1:]), flush=True)
            rc = 1
    sys.exit(rc)


if __name__ == "__main__":
    main()
