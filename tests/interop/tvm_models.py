"""Builds the interop test models with TVM (Relay + graph executor) and exports every artifact form.

usage: python tvm_models.py OUT_DIR MODEL [MODEL ...]       (the Python of tests/interop/install_tvm.sh)
       python tvm_models.py --list

Every model is built from seeded random weights (nothing is downloaded: TOPHUB_LOCATION=NONE and any
call to tvm.contrib.download fails the build) with target "llvm -mtriple=x86_64-linux-gnu" (hhb-tvm's
default LLVM triple is riscv64) or Target("opencl", host=that llvm target). For MODEL it writes
OUT_DIR/MODEL/:

  deploy.so              lib.export_library(): the single library (GraphExecutorFactory -> _lib [-> opencl])
  lib.so, lib.tar        lib.get_lib().export_library(): the kernel library of the three-file deployment
                         (lib.tar is what TVM writes for ".tar": a gzip-compressed tar of lib0.o [+ devc.o])
  graph.json, model.params   the other two files (get_graph_json(), save_param_dict(get_params()))
  deploy.tar             (small models) the factory exported as ".tar"
  input_<name>.npy       seeded inputs
  reference_output_<i>.npy   TVM's graph executor output: deploy.so loaded by tvm.runtime.load_module and
                         run on tvm.cpu(). For an OpenCL model (TVM here has no OpenCL runtime) it is the
                         output of the llvm build of the same model and weights.
  manifest.json          what was built: inputs, outputs, reference, TVM version, build seconds

Prints one JSON line per model: {"model", "ok", "seconds", "error"?}. Exit 0 when every model built.
"""
import json
import os
import sys
import time
import traceback

os.environ.setdefault("TOPHUB_LOCATION", "NONE")  # no pre-tuned logs from the network

LLVM_TARGET = "llvm -mtriple=x86_64-linux-gnu"


def _forbid_downloads():
    import tvm.contrib.download as download

    def refuse(url, *args, **kwargs):
        raise RuntimeError("interop models must not download anything (attempted: %s)" % url)

    download.download = refuse
    download.download_testdata = refuse


# ---------------------------------------------------------------------------------------------------
# Model definitions: (relay IRModule, params dict of numpy arrays, inputs dict of numpy arrays)
# ---------------------------------------------------------------------------------------------------


def mlp():
    from tvm import relay
    import numpy as np

    rng = np.random.RandomState(0)
    x = relay.var("data", shape=(1, 16), dtype="float32")
    ws = {
        "w1": rng.uniform(-1, 1, (32, 16)),
        "b1": rng.uniform(-1, 1, (32,)),
        "w2": rng.uniform(-1, 1, (10, 32)),
        "b2": rng.uniform(-1, 1, (10,)),
    }
    v = {k: relay.var(k, shape=a.shape, dtype="float32") for k, a in ws.items()}
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, v["w1"]), v["b1"]))
    y = relay.nn.bias_add(relay.nn.dense(y, v["w2"]), v["b2"])
    params = {k: a.astype("float32") for k, a in ws.items()}
    inputs = {"data": np.random.RandomState(42).uniform(-1, 1, (1, 16)).astype("float32")}
    return _module([x] + list(v.values()), y), params, inputs


def multi_output():
    """Four outputs (one int64), an int32 input, a float16 param, a reshape that becomes __nop, a
    three-output split (fused away), take with runtime indices."""
    from tvm import relay
    import numpy as np

    rng = np.random.RandomState(1)
    x = relay.var("data", shape=(1, 4, 4), dtype="float32")
    idx = relay.var("idx", shape=(3,), dtype="int32")
    w = relay.var("w", shape=(12, 16), dtype="float32")
    h = relay.var("h16", shape=(12,), dtype="float16")
    y = relay.nn.relu(relay.nn.dense(relay.reshape(x, (1, 16)), w))
    y = relay.add(y, relay.cast(h, "float32"))
    parts = relay.split(y, 3, axis=1)
    out = relay.Tuple([
        relay.reshape(relay.exp(parts[0]), (2, 2)),
        relay.sigmoid(parts[1]),
        relay.take(parts[2], idx, axis=1),
        relay.cast(idx, "int64"),
    ])
    params = {"w": rng.uniform(-1, 1, (12, 16)).astype("float32"),
              "h16": rng.uniform(-1, 1, (12,)).astype("float16")}
    inputs = {"data": np.random.RandomState(42).uniform(-1, 1, (1, 4, 4)).astype("float32"),
              "idx": np.array([3, 0, 2], dtype="int32")}
    return _module([x, idx, w, h], out), params, inputs


