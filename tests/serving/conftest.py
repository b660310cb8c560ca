"""Fixtures of the Triton serving tests: prebuilt paths, model repositories and a real tritonserver.

Run through tests/serving/run_triton_tests.sh (it installs the pinned venv and runs pytest with its
Python). Paths come from the environment the runner sets:
  SORUN_BIN              the sorun CLI (reference outputs: `sorun run`)
  ZOO_DIR                the packed model zoo (bazel build //testdata/models/...)
  SORUN_TRITON_BACKEND   libtriton_sorun.so (bazel build -c opt //serving/triton:libtriton_sorun.so)
  SORUN_SERVING_OUT      where measurements (serving_measurements.json) and server logs go
  SORUN_INTEROP_DIR      optional: TVM-built models (tests/interop/tvm_models.py layout)

Every server listens on 127.0.0.1 only, on ports picked free at start, and is stopped (SIGTERM, then
SIGKILL after 20 s) by its own pid when its test ends.
"""
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RUN_TRITON = os.path.join(ROOT, "serving", "triton", "run_triton.sh")


def _env_path(name):
    value = os.environ.get(name, "")
    if not value:
        pytest.exit("%s is not set: run tests/serving/run_triton_tests.sh" % name, returncode=1)
    return value


SORUN_BIN = os.environ.get("SORUN_BIN", "")
ZOO_DIR = os.environ.get("ZOO_DIR", "")
OUT_DIR = os.environ.get("SORUN_SERVING_OUT", "/tmp/sorun-serving")


def record_measurement(key, value):
    """Adds key -> value to OUT_DIR/serving_measurements.json (the runner prints it at the end)."""
    os.makedirs(OUT_DIR, exist_ok=True)
    path = os.path.join(OUT_DIR, "serving_measurements.json")
    data = {}
    if os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
    data[key] = value
    with open(path, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)


def free_ports(n):
    """n distinct free loopback ports: every socket stays bound until all are picked (one at a time, the
    kernel may hand the same just-released port out twice: a server then fails on "same address and port")."""
    sockets = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sockets.append(s)
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS for pid %d" % pid)


class TritonServer:
    """tritonserver started by serving/triton/run_triton.sh on free loopback ports."""

    def __init__(self, repo, args=(), name="server"):
        self.repo = repo
        self.http_port, self.grpc_port, self.metrics_port = free_ports(3)
        os.makedirs(OUT_DIR, exist_ok=True)
        self.log_path = os.path.join(OUT_DIR, "%s-%d.log" % (name, self.http_port))
        env = dict(os.environ)
        env.update(TRITON_HTTP_PORT=str(self.http_port), TRITON_GRPC_PORT=str(self.grpc_port),
                   TRITON_METRICS_PORT=str(self.metrics_port))
        self._log = open(self.log_path, "w")
        # run_triton.sh execs tritonserver: this pid is the server's.
        self.proc = subprocess.Popen(["bash", RUN_TRITON, repo, "--exit-on-error=false", *args],
                                     stdout=self._log, stderr=subprocess.STDOUT, env=env)
        self.http_url = "127.0.0.1:%d" % self.http_port
        self.grpc_url = "127.0.0.1:%d" % self.grpc_port

    @property
    def pid(self):
        return self.proc.pid

    def request(self, method, path, body=None, timeout=30):
        """(status, parsed JSON or text) of an HTTP call to the server."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request("http://%s%s" % (self.http_url, path), data=data, method=method)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                status, text = r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode()
        try:
            return status, json.loads(text) if text else None
        except ValueError:
            return status, text

    def repository_index(self):
        status, index = self.request("POST", "/v2/repository/index")
        assert status == 200, index
        return {(m["name"]): m for m in index}

    def wait_until_settled(self, timeout=120):
        """Waits until the server is live and no model of the repository is still loading."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("tritonserver exited with %s; log %s:\n%s" % (self.proc.returncode, self.log_path,
                                                                                   self.log_tail()))
            try:
                status, _ = self.request("GET", "/v2/health/live", timeout=2)
                if status == 200:
                    index = self.repository_index()
                    if all(m.get("state") not in ("LOADING", "UNLOADING") for m in index.values()):
                        return index
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(0.2)
        raise AssertionError("tritonserver did not settle in %d s; log:\n%s" % (timeout, self.log_tail()))

    def log_text(self):
        self._log.flush()
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def log_tail(self, lines=40):
        return "\n".join(self.log_text().splitlines()[-lines:])

    def rss_kib(self):
        return rss_kib(self.pid)

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._log.close()
        return self.proc.returncode


