"""The Ray Serve test's driver (run by tests/ray/run_ray_serve_test.sh against its 2-node loopback cluster).

usage: ray_serve_test.py --models DIR --model NAME --onnx PATH --port HTTP_PORT --report-dir DIR --json OUT
                         [--ort-requests N]

1. sorun: an autoscaling deployment (SorunModel, serve_app.py; 2 to 6 replicas, 4 at start, at most 3
   a node) of the zoo model behind Serve's HTTP proxy; both nodes must hold some of the 4 replicas.
2. Memory (at the 4 replicas, after a few requests): for each replica process, what the model costs it =
   the PSS of its mappings of the model file (/proc/PID/smaps) + the growth of its anonymous PSS since
   just before the load (/proc/PID/smaps_rollup); also its total PSS. The sum over the replicas must
   stay within 1.2 x (weights + 4 x activations). Both nodes run on this one machine, so the page cache
   they share is the machine's and the sum is over every replica (on a real cluster: each node's own).
3. Scaling while requests flow: 12 clients until Serve's autoscaler has 6 replicas up, then 1 client
   until it is back at 2. Every request (a bounded number: the phases have deadlines) must be
   answered, correctly.
4. The same for ONNX Runtime replicas (OrtModel) of the same model, measured the same way (not bounded).
Writes the figures to OUT as JSON and prints a table; exits 1 when a check fails.
"""
import argparse
import glob
import json
import os
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import ray
from ray import serve

import onnx_from_graph
import serve_app

REPLICAS = 4
MiB = 1 << 20


