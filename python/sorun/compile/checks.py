"""Correctness by construction: before `sorun compile` writes its output, the packed library runs on seeded
inputs in sorun and in TVM's own VM (the same file), and both are compared with ONNX Runtime's outputs of the
ONNX model. A target that does not run here (cuda, aarch64, a CPU this machine lacks) is checked through the
same Relax module built for this machine instead, and the report says so."""
import numpy as np

from .errors import CompileError, last_line

DEFAULT_RTOL, DEFAULT_ATOL = 1e-4, 1e-5


def seeded_inputs(specs, seed, dynamic_size):
    """{name: array} for the graph inputs: floats uniform in [-1, 1), integers in [0, 10), booleans; a
    symbolic dimension takes `dynamic_size`."""
    rng = np.random.default_rng(seed)
    out = {}
    for s in specs:
        shape = [d if isinstance(d, int) else dynamic_size for d in s.shape]
        dt = np.dtype(s.dtype)
        if dt.kind == "f":
            out[s.name] = rng.uniform(-1, 1, shape).astype(dt)
        elif dt.kind in "iu":
            out[s.name] = rng.integers(0, 10, shape).astype(dt)
        elif dt.kind == "b":
            out[s.name] = rng.integers(0, 2, shape).astype(bool)
        else:
            raise CompileError("check", "input %s: no seeded data for dtype %s" % (s.name, s.dtype))
    return out


def onnx_runtime_outputs(onnx_path, inputs):
    """ONNX Runtime's outputs of the ONNX model (CPU execution provider, graph optimizations off)."""
    try:
        import onnxruntime as ort  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise CompileError("check", "onnxruntime is not installed (it is part of the 'compile' extra: "
                           "pip install 'sorun[compile]'); --no-check skips the checks") from None
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        session = ort.InferenceSession(onnx_path, opts, providers=["CPUExecutionProvider"])
        return [np.asarray(o) for o in session.run(None, inputs)]
    except Exception as e:
        raise CompileError("check", "ONNX Runtime could not run %s: %s" % (onnx_path, last_line(e))) from None


def sorun_outputs(path, specs, inputs):
    """sorun's outputs of the library at `path` (CPU executor)."""
    import sorun  # pylint: disable=import-outside-toplevel

    try:
        ex = sorun.load(path).executor("cpu")
        return [np.array(t) for t in ex.run({s.name: inputs[s.name] for s in specs})]
    except sorun.Error as e:
        raise CompileError("check", "sorun could not run the compiled library: %s" % e) from None


def tvm_vm_outputs(path, specs, inputs):
    """TVM's own Relax VM's outputs of the library at `path` (tvm.runtime.load_module, tvm.cpu())."""
    import tvm  # pylint: disable=import-outside-toplevel
    from tvm import relax  # pylint: disable=import-outside-toplevel

    try:
        vm = relax.VirtualMachine(tvm.runtime.load_module(path), tvm.cpu())
        result = vm["main"](*[tvm.runtime.tensor(inputs[s.name]) for s in specs])
    except Exception as e:
        raise CompileError("check", "TVM's VM could not run the compiled library: %s" % last_line(e)) from None
    flat = []

    def walk(v):
        if isinstance(v, (list, tuple)) or type(v).__name__ in ("Array", "List", "Tuple"):
            for x in v:
                walk(x)
        else:
            flat.append(v.numpy())

    walk(result)
    return flat


def compare(what, got, want, rtol, atol):
    """{'max_abs': ..., 'max_rel': ...} of outputs `got` vs `want`; raises naming the output that differs.
    An element may differ by atol + rtol * (the largest magnitude in its output tensor): relative to the
    output's scale, not to the element itself, since a logit or activation that happens to be near zero
    carries the absolute rounding error of the large sums it came from (ResNet-18's logits differ by ~1e-5
    between ONNX Runtime's and TVM's summation orders, which is 1e-2 of a logit near 0.004). max_rel is
    max_abs over that scale."""
    if len(got) != len(want):
        raise CompileError("check", "%s gives %d outputs, ONNX Runtime %d" % (what, len(got), len(want)))
    max_abs = max_rel = 0.0
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape:
            raise CompileError("check", "%s output %d has shape %s, ONNX Runtime's %s" % (what, i, g.shape, w.shape))
        if g.size == 0:
            continue
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        nan = np.isnan(g64) != np.isnan(w64)
        if nan.any():
            raise CompileError("check", "%s output %d: element %d is NaN in one of it and ONNX Runtime's output, not "
                               "in the other; nothing was written" % (what, i, int(np.argmax(nan.ravel()))))
        diff = np.abs(np.nan_to_num(g64) - np.nan_to_num(w64))
        scale = float(np.abs(np.nan_to_num(w64)).max())
        max_abs = max(max_abs, float(diff.max()))
        max_rel = max(max_rel, float(diff.max()) / max(scale, 1e-12))
        bad = diff > atol + rtol * scale
        if bad.any():
            k = int(np.argmax(bad.ravel()))
            raise CompileError("check", "%s output %d differs from ONNX Runtime's beyond rtol %g (of the output's "
                               "largest magnitude, %.3g) / atol %g: element %d is %r, expected %r (max abs diff "
                               "%.3g); nothing was written" % (what, i, rtol, scale, atol, k, g.ravel()[k].item(),
                                                                 w.ravel()[k].item(), float(diff.max())))
    return {"max_abs": max_abs, "max_rel": max_rel}
