"""Ray Serve deployments of one model: sorun replicas and ONNX Runtime replicas (tests/ray/ray_serve_test.py;
docs/python.md shows the sorun one).

Each replica takes an HTTP POST whose body is the model's float32 input (raw bytes, C order) and answers
with the first output's raw float32 bytes. On start it writes REPORT_DIR/<kind>-<pid>.json (pid, Ray
node id, its PSS and anonymous PSS from /proc/self/smaps_rollup just before loading the model), so that
the test can measure what loading the model cost each replica process.
"""
import json
import os
import threading

import numpy as np
from ray import serve
from starlette.requests import Request
from starlette.responses import Response


def smaps_rollup(pid="self"):
    """{field: bytes} of /proc/PID/smaps_rollup (Pss, Pss_Anon, Pss_File, Rss, ...)."""
    out = {}
    with open("/proc/%s/smaps_rollup" % pid) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                out[parts[0].rstrip(":")] = int(parts[1]) * 1024
    return out


def _report(kind, report_dir, model_path):
    import ray
    info = {"pid": os.getpid(), "node_id": ray.get_runtime_context().get_node_id(), "model_file": model_path,
            "before": smaps_rollup()}
    tmp = os.path.join(report_dir, ".%s-%d.json" % (kind, os.getpid()))
    with open(tmp, "w") as f:
        json.dump(info, f)
    os.replace(tmp, os.path.join(report_dir, "%s-%d.json" % (kind, os.getpid())))


@serve.deployment
class SorunModel:
    """One sorun executor over a model file; the file's pages (weights included) are shared by every
    process on the machine that maps it."""

    def __init__(self, model_path, report_dir=None):
        import sorun
        if report_dir:
            _report("sorun", report_dir, model_path)
        self._model = sorun.load(model_path)
        self._ex = self._model.executor(num_threads=1)
        info = self._model.inputs[0]
        self._name, self._shape = info.name, info.shape
        self._lock = threading.Lock()  # one executor runs one request at a time
        self._run(np.zeros(self._shape, np.float32))  # first run: weights paged in

    def _run(self, x):
        with self._lock:
            return np.array(self._ex.run({self._name: x})[0])

    async def __call__(self, request: Request) -> Response:
        x = np.frombuffer(await request.body(), np.float32).reshape(self._shape)
        return Response(self._run(x).tobytes(), media_type="application/octet-stream")


@serve.deployment
class OrtModel:
    """The same model in an ONNX Runtime session: its initializers live in the process's own memory."""

    def __init__(self, onnx_path, report_dir=None):
        import onnxruntime as ort
        if report_dir:
            _report("ort", report_dir, onnx_path)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
        first = self._session.get_inputs()[0]
        self._name, self._shape = first.name, tuple(first.shape)
        self._lock = threading.Lock()
        self._run(np.zeros(self._shape, np.float32))

    def _run(self, x):
        with self._lock:
            return self._session.run(None, {self._name: x})[0]

    async def __call__(self, request: Request) -> Response:
        x = np.frombuffer(await request.body(), np.float32).reshape(self._shape)
        return Response(self._run(x).tobytes(), media_type="application/octet-stream")
