"""Builds the Relax models of the Relax interop job with TVM 0.27 (tests/interop/README.md, "Relax VM exports").

usage: python relax_models.py OUT [--jobs N] [--only NAME[,NAME...]]
  (the venv of install_tvm027.sh; one model in this process with --only NAME --jobs 1)

Per model a folder OUT/<name>/ with model.so (relax.build + export_library, or tvm.compile for the fused
pipelines), input_<k>.npy (main's parameters in order), output_<k>.npy (TVM's reference: the flattened
return value of main, depth-first, as run by relax.VirtualMachine(load_module(model.so), tvm.cpu())) and
meta.json (input names in order, which inputs are weights, device, TVM version, build seconds). Weights
and inputs come from numpy generators seeded by the model's name, so a build is reproducible.

The model builders and reference helpers are also used by testdata/relax/make_relax_fixtures.py, and the
builders (those that need no TVM 0.27 API) by relax_models_016.py: they run with TVM 0.16 and 0.27.
"""
import argparse
import json
import os
import subprocess
import sys
import time
import zlib

import numpy as np
import tvm
from tvm import relax
from tvm.script import relax as R

TIR = getattr(tvm, "tirx", None) or tvm.tir  # TVM 0.27 renamed tvm.tir to tvm.tirx
CPU_TARGET = "llvm"


def seeded(name):
    """The numpy generator of one model: seeded by its name, independent of build order."""
    return np.random.default_rng(zlib.crc32(name.encode()))


# ---------------------------------------------------------------------------------------------------
# Model builders: rng -> (IRModule, [input arrays]). Weights are Relax constants unless noted.

def mlp_module(rng, params_as_inputs=False):
    """x[1,16] -> matmul 16x32 + bias -> relu -> matmul 32x10 + bias. With params_as_inputs the four
    weights are main's parameters 2-5 (attribute num_input = 1, the keep_params_in_input style)."""
    w0 = rng.standard_normal((16, 32)).astype("float32")
    b0 = rng.standard_normal((32,)).astype("float32")
    w1 = rng.standard_normal((32, 10)).astype("float32")
    b1 = rng.standard_normal((10,)).astype("float32")
    weights = [w0, b0, w1, b1]
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((1, 16), "float32"))
    if params_as_inputs:
        wvars = [relax.Var(n, R.Tensor(w.shape, "float32")) for n, w in zip(["w0", "b0", "w1", "b1"], weights)]
        args = [x] + wvars
    else:
        wvars = [relax.const(w) for w in weights]
        args = [x]
    with bb.function("main", args):
        with bb.dataflow():
            h = bb.emit(relax.op.matmul(x, wvars[0]))
            h = bb.emit(relax.op.add(h, wvars[1]))
            h = bb.emit(relax.op.nn.relu(h))
            h = bb.emit(relax.op.matmul(h, wvars[2]))
            out = bb.emit_output(relax.op.add(h, wvars[3]))
        bb.emit_func_output(out)
    mod = bb.get()
    if params_as_inputs:
        mod["main"] = mod["main"].with_attr("num_input", 1)
    return mod, weights


