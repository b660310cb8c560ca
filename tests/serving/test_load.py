"""Load: 2 instances, 16 concurrent clients, 10,000 requests, every response checked against the output
`sorun run` gives for THAT client's input, server RSS flat; and weights shared between instances
(big256: 4 instances cost < 32 MiB more RSS than 1)."""
import os
import threading
import time

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from conftest import add_model, explicit_config, record_measurement, sorun_run, zoo_path

REQUESTS = 10_000
CLIENTS = 16
MIB = 1024


def test_two_instances_sixteen_clients_ten_thousand_requests(start_server, tmp_path):
    repo = str(tmp_path / "repo")
    add_model(repo, "mlp", zoo_path("mlp"),
              explicit_config(zoo_path("mlp"), max_batch_size=8,
                              extra="dynamic_batching { max_queue_delay_microseconds: 200 }\n"
                                    "instance_group [ { kind: KIND_CPU count: 2 } ]\n"))
    server = start_server(repo, name="load")
    base = np.load(os.path.join(os.environ["ZOO_DIR"], "mlp_input.npy"))
    inputs = [np.roll(base, c, axis=1) * (1.0 + 0.1 * c) for c in range(CLIENTS)]
    inputs = [x.astype(np.float32) for x in inputs]
    expected = [sorun_run(zoo_path("mlp"), {"data": inputs[c]}, str(tmp_path / ("ref%d" % c)))[0]
                for c in range(CLIENTS)]
    assert len({e.tobytes() for e in expected}) == CLIENTS  # distinct answers: cross-talk would show

    per_client = REQUESTS // CLIENTS
    done = [0] * CLIENTS
    wrong = [0] * CLIENTS
    errors = [[] for _ in range(CLIENTS)]
    latencies = [[] for _ in range(CLIENTS)]
    rss_samples = []  # (requests done, KiB)
    finished = threading.Event()

    def client_loop(c):
        # Even clients speak gRPC, odd ones HTTP: both front ends under load at once.
        if c % 2 == 0:
            lib, client = grpcclient, grpcclient.InferenceServerClient(server.grpc_url)
        else:
            lib, client = httpclient, httpclient.InferenceServerClient(server.http_url)
        i = lib.InferInput("data", list(inputs[c].shape), "FP32")
        i.set_data_from_numpy(inputs[c])
        for _ in range(per_client):
            t0 = time.perf_counter()
            try:
                y = client.infer("mlp", [i]).as_numpy("softmax")
            except InferenceServerException as e:
                errors[c].append(str(e))
                continue
            latencies[c].append(time.perf_counter() - t0)
            if not np.array_equal(y, expected[c]):
                wrong[c] += 1
            done[c] += 1
        client.close()

    def monitor():
        while not finished.is_set():
            rss_samples.append((sum(done), server.rss_kib()))
            finished.wait(0.25)

    rss_before = server.rss_kib()
    threads = [threading.Thread(target=client_loop, args=(c,)) for c in range(CLIENTS)]
    watcher = threading.Thread(target=monitor)
    t0 = time.perf_counter()
    watcher.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    seconds = time.perf_counter() - t0
    finished.set()
    watcher.join()
    rss_after = server.rss_kib()

    assert server.alive()
    assert not any(t.is_alive() for t in threads), "a client hung"
    all_errors = [e for es in errors for e in es]
    assert not all_errors, all_errors[:5]
    assert sum(wrong) == 0, "responses with another request's output: %s" % wrong
    assert sum(done) == per_client * CLIENTS >= REQUESTS
    # Triton's own count agrees: nothing lost.
    _, stats = server.request("GET", "/v2/models/mlp/stats")
    s = stats["model_stats"][0]
    assert s["inference_stats"]["success"]["count"] == sum(done)
    assert s["inference_stats"]["fail"]["count"] == 0
    # RSS flat: once a fifth of the requests ran (pools and connections warm), it grows < 16 MiB.
    warm = [kib for n, kib in rss_samples if n >= REQUESTS // 5] + [rss_after]
    growth = max(warm) - warm[0]
    lat = np.sort(np.concatenate([np.array(l) for l in latencies])) * 1e6
    record_measurement("load_mlp_2_instances_16_clients", {
        "requests": sum(done), "seconds": round(seconds, 2), "requests_per_s": round(sum(done) / seconds),
        "p50_us": round(float(np.percentile(lat, 50))), "p99_us": round(float(np.percentile(lat, 99))),
        "rss_before_load_mib": round(rss_before / MIB, 1), "rss_after_load_mib": round(rss_after / MIB, 1),
        "rss_growth_after_warmup_mib": round(growth / MIB, 1), "server_executions": s["execution_count"],
        "load_average": os.getloadavg()[0]})
    assert growth < 16 * MIB, "server RSS grew by %.1f MiB under load: %s" % (growth / MIB, rss_samples)


def _served_rss_kib(start_server, tmp_path, instances):
    repo = str(tmp_path / ("repo%d" % instances))
    add_model(repo, "big256", zoo_path("big256"),
              explicit_config(zoo_path("big256"),
                              extra="instance_group [ { kind: KIND_CPU count: %d } ]\n" % instances))
    server = start_server(repo, name="big256x%d" % instances)
    x = np.load(os.path.join(os.environ["ZOO_DIR"], "big256_input.npy"))
    client = httpclient.InferenceServerClient(server.http_url)
    i = httpclient.InferInput("data", list(x.shape), "FP32")
    i.set_data_from_numpy(x)
    outputs = []
    for _ in range(instances * 2):  # every instance runs at least once under the default scheduler
        outputs.append(client.infer("big256", [i]).as_numpy(client.get_model_metadata("big256")["outputs"][0]["name"]))
    client.close()
    rss = server.rss_kib()
    assert server.stop() == 0
    return rss, outputs[0]


def test_instances_share_one_copy_of_the_weights(start_server, tmp_path):
    """big256 (256 MiB of weights, touched at instance start by warmup): RSS with 4 instances is within
    32 MiB of RSS with 1."""
    rss1, y1 = _served_rss_kib(start_server, tmp_path, 1)
    rss4, y4 = _served_rss_kib(start_server, tmp_path, 4)
    x = np.load(os.path.join(os.environ["ZOO_DIR"], "big256_input.npy"))
    np.testing.assert_array_equal(y1, sorun_run(zoo_path("big256"), {"data": x}, str(tmp_path / "ref"))[0])
    np.testing.assert_array_equal(y4, y1)
    record_measurement("big256_rss", {"instances_1_mib": round(rss1 / MIB, 1), "instances_4_mib": round(rss4 / MIB, 1),
                                      "growth_mib": round((rss4 - rss1) / MIB, 1)})
    assert rss1 > 256 * MIB, "weights not resident with 1 instance (%.1f MiB): the comparison would be void" % (
        rss1 / MIB)
    assert rss4 - rss1 < 32 * MIB, "4 instances cost %.1f MiB more than 1" % ((rss4 - rss1) / MIB)
