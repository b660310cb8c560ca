"""The ONNX Runtime side of the peer benchmark: times one model in this (fresh) process, like `sorun bench`.

usage: python ort_bench.py MODEL.onnx INPUT.npy --threads N [--warmup W] [--repeat R] [--output OUT.npy]

load-to-ready = InferenceSession(MODEL.onnx) (parse, graph optimisation level ALL, kernel creation; the
`import onnxruntime` before it is not counted and is reported apart); first run = the first run after
the input is bound; then W untimed and R timed runs. The input is one pre-allocated OrtValue and runs
use run_with_ort_values (no per-run conversion from numpy). intra_op_num_threads = N, inter_op 1,
sequential execution. Peak RSS = VmHWM of this process. Prints one JSON object.
"""
import argparse
import json
import time

import numpy as np

t_import = time.perf_counter()
import onnxruntime as ort  # noqa: E402

IMPORT_MS = (time.perf_counter() - t_import) * 1e3


def vm_hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("input")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--output")
    a = ap.parse_args()
    x = np.load(a.input)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = a.threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    t0 = time.perf_counter()
    sess = ort.InferenceSession(a.model, sess_options=opts, providers=["CPUExecutionProvider"])
    load_ms = (time.perf_counter() - t0) * 1e3
    in_name, out_name = sess.get_inputs()[0].name, sess.get_outputs()[0].name
    value = ort.OrtValue.ortvalue_from_numpy(x)
    t0 = time.perf_counter()
    out = sess.run_with_ort_values([out_name], {in_name: value})
    first_ms = (time.perf_counter() - t0) * 1e3
    for _ in range(a.warmup):
        sess.run_with_ort_values([out_name], {in_name: value})
    samples = []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        sess.run_with_ort_values([out_name], {in_name: value})
        samples.append((time.perf_counter() - t0) * 1e3)
    if a.output:
        np.save(a.output, out[0].numpy())
    print(json.dumps({"load_ms": load_ms, "import_ms": IMPORT_MS, "first_run_ms": first_ms,
                      "run_ms": {"median": float(np.median(samples)), "p90": float(np.percentile(samples, 90))},
                      "peak_rss_bytes": vm_hwm(), "version": ort.__version__}))


if __name__ == "__main__":
    main()