def dyn_batch_module(rng):
    """x[n,8] (n dynamic) -> matmul 8x4 + bias -> relu = h; returns the tuple (h, softmax(h))."""
    w = rng.standard_normal((8, 4)).astype("float32")
    b = rng.standard_normal((4,)).astype("float32")
    n = TIR.Var("n", "int64")
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((n, 8), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit(relax.op.matmul(x, relax.const(w)))
            h = bb.emit(relax.op.add(h, relax.const(b)))
            h = bb.emit(relax.op.nn.relu(h))
            s = bb.emit(relax.op.nn.softmax(h))
            out = bb.emit_output(relax.Tuple([h, s]))
        bb.emit_func_output(out)
    return bb.get()


def row_argmax_module():
    """x[n,8] (n dynamic) -> (argmax over axis 1: int64[n], max over axis 1: float32[n]): one value per row,
    so a server batching rows serves each output as a 0-d tensor per row."""
    n = TIR.Var("n", "int64")
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((n, 8), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            index = bb.emit(relax.op.argmax(x, axis=1))
            value = bb.emit(relax.op.max(x, axis=1))
            out = bb.emit_output(relax.Tuple([index, value]))
        bb.emit_func_output(out)
    return bb.get()


def cnn_module(rng):
    """x[1,3,16,16] -> conv2d 3x3 (8 channels, pad 1) + bias -> relu -> max_pool 2x2 -> reshape [1,512]
    -> matmul 512x10 + bias -> softmax. The reshape lowers to vm.builtin.reshape."""
    wc = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype("float32")
    bc = (rng.standard_normal((1, 8, 1, 1)) * 0.1).astype("float32")
    wf = (rng.standard_normal((512, 10)) * 0.05).astype("float32")
    bf = (rng.standard_normal((10,)) * 0.1).astype("float32")
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((1, 3, 16, 16), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit(relax.op.nn.conv2d(x, relax.const(wc), padding=(1, 1)))
            h = bb.emit(relax.op.add(h, relax.const(bc)))
            h = bb.emit(relax.op.nn.relu(h))
            h = bb.emit(relax.op.nn.max_pool2d(h, pool_size=(2, 2), strides=(2, 2)))
            h = bb.emit(relax.op.reshape(h, (1, 512)))
            h = bb.emit(relax.op.matmul(h, relax.const(wf)))
            h = bb.emit(relax.op.add(h, relax.const(bf)))
            out = bb.emit_output(relax.op.nn.softmax(h))
        bb.emit_func_output(out)
    return bb.get()


def tir_par_module():
    """A hand-written TIR kernel `scale_sum` called by main through call_tir: y[i] = sum_j 2 * x[i, j] with
    the outer loop T.parallel (the library defines __TVMBackendParallelLaunch) and a 64x256 float32
    scratch buffer (64 KiB: too big for the stack, so __TVMBackendAllocWorkspace / FreeWorkspace)."""
    from tvm.script import tirx as T  # noqa: N812  (TVM 0.27 only)

    @T.prim_func
    def scale_sum(x: T.Buffer((64, 256), "float32"), y: T.Buffer((64,), "float32")):
        T.func_attr({"global_symbol": "scale_sum", "tirx.noalias": True})
        tmp = T.decl_buffer((64, 256), "float32")
        for i in T.parallel(64):
            for j in range(256):
                tmp[i, j] = x[i, j] * T.float32(2)
            y[i] = T.float32(0)
            for j in range(256):
                y[i] = y[i] + tmp[i, j]

    bb = relax.BlockBuilder()
    gv = bb.add_func(scale_sum, "scale_sum")
    x = relax.Var("x", R.Tensor((64, 256), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(relax.call_tir(gv, [x], R.Tensor((64,), "float32")))
        bb.emit_func_output(out)
    return bb.get()


def sort_topk_module():
    """x[6,16] -> sort (ascending, last axis), argsort (descending, int64), topk (k 4, axis 0, both, largest,
    int32 indices): TVM lowers them on CPU to extern calls of tvm.contrib.sort.* inside the kernels, which
    the runtime serves (runtime/contrib/sort.h). Fed with small integers, so ties test the orderings."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((6, 16), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            s = bb.emit(relax.op.sort(x, axis=-1, descending=False))
            a = bb.emit(relax.op.argsort(x, axis=-1, descending=True, dtype="int64"))
            t = bb.emit(relax.op.topk(x, k=4, axis=0, ret_type="both", largest=True, dtype="int32"))
            out = bb.emit_output(relax.Tuple([s, a, relax.TupleGetItem(t, 0), relax.TupleGetItem(t, 1)]))
        bb.emit_func_output(out)
    return bb.get()


def prim_scale_module():
    """x[4,8] and an R.Prim("int64") scalar k -> call_tir of a hand-written kernel y = x * float(k): a scalar
    parameter (vm.builtin.check_prim_value_info) passed on to a kernel as an int."""
    from tvm.script import tirx as T  # noqa: N812  (TVM 0.27 only)

    @T.prim_func
    def scale(x: T.Buffer((4, 8), "float32"), k: T.int64, y: T.Buffer((4, 8), "float32")):
        T.func_attr({"global_symbol": "scale", "tirx.noalias": True})
        for i in range(4):
            for j in range(8):
                y[i, j] = x[i, j] * T.Cast("float32", k)

    bb = relax.BlockBuilder()
    gv = bb.add_func(scale, "scale")
    x = relax.Var("x", R.Tensor((4, 8), "float32"))
    k = relax.Var("k", R.Prim("int64"))
    with bb.function("main", [x, k]):
        out = bb.emit(relax.call_tir(gv, [x, k], R.Tensor((4, 8), "float32")))
        bb.emit_func_output(out)
    return bb.get()


def onnx_cnn_model(rng):
    """An ONNX CNN built with onnx.helper: Conv+BN+Relu, MaxPool, a residual Conv+Add+Relu,
    ReduceMean over H,W (global pool), Gemm, Softmax. Input "input" [1,3,16,16]."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    def init(name, shape, scale):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype("float32"), name)

    inits = [
        init("c1_w", (8, 3, 3, 3), 0.3), init("c1_b", (8,), 0.1),
        numpy_helper.from_array((1.0 + 0.1 * rng.standard_normal(8)).astype("float32"), "bn_scale"),
        init("bn_bias", (8,), 0.1), init("bn_mean", (8,), 0.1),
        numpy_helper.from_array((1.0 + 0.1 * np.abs(rng.standard_normal(8))).astype("float32"), "bn_var"),
        init("c2_w", (8, 8, 3, 3), 0.15), init("c2_b", (8,), 0.1),
        init("fc_w", (10, 8), 0.3), init("fc_b", (10,), 0.1),
        numpy_helper.from_array(np.array([2, 3], dtype="int64"), "axes_hw"),
    ]
    nodes = [
        helper.make_node("Conv", ["input", "c1_w", "c1_b"], ["c1"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["bn"],
                         epsilon=1e-5),
        helper.make_node("Relu", ["bn"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "c2_w", "c2_b"], ["c2"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Add", ["c2", "p1"], ["res"]),
        helper.make_node("Relu", ["res"], ["r2"]),
        helper.make_node("ReduceMean", ["r2", "axes_hw"], ["gp"], keepdims=0),
        helper.make_node("Gemm", ["gp", "fc_w", "fc_b"], ["fc"], transB=1),
        helper.make_node("Softmax", ["fc"], ["prob"], axis=1),
    ]
    graph = helper.make_graph(nodes, "onnx_cnn",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    return model


def bool_if_module():
    """x[4,8], c (a bool scalar) -> if c: y = x + x else y = x * x; returns (y, y > 0.5): a bool input,
    If/Goto control flow and a bool output (TVM 0.23+ spells bool as DLPack 1.x does: code 6, 8 bits)."""
    @tvm.script.ir_module
    class BoolIf:
        @R.function
        def main(x: R.Tensor((4, 8), "float32"), c: R.Tensor((), "bool")):
            if c:
                y = R.add(x, x)
            else:
                y = R.multiply(x, x)
            m = R.greater(y, R.const(0.5, "float32"))
            return (y, m)

    return BoolIf


# ---------------------------------------------------------------------------------------------------
# Building, running in TVM, writing the reference

def build_export(mod, path, target=CPU_TARGET, fused=False, fcompile=None):
    """relax.build (the zero pipeline: legalize, no fusion) or, with fused, tvm.compile with the target's
    default pipeline (FuseOps, FuseTIR, ...); then export_library(path), linked by fcompile when given (a
    cross compiler: tvm.support.cc.cross_compiler(...)), else by TVM's default (the host's g++)."""
    target = tvm.target.Target(target) if isinstance(target, str) else target
    if fused:
        ex = tvm.compile(mod, target, relax_pipeline=relax.get_default_pipeline(target))
    else:
        ex = relax.build(mod, target)
    if fcompile is None:
        ex.export_library(path)
    else:
        ex.export_library(path, fcompile=fcompile)
    return path


def _to_tensor(a):
    make = getattr(tvm.runtime, "tensor", None)  # TVM 0.27
    return make(a) if make is not None else tvm.nd.array(a)  # TVM 0.16


def flatten(value):
    """The flattened return value of a VM function: tensors depth-first through (nested) tuples."""
    if hasattr(value, "numpy"):
        return [value.numpy()]
    out = []
    for item in value:
        out += flatten(item)
    return out


def tvm_reference(so_path, inputs, scalars=()):
    """TVM's outputs for inputs: relax.VirtualMachine(load_module(so_path), tvm.cpu())["main"](...). The
    inputs at the indices `scalars` (R.Prim parameters, stored as 0-d arrays) are passed as Python numbers."""
    vm = relax.VirtualMachine(tvm.runtime.load_module(so_path), tvm.cpu())
    return flatten(vm["main"](*[a.item() if k in scalars else _to_tensor(a) for k, a in enumerate(inputs)]))


def save_arrays(prefix, inputs, outputs):
    """Writes <prefix>input_<k>.npy and <prefix>output_<k>.npy."""
    for k, a in enumerate(inputs):
        np.save("%sinput_%d.npy" % (prefix, k), a)
    for k, a in enumerate(outputs):
        np.save("%soutput_%d.npy" % (prefix, k), a)


def input_names(mod):
    """main's parameter names in order (relax.Var.name in TVM 0.27, name_hint in TVM 0.16)."""
    return [getattr(p, "name", None) or p.name_hint for p in mod["main"].params]


def _mlp_input(rng):
    return rng.standard_normal((1, 16)).astype("float32")


def _cnn_input(rng):
    return rng.standard_normal((1, 3, 16, 16)).astype("float32")


# Models built from another model's weights and inputs (so their outputs can be compared directly).
SAME_WEIGHTS = {"cnn_fused": "cnn", "opencl_mlp": "mlp"}
MODELS = ["mlp", "cnn", "cnn_fused", "onnx_cnn", "dyn_tuple", "tir_par", "mlp_params", "opencl_mlp", "bool_if",
          "prim_scale", "sort_topk"]


def make(name):
    """Builds model NAME: returns (IRModule, inputs, build options, meta extras)."""
    rng = seeded(SAME_WEIGHTS.get(name, name))
    if name == "mlp":
        mod, _ = mlp_module(rng)
        return mod, [_mlp_input(rng)], {}, {}
    if name == "mlp_params":
        mod, weights = mlp_module(rng, params_as_inputs=True)
        return mod, [_mlp_input(rng)] + weights, {}, {"num_input": 1, "param_inputs": ["w0", "b0", "w1", "b1"]}
    if name == "opencl_mlp":  # the same weights and input as its CPU reference build
        mod, _ = mlp_module(rng)
        target = tvm.target.Target("opencl", host=CPU_TARGET)
        return mod, [_mlp_input(rng)], {"target": target}, {"reference": "the llvm build of the same model"}
    if name in ("cnn", "cnn_fused"):
        mod = cnn_module(rng)
        return mod, [_cnn_input(rng)], {"fused": name == "cnn_fused"}, {}
    if name == "onnx_cnn":
        from tvm.relax.frontend.onnx import from_onnx
        model = onnx_cnn_model(rng)
        mod = from_onnx(model, shape_dict={"input": [1, 3, 16, 16]})
        return mod, [_cnn_input(rng)], {"fused": True}, {"onnx_opset": 18}
    if name == "dyn_tuple":
        mod = dyn_batch_module(rng)
        return mod, [rng.standard_normal((3, 8)).astype("float32")], {}, {"batch": 3}
    if name == "bool_if":
        return bool_if_module(), [rng.standard_normal((4, 8)).astype("float32"), np.array(True)], {}, {}
    if name == "sort_topk":
        return sort_topk_module(), [rng.integers(0, 5, (6, 16)).astype("float32")], {}, {}
    if name == "prim_scale":
        x = rng.standard_normal((4, 8)).astype("float32")
        return prim_scale_module(), [x, np.array(3, "int64")], {}, {"scalar_inputs": [1]}
    if name == "tir_par":
        return tir_par_module(), [rng.standard_normal((64, 256)).astype("float32")], {}, {}
    raise ValueError("unknown model %r (known: %s)" % (name, ", ".join(MODELS)))


def build_one(out_root, name, make_fn=None, cpu_target=CPU_TARGET):
    """Builds, exports and runs model NAME (make_fn(name), default make) in TVM; writes OUT/<name>/."""
    t0 = time.time()
    d = os.path.join(out_root, name)
    os.makedirs(d, exist_ok=True)
    mod, inputs, opts, extra = (make_fn or make)(name)
    opts.setdefault("target", cpu_target)
    so = build_export(mod, os.path.join(d, "model.so"), **opts)
    device = "cpu" if tvm.target.Target(opts["target"]).kind.name == "llvm" else "opencl"
    scalars = extra.get("scalar_inputs", [])
    if device == "cpu":
        outputs = tvm_reference(so, inputs, scalars)
    else:  # TVM's wheel has no OpenCL runtime: the reference is the CPU build of the same model
        outputs = tvm_reference(build_export(mod, os.path.join(d, "reference_cpu.so"), cpu_target), inputs, scalars)
    save_arrays(d + os.sep, inputs, outputs)
    meta = {"name": name, "inputs": input_names(mod), "device": device, "tvm": tvm.__version__,
            "num_outputs": len(outputs), "build_seconds": round(time.time() - t0, 2)}
    meta.update(extra)
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("RELAX_INTEROP_JOBS", "1")))
    ap.add_argument("--only", default=",".join(MODELS), help="comma-separated model names")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n]
    os.makedirs(args.out, exist_ok=True)
    if len(names) == 1 or args.jobs <= 1:
        rc = 0
        for name in names:
            try:
                meta = build_one(args.out, name)
                print("built %-12s %5.1f s  inputs %s" % (name, meta["build_seconds"], meta["inputs"]), flush=True)
            except Exception as e:  # noqa: BLE001  (one model's failure is reported; the others still build)
                print("FAILED %s: %s: %s" % (name, type(e).__name__, str(e).strip().splitlines()[-1:]),
                      flush=True)
                rc = 1
        sys.exit(rc)
    # At most --jobs processes, each building its share of the models in turn (importing TVM costs about
    # 2 s a process, more than most builds; TVM's thread pool and fork do not mix, hence processes).
    jobs = min(args.jobs, len(names))
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), args.out, "--jobs", "1", "--only",
                               ",".join(names[i::jobs])]) for i in range(jobs)]
    sys.exit(max(p.wait() for p in procs))


if __name__ == "__main__":
    main()
