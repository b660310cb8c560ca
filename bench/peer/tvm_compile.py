"""Compiles the peer benchmark's ONNX models with TVM 0.16 (Relay's ONNX frontend) into deploy.so files.

usage: python tvm_compile.py MODEL_DIR      (the TVM venv's Python, with the peer venv's `onnx` importable)

For MODEL_DIR/model.onnx writes, next to it:
  generic/deploy.so   target "llvm -mtriple=x86_64-linux-gnu" (what tests/interop builds: baseline x86-64)
  host/deploy.so      the same plus -mcpu=<this machine's CPU> (tvm.target.codegen.llvm_get_system_cpu())
  build.json          targets, host CPU name, build seconds
opt_level 3, untuned schedules (TOPHUB_LOCATION=NONE: nothing is downloaded). The model is run by the
other runtimes; TVM's output is checked against them by peer_bench.py.
"""
import json
import os
import sys
import time

os.environ.setdefault("TOPHUB_LOCATION", "NONE")

GENERIC = "llvm -mtriple=x86_64-linux-gnu"


def main(argv):
    import onnx
    import tvm
    from tvm import relay
    from tvm.target import codegen

    d = argv[1]
    model = onnx.load(os.path.join(d, "model.onnx"))
    mod, params = relay.frontend.from_onnx(model, shape={"data": (1, 3, 224, 224)}, freeze_params=True)
    cpu = codegen.llvm_get_system_cpu()
    info = {"tvm": tvm.__version__, "host_cpu": cpu, "targets": {}}
    for variant, target in (("generic", GENERIC), ("host", GENERIC + " -mcpu=" + cpu)):
        t0 = time.time()
        with tvm.transform.PassContext(opt_level=3):
            lib = relay.build(mod, target=target, params=params)
        os.makedirs(os.path.join(d, variant), exist_ok=True)
        lib.export_library(os.path.join(d, variant, "deploy.so"))
        info["targets"][variant] = {"target": target, "seconds": round(time.time() - t0, 1)}
        print("%s %s: %.1f s" % (os.path.basename(d), variant, time.time() - t0), flush=True)
    json.dump(info, open(os.path.join(d, "build.json"), "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
