"""Serving overhead of the Triton backend: a model served by tritonserver (gRPC, loopback) vs the same
model under `sorun bench` (docs/serving.md keeps the numbers). Not a test: run it by hand.

usage (the venv of serving/triton/run_triton.sh; same environment as tests/serving/run_triton_tests.sh):
  SORUN_BIN=... ZOO_DIR=... SORUN_TRITON_BACKEND=... [SORUN_INTEROP_DIR=...] \\
    $HOME/.cache/sorun/triton-venv/bin/python tests/serving/bench_serving.py [MODEL ...]
MODEL: a zoo name (mlp, conv_heavy, ...) or tvm_<name> for SORUN_INTEROP_DIR/<name>/deploy.so
(tvm_resnet18). Default: mlp and, when built, tvm_resnet18.

For 1 and 2 instances (max_batch_size 0, num_threads = hardware threads / instances) it measures:
  - latency at concurrency 1 (one gRPC client, sequential requests): p50 / p99;
  - throughput at concurrency 2 x instances: requests/s, p50 / p99;
  - the server's own split (/v2/models/<m>/stats): queue, compute input / infer / output per request;
  - `sorun bench` of the same file with SORUN_NUM_THREADS = the instance's threads: median run;
  - overhead = serving p50 at concurrency 1 - sorun bench median (client, protocol, server, backend);
  - server RSS after the run.
Prints one JSON object per configuration and a Markdown table.
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import tritonclient.grpc as grpcclient

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conftest import TritonServer, add_model, explicit_config, sorun_inspect, zoo_path  # noqa: E402


def model_file(name):
    if name.startswith("tvm_"):
        return os.path.join(os.environ["SORUN_INTEROP_DIR"], name[4:], "deploy.so")
    return zoo_path(name)


def model_inputs(name, path):
    if name.startswith("tvm_"):
        d = os.path.dirname(path)
        return {f[len("input_"):-4]: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d))
                if f.startswith("input_") and f.endswith(".npy")}
    inputs, _ = sorun_inspect(path)
    return {inputs[0]["name"]: np.load(os.path.join(os.environ["ZOO_DIR"], name + "_input.npy"))}


def sorun_bench(path, threads, repeat):
    env = dict(os.environ, SORUN_NUM_THREADS=str(threads))
    out = subprocess.run([os.environ["SORUN_BIN"], "bench", path, "--json", "--warmup", "20", "--repeat", str(repeat)],
                         capture_output=True, text=True, env=env, check=True).stdout
    return json.loads(out)["run_ms"]


def run_clients(server, model, inputs, clients, per_client):
    latencies = [[] for _ in range(clients)]

    def loop(c):
        client = grpcclient.InferenceServerClient(server.grpc_url)
        infer_inputs = []
        for n, v in inputs.items():
            i = grpcclient.InferInput(n, list(v.shape), "FP32")
            i.set_data_from_numpy(v)
            infer_inputs.append(i)
        for _ in range(per_client):
            t0 = time.perf_counter()
            client.infer(model, infer_inputs)
            latencies[c].append(time.perf_counter() - t0)
        client.close()

    threads = [threading.Thread(target=loop, args=(c,)) for c in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - t0
    lat = np.sort(np.concatenate([np.array(l) for l in latencies])) * 1e6
    return {"requests_per_s": round(clients * per_client / seconds), "p50_us": round(float(np.percentile(lat, 50))),
            "p99_us": round(float(np.percentile(lat, 99)))}


def server_split(server, model):
    _, stats = server.request("GET", "/v2/models/%s/stats" % model)
    s = stats["model_stats"][0]["inference_stats"]
    n = max(1, s["success"]["count"])
    return {k: round(s[k]["ns"] / n / 1000, 1) for k in ("queue", "compute_input", "compute_infer", "compute_output")}


def bench(name, instances, work):
    path = model_file(name)
    threads = max(1, (os.cpu_count() or 1) // instances)
    repo = os.path.join(work, "%s_x%d" % (name, instances))
    add_model(repo, name, path, explicit_config(path, extra="instance_group [ { kind: KIND_CPU count: %d } ]\n"
                                                % instances))
    inputs = model_inputs(name, path)
    heavy = name.startswith("tvm_") or name in ("conv_heavy", "big256")
    server = TritonServer(repo, name="bench")
    try:
        server.wait_until_settled()
        run_clients(server, name, inputs, 1, 20 if heavy else 200)  # warm up
        single = run_clients(server, name, inputs, 1, 100 if heavy else 2000)
        split = server_split(server, name)
        loaded = run_clients(server, name, inputs, 2 * instances, 50 if heavy else 1000)
        rss_mib = round(server.rss_kib() / 1024, 1)
    finally:
        server.stop()
    run_ms = sorun_bench(path, threads, 100 if heavy else 2000)
    return {"model": name, "instances": instances, "threads_per_instance": threads,
            "concurrency_1": single, "server_split_us": split,
            "concurrency_%d" % (2 * instances): loaded,
            "sorun_bench_median_us": round(run_ms["median"] * 1000, 1),
            "overhead_p50_us": round(single["p50_us"] - run_ms["median"] * 1000),
            "rss_mib": rss_mib, "load_average": [round(x, 2) for x in os.getloadavg()]}


def main(argv):
    names = argv[1:]
    if not names:
        names = ["mlp"]
        interop = os.environ.get("SORUN_INTEROP_DIR", "")
        if interop and os.path.exists(os.path.join(interop, "resnet18", "deploy.so")):
            names.append("tvm_resnet18")
    rows = []
    with tempfile.TemporaryDirectory(prefix="sorun-serving-bench-") as work:
        for name in names:
            for instances in (1, 2):
                r = bench(name, instances, work)
                print(json.dumps(r), flush=True)
                rows.append(r)
    print("\n| model | instances x threads | c=1 p50 / p99 (µs) | sorun bench median (µs) | overhead (µs) |"
          " c=2N req/s | c=2N p50 / p99 (µs) | RSS (MiB) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        loaded = r["concurrency_%d" % (2 * r["instances"])]
        print("| %s | %d x %d | %d / %d | %.1f | %d | %d | %d / %d | %.1f |" % (
            r["model"], r["instances"], r["threads_per_instance"], r["concurrency_1"]["p50_us"],
            r["concurrency_1"]["p99_us"], r["sorun_bench_median_us"], r["overhead_p50_us"],
            loaded["requests_per_s"], loaded["p50_us"], loaded["p99_us"], r["rss_mib"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