def post(url, x):
    req = urllib.request.Request(url, data=x.tobytes(), headers={"Content-Type": "application/octet-stream"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return np.frombuffer(r.read(), np.float32)


def close(y, expected, rel):
    return y.size == expected.size and float(np.abs(y - expected.ravel()).max()) <= rel * float(np.abs(expected).max())


def send(url, x, expected, n, rel, threads=8):
    """(answered correctly, failed) of n requests from `threads` clients."""
    def one(_):
        try:
            return close(post(url, x), expected, rel)
        except Exception as e:  # a lost or refused request is a failure, counted and shown
            print("request failed: %r" % e, file=sys.stderr)
            return False
    with ThreadPoolExecutor(threads) as pool:
        ok = sum(pool.map(one, range(n)))
    return ok, n - ok


def live_reports(report_dir, kind):
    out = []
    for path in glob.glob(os.path.join(report_dir, kind + "-*.json")):
        with open(path) as f:
            r = json.load(f)
        if os.path.exists("/proc/%d" % r["pid"]):
            out.append(r)
    return out


def wait_replicas(report_dir, kind, n, timeout=180):
    deadline = time.time() + timeout
    while time.time() < deadline:
        reports = live_reports(report_dir, kind)
        if len(reports) == n:
            return reports
        time.sleep(0.5)
    raise SystemExit("ray_serve_test: %d %s replicas expected, %d alive after %d s"
                     % (n, kind, len(live_reports(report_dir, kind)), timeout))


def file_pss(pid, path):
    """PSS in bytes of the mappings of `path` in process pid (/proc/PID/smaps)."""
    total, inside = 0, False
    real = os.path.realpath(path)
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            first = line.split(None, 1)[0]
            if "-" in first and not first.endswith(":"):  # a mapping's header line
                fields = line.split()
                inside = len(fields) >= 6 and os.path.realpath(fields[5]) == real
            elif inside and first == "Pss:":
                total += int(line.split()[1]) * 1024
    return total


def measure(reports):
    rows = []
    for r in reports:
        now = serve_app.smaps_rollup(r["pid"])
        mapped = file_pss(r["pid"], r["model_file"])
        anon = now["Pss_Anon"] - r["before"]["Pss_Anon"]
        rows.append({"pid": r["pid"], "node_id": r["node_id"], "model_file_pss": mapped, "anon_growth": anon,
                     "model_cost": mapped + anon, "pss_total": now["Pss"]})
    return rows


def deploy(cls, name, arg, report_dir, replicas, autoscale=False):
    if autoscale:  # Serve's own autoscaler, reacting within seconds (its defaults wait 30 s / 10 min)
        sizing = {"autoscaling_config": {
            "min_replicas": 2, "initial_replicas": replicas, "max_replicas": 6, "target_ongoing_requests": 1,
            "upscale_delay_s": 0.5, "downscale_delay_s": 15, "metrics_interval_s": 0.5, "look_back_period_s": 1}}
    else:
        sizing = {"num_replicas": replicas}
    app = cls.options(max_replicas_per_node=3, graceful_shutdown_timeout_s=10, ray_actor_options={"num_cpus": 0.5},
                      **sizing).bind(arg, report_dir)
    serve.run(app, name=name, route_prefix="/" + name)


class Flow:
    """`clients` threads posting requests back to back until stop(); counts the correct and the failed."""

    def __init__(self, url, x, expected, clients):
        self.ok = self.failed = 0
        self._args, self._stop, self._lock = (url, x, expected), threading.Event(), threading.Lock()
        self._threads = [threading.Thread(target=self._run) for _ in range(clients)]
        for t in self._threads:
            t.start()

    def _run(self):
        url, x, expected = self._args
        while not self._stop.is_set():
            try:
                good = close(post(url, x), expected, 1e-4)
            except Exception as e:
                print("request failed while scaling: %r" % e, file=sys.stderr)
                good = False
            with self._lock:
                if good:
                    self.ok += 1
                else:
                    self.failed += 1

    def stop(self):
        self._stop.set()
        for t in self._threads:
            t.join()
        return self.ok, self.failed


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", required=True)
    p.add_argument("--model", default="big256")
    p.add_argument("--onnx", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--report-dir", required=True)
    p.add_argument("--json", required=True)
    p.add_argument("--ort-requests", type=int, default=40)
    a = p.parse_args()

    model_path = os.path.join(a.models, a.model + ".so")
    x = np.load(os.path.join(a.models, a.model + "_input.npy")).astype(np.float32)
    expected = np.load(os.path.join(a.models, a.model + "_expected.npy"))
    with open(os.path.join(a.models, a.model + ".json")) as f:
        weights, activations = onnx_from_graph.graph_sizes(json.load(f))
    base = "http://127.0.0.1:%d/" % a.port
    failures = []
    result = {"model": a.model, "weights_bytes": weights, "activation_bytes": activations, "replicas": REPLICAS}

    ray.init(address="auto", logging_level="ERROR")
    deadline = time.time() + 60  # the worker node joins on its own time
    while True:
        nodes = [n["NodeID"] for n in ray.nodes() if n["Alive"]]
        if len(nodes) >= 2 or time.time() > deadline:
            break
        time.sleep(0.5)
    if len(nodes) != 2:
        raise SystemExit("ray_serve_test: 2 alive nodes expected, got %d" % len(nodes))
    serve.start(proxy_location="HeadOnly", http_options={"host": "127.0.0.1", "port": a.port})

    # 1. sorun replicas over both nodes; from here on requests flow until the end of step 3 (4 clients keep
    # the autoscaler at 4 replicas: target 1 ongoing request each).
    t = time.time()
    deploy(serve_app.SorunModel, "sorun", model_path, a.report_dir, REPLICAS, autoscale=True)
    flows = [Flow(base + "sorun", x, expected, REPLICAS)]
    reports = wait_replicas(a.report_dir, "sorun", REPLICAS)
    per_node = {n: sum(r["node_id"] == n for r in reports) for n in nodes}
    result["sorun_deploy_s"] = round(time.time() - t, 1)
    result["sorun_replicas_per_node"] = sorted(per_node.values())
    if min(per_node.values()) == 0:
        failures.append("replicas not spread over both nodes: %s" % per_node)

    # 2. memory at REPLICAS replicas.
    rows = measure(reports)
    result["sorun_memory"] = rows
    bound = 1.2 * (weights + REPLICAS * activations)
    total = sum(r["model_cost"] for r in rows)
    result["sorun_model_cost_sum"], result["bound"] = total, bound
    if total > bound:
        failures.append("sorun replicas' model memory %.1f MiB > bound %.1f MiB" % (total / MiB, bound / MiB))

    # 3. 12 clients until the autoscaler has 6 replicas up, then 1 client until it is back at 2.
    t = time.time()
    flows.append(Flow(base + "sorun", x, expected, 12 - REPLICAS))
    up = wait_replicas(a.report_dir, "sorun", 6, timeout=90)
    flows.append(Flow(base + "sorun", x, expected, 1))
    counts = [flows[0].stop(), flows[1].stop()]
    wait_replicas(a.report_dir, "sorun", 2, timeout=90)
    counts.append(flows[2].stop())
    result["scaling_s"] = round(time.time() - t, 1)
    result["scaling_replicas_per_node_at_6"] = sorted(sum(r["node_id"] == n for r in up) for n in nodes)
    result["sorun_requests"] = sum(ok + bad for ok, bad in counts)
    result["sorun_failed"] = sum(bad for _, bad in counts)
    serve.delete("sorun")
    if result["sorun_failed"]:
        failures.append("%d of %d sorun requests failed" % (result["sorun_failed"], result["sorun_requests"]))

    # 4. ONNX Runtime replicas of the same model, measured the same way.
    t = time.time()
    deploy(serve_app.OrtModel, "ort", a.onnx, a.report_dir, REPLICAS)
    ort_reports = wait_replicas(a.report_dir, "ort", REPLICAS)
    result["ort_deploy_s"] = round(time.time() - t, 1)
    ok, bad = send(base + "ort", x, expected, a.ort_requests, 1e-3)
    result["ort_requests"], result["ort_failed"] = a.ort_requests, bad
    if bad:
        failures.append("%d ONNX Runtime requests failed" % bad)
    result["ort_memory"] = measure(ort_reports)
    result["ort_model_cost_sum"] = sum(r["model_cost"] for r in result["ort_memory"])
    serve.delete("ort")
    serve.shutdown()

    with open(a.json, "w") as f:
        json.dump(result, f, indent=1)
    print("model %s: weights %.1f MiB, activations %.1f KiB a replica; bound 1.2 x (weights + %d x activations)"
          " = %.1f MiB" % (a.model, weights / MiB, activations / 1024, REPLICAS, bound / MiB))
    for kind in ("sorun", "ort"):
        for r in result[kind + "_memory"]:
            print("  %-5s pid %-7d model file PSS %7.1f MiB + anon growth %7.1f MiB = %7.1f MiB (process PSS %.1f MiB)"
                  % (kind, r["pid"], r["model_file_pss"] / MiB, r["anon_growth"] / MiB, r["model_cost"] / MiB,
                     r["pss_total"] / MiB))
        print("  %-5s sum of %d replicas: %.1f MiB" % (kind, REPLICAS, result[kind + "_model_cost_sum"] / MiB))
    print("requests: sorun %d (%d failed) while Serve scaled 4 -> 6 -> 2 (%.0f s for the scaling), ONNX Runtime %d"
          " (%d failed)" % (result["sorun_requests"], result["sorun_failed"], result["scaling_s"],
                           result["ort_requests"], result["ort_failed"]))
    for f in failures:
        print("FAILED: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