@pytest.fixture
def start_server():
    """start_server(repo, args=(), name=...) -> a settled TritonServer, stopped when the test ends."""
    servers = []

    def start(repo, args=(), name="server", settle=True):
        server = TritonServer(repo, args, name)
        servers.append(server)
        if settle:
            server.wait_until_settled()
        return server

    yield start
    for server in servers:
        rc = server.stop()
        # A crash (signal) fails the test that owned the server, whatever it asserted.
        assert rc is not None and rc >= 0, "tritonserver died with signal %d; log %s" % (-rc, server.log_path)


@contextlib.contextmanager
def settled_server(repo, name):
    """A TritonServer on `repo` whose every model loaded (READY, else the failures are listed), stopped on
    exit; a server that dies of a signal fails the owner. For module-scoped fixtures."""
    server = TritonServer(repo, name=name)
    try:
        index = server.wait_until_settled()
        not_ready = {n: m.get("reason") for n, m in index.items() if m.get("state") != "READY"}
        assert not not_ready, "models failed to load: %s" % not_ready
        yield server
    finally:
        rc = server.stop()
        assert rc is not None and rc >= 0, "tritonserver died with signal %d" % -rc


# --- model repositories ------------------------------------------------------------------------------

def zoo_path(name, ext=".so"):
    path = os.path.join(_env_path("ZOO_DIR"), name + ext)
    if not os.path.exists(path):
        pytest.fail("zoo model %s missing (bazel build //testdata/models/...)" % path)
    return path


def add_model(repo, name, library, config="", model_file="model.so"):
    """repo/name/config.pbtxt (backend "sorun" + `config`) and repo/name/1/<model_file> (a copy)."""
    d = os.path.join(repo, name)
    os.makedirs(os.path.join(d, "1"), exist_ok=True)
    shutil.copyfile(library, os.path.join(d, "1", model_file))
    with open(os.path.join(d, "config.pbtxt"), "w") as f:
        f.write('backend: "sorun"\n' + config)
    return d


# --- reference outputs: the sorun CLI -------------------------------------------------------------

_reference_lock = threading.Lock()


def sorun_run(model_path, inputs, work_dir, device=None):
    """Outputs of `sorun run MODEL --input name=file.npy ... [--device DEVICE]` as a list of arrays."""
    with _reference_lock:
        os.makedirs(work_dir, exist_ok=True)
        args = [_env_path("SORUN_BIN"), "run", model_path, "--output-dir", work_dir]
        if device:
            args += ["--device", device]
        for name, value in inputs.items():
            path = os.path.join(work_dir, "input_%s.npy" % name)
            np.save(path, value)
            args += ["--input", "%s=%s" % (name, path)]
        for old in os.listdir(work_dir):
            if old.startswith("output_"):
                os.remove(os.path.join(work_dir, old))
        result = subprocess.run(args, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, "sorun run failed: %s" % result.stderr
        outputs = []
        i = 0
        while os.path.exists(os.path.join(work_dir, "output_%d.npy" % i)):
            outputs.append(np.load(os.path.join(work_dir, "output_%d.npy" % i)))
            i += 1
        return outputs


def sorun_error(model_path, work_dir):
    """The one-line error `sorun run MODEL` prints for a model that does not load (without 'sorun: error: ')."""
    os.makedirs(work_dir, exist_ok=True)
    result = subprocess.run([_env_path("SORUN_BIN"), "run", model_path, "--output-dir", work_dir],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0, "sorun run unexpectedly loaded %s" % model_path
    return result.stderr.strip().replace("sorun: error: ", "", 1)


def sorun_inspect(model_path):
    """(inputs, outputs) of `sorun inspect MODEL --json`: lists of {name, shape, dtype}."""
    result = subprocess.run([_env_path("SORUN_BIN"), "inspect", model_path, "--json"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, "sorun inspect failed: %s" % result.stderr
    report = json.loads(result.stdout)
    return report["inputs"], report["outputs"]


TRITON_DTYPES = {"float32": "FP32", "float64": "FP64", "float16": "FP16", "int8": "INT8", "int16": "INT16",
                 "int32": "INT32", "int64": "INT64", "uint8": "UINT8", "bool": "BOOL"}


def explicit_config(model_path, max_batch_size=0, extra=""):
    """A config.pbtxt body listing the model's inputs and outputs (from sorun inspect)."""
    inputs, outputs = sorun_inspect(model_path)

    def entries(tensors):
        out = []
        for t in tensors:
            dims = t["shape"][1:] if max_batch_size > 0 else t["shape"]
            out.append('  { name: "%s" data_type: TYPE_%s dims: [ %s ] }'
                       % (t["name"], TRITON_DTYPES[t["dtype"]], ", ".join(str(d) for d in dims)))
        return ",\n".join(out)

    return ("max_batch_size: %d\ninput [\n%s\n]\noutput [\n%s\n]\n%s"
            % (max_batch_size, entries(inputs), entries(outputs), extra))