def sort_topk():
    """sort, argsort (descending, int64) and topk (k 3, both) on small integers (ties): TVM lowers them on CPU
    to extern calls of tvm.contrib.sort.* that the kernels make through the runtime's global registry."""
    from tvm import relay
    import numpy as np

    x = relay.var("data", shape=(5, 12), dtype="float32")
    top = relay.topk(x, k=3, axis=0, ret_type="both", is_ascend=False, dtype="int32")
    out = relay.Tuple([
        relay.sort(x, axis=-1, is_ascend=True),
        relay.argsort(x, axis=-1, is_ascend=False, dtype="int64"),
        top[0],
        top[1],
    ])
    inputs = {"data": np.random.RandomState(7).randint(0, 4, (5, 12)).astype("float32")}
    return _module([x], out), {}, inputs


def cnn():
    """conv3x3+bias+relu, max-pool, strided conv3x3+bias+relu, global average pool, dense."""
    from tvm import relay
    import numpy as np

    rng = np.random.RandomState(3)
    x = relay.var("data", shape=(1, 3, 32, 32), dtype="float32")
    params, args = {}, [x]

    def conv(y, name, cin, cout, stride):
        w = relay.var(name + "_w", shape=(cout, cin, 3, 3), dtype="float32")
        b = relay.var(name + "_b", shape=(cout,), dtype="float32")
        params[w.name_hint] = rng.normal(0, np.sqrt(2.0 / (cin * 9)), (cout, cin, 3, 3)).astype("float32")
        params[b.name_hint] = rng.uniform(-0.1, 0.1, (cout,)).astype("float32")
        args.extend([w, b])
        y = relay.nn.conv2d(y, w, strides=(stride, stride), padding=(1, 1), channels=cout, kernel_size=(3, 3))
        return relay.nn.relu(relay.nn.bias_add(y, b))

    y = conv(x, "c1", 3, 16, 1)
    y = relay.nn.max_pool2d(y, (2, 2), (2, 2))
    y = conv(y, "c2", 16, 32, 2)
    y = relay.nn.batch_flatten(relay.nn.global_avg_pool2d(y))
    fw = relay.var("fc_w", shape=(10, 32), dtype="float32")
    params["fc_w"] = rng.normal(0, 0.3, (10, 32)).astype("float32")
    args.append(fw)
    y = relay.nn.dense(y, fw)
    inputs = {"data": np.random.RandomState(42).uniform(-1, 1, (1, 3, 32, 32)).astype("float32")}
    return _module(args, y), params, inputs


def _testing_workload(which):
    """relay.testing's ResNet-18 / MobileNet with the final softmax removed and every weight re-drawn
    from a seeded, well-scaled distribution: relay.testing's own init gives MobileNet logits of ~1e-19
    and a constant softmax, useless for comparing two runtimes."""
    import numpy as np
    from tvm import relay
    import tvm.relay.testing  # noqa: F401

    shape = (1, 3, 224, 224)
    if which == "resnet18":
        mod, params = relay.testing.resnet.get_workload(num_layers=18, batch_size=1, image_shape=shape[1:])
    else:
        mod, params = relay.testing.mobilenet.get_workload(batch_size=1, image_shape=shape[1:])
    main = mod["main"]
    body = main.body
    if not (isinstance(body, relay.Call) and getattr(body.op, "name", "") == "nn.softmax"):
        raise RuntimeError("%s: expected the workload to end in nn.softmax" % which)
    mod = _module(list(main.params), body.args[0])
    rng = np.random.RandomState(7)
    scaled = {}
    for name in sorted(params):
        shp = params[name].shape
        if name.endswith(("gamma", "moving_var")):
            v = rng.uniform(0.5, 1.5, shp)
        elif name.endswith(("beta", "moving_mean", "bias")):
            v = rng.uniform(-0.1, 0.1, shp)
        else:  # He init over the fan-in
            fan_in = int(np.prod(shp[1:])) if len(shp) > 1 else 1
            v = rng.normal(0, np.sqrt(2.0 / max(fan_in, 1)), shp)
        scaled[name] = v.astype(params[name].dtype)
    inputs = {"data": np.random.RandomState(42).uniform(-1, 1, shape).astype("float32")}
    return mod, scaled, inputs


def resnet18():
    return _testing_workload("resnet18")


def mobilenet():
    return _testing_workload("mobilenet")


def _module(args, body):
    import tvm
    from tvm import relay

    return tvm.IRModule.from_expr(relay.Function(args, body))


# name -> (definition, variant). Variants: "llvm" (CPU), "opencl" (device code for OpenCL, host llvm;
# the reference comes from the llvm build), "link_params" (graph executor with link-params: weights
# compiled into the kernels), "system_lib" (runtime system-lib: the library registers its blob with
# TVMBackendRegisterSystemLibSymbol from a constructor).
MODELS = {
    "mlp": (mlp, "llvm"),
    "multi_output": (multi_output, "llvm"),
    "sort_topk": (sort_topk, "llvm"),
    "resnet18": (resnet18, "llvm"),
    "mobilenet": (mobilenet, "llvm"),
    "mlp_opencl": (mlp, "opencl"),
    "cnn_opencl": (cnn, "opencl"),
    "mlp_link_params": (mlp, "link_params"),
    "mlp_system_lib": (mlp, "system_lib"),
}
# Small enough to export the factory as a .tar too (linking a .tar costs a compiler run at load).
DEPLOY_TAR = {"mlp", "multi_output"}


def _relay_build(mod, params, variant):
    import tvm
    from tvm import relay
    from tvm.relay.backend import Executor, Runtime

    kwargs = {}
    target = LLVM_TARGET
    if variant == "opencl":
        target = tvm.target.Target("opencl", host=LLVM_TARGET)
    elif variant == "link_params":
        kwargs["executor"] = Executor("graph", {"link-params": True})
    elif variant == "system_lib":
        kwargs["runtime"] = Runtime("cpp", {"system-lib": True})
    with tvm.transform.PassContext(opt_level=3):
        return relay.build(mod, target=target, params=params, **kwargs)


def _run_tvm(lib_path, inputs):
    """TVM's deploy path: load the library, create the executor from the 'default' factory, run."""
    import tvm
    from tvm.contrib import graph_executor

    m = graph_executor.GraphModule(tvm.runtime.load_module(lib_path)["default"](tvm.cpu()))
    for k, v in inputs.items():
        m.set_input(k, v)
    m.run()
    return [m.get_output(i).numpy() for i in range(m.get_num_outputs())]


def build(name, out_dir):
    import numpy as np
    import tvm

    define, variant = MODELS[name]
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    t0 = time.time()
    mod, params, inputs = define()
    lib = _relay_build(mod, params, variant)
    t_build = time.time() - t0
    lib.export_library(os.path.join(d, "deploy.so"))
    lib.get_lib().export_library(os.path.join(d, "lib.so"))
    lib.get_lib().export_library(os.path.join(d, "lib.tar"))
    if name in DEPLOY_TAR:
        lib.export_library(os.path.join(d, "deploy.tar"))
    with open(os.path.join(d, "graph.json"), "w") as f:
        f.write(lib.get_graph_json())
    with open(os.path.join(d, "model.params"), "wb") as f:
        f.write(tvm.runtime.save_param_dict(lib.get_params()))
    input_files = {}
    for k, v in inputs.items():
        input_files[k] = "input_%s.npy" % k
        np.save(os.path.join(d, input_files[k]), v)

    if variant == "opencl":
        # TVM cannot run OpenCL here (USE_OPENCL=OFF): the reference is the llvm build of the same
        # model and weights, run by TVM.
        ref_lib = _relay_build(mod, params, "llvm")
        ref_path = os.path.join(d, "reference_llvm_deploy.so")
        ref_lib.export_library(ref_path)
        outputs = _run_tvm(ref_path, inputs)
        reference = "TVM graph executor, llvm build of the same model and weights (TVM has no OpenCL runtime here)"
    else:
        outputs = _run_tvm(os.path.join(d, "deploy.so"), inputs)
        reference = "TVM graph executor on deploy.so (tvm.runtime.load_module + ['default'](tvm.cpu()))"
    output_files = []
    for i, o in enumerate(outputs):
        output_files.append("reference_output_%d.npy" % i)
        np.save(os.path.join(d, output_files[-1]), o)

    manifest = {
        "model": name,
        "variant": variant,
        "target": LLVM_TARGET if variant != "opencl" else "opencl -host=" + LLVM_TARGET,
        "tvm_version": tvm.__version__,
        "llvm_version": tvm.support.libinfo().get("LLVM_VERSION", ""),
        "inputs": input_files,
        "input_shapes": {k: [list(v.shape), str(v.dtype)] for k, v in inputs.items()},
        "outputs": output_files,
        "output_shapes": [[list(o.shape), str(o.dtype)] for o in outputs],
        "params": sorted(lib.get_params().keys()),
        "reference": reference,
        "build_seconds": round(t_build, 2),
        "total_seconds": round(time.time() - t0, 2),
        "deploy_tar": name in DEPLOY_TAR,
    }
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def main(argv):
    if argv[1:] == ["--list"]:
        print(" ".join(MODELS))
        return 0
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir, names = argv[1], argv[2:]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print("unknown model(s): %s (known: %s)" % (", ".join(unknown), ", ".join(MODELS)), file=sys.stderr)
        return 2
    import tvm  # noqa: F401  (import errors are a setup failure, not a model failure)

    _forbid_downloads()
    ok = True
    for name in names:
        t0 = time.time()
        try:
            build(name, out_dir)
            print(json.dumps({"model": name, "ok": True, "seconds": round(time.time() - t0, 2)}), flush=True)
        except Exception as e:  # noqa: BLE001  (reported per model)
            ok = False
            tb = traceback.format_exc()
            with open(os.path.join(out_dir, name + ".build_error.txt"), "w") as f:
                f.write(tb)
            last = [l for l in str(e).strip().splitlines() if l.strip()]
            print(json.dumps({"model": name, "ok": False, "seconds": round(time.time() - t0, 2),
                              "error": (last[-1] if last else type(e).__name__)[:500]}), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
