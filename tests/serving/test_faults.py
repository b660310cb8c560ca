"""Faults: broken model files, bad requests, clients that go away, models unloaded and reloaded while
requests flow. Errors are clean (a message naming the model or input), the server never crashes, and
no request ever gets another request's output."""
import os
import socket
import threading
import time

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from conftest import add_model, explicit_config, sorun_error, sorun_run, zoo_path


def mlp_input():
    return np.load(os.path.join(os.environ["ZOO_DIR"], "mlp_input.npy"))


def http_infer(server, model, x, name="data", datatype="FP32"):
    client = httpclient.InferenceServerClient(server.http_url)
    try:
        i = httpclient.InferInput(name, list(x.shape), datatype)
        i.set_data_from_numpy(x)
        return client.infer(model, [i]).as_numpy("softmax")
    finally:
        client.close()


def corrupt_copies(work):
    """{model name: broken library}: not an ELF file, a truncated copy, a flipped weight byte (checksum
    verification on), and a kernel library whose root module is not a graph executor factory."""
    os.makedirs(work, exist_ok=True)
    mlp = open(zoo_path("mlp"), "rb").read()
    files = {}
    files["bad_garbage"] = os.path.join(work, "garbage.so")
    with open(files["bad_garbage"], "wb") as f:
        f.write(np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    files["bad_truncated"] = os.path.join(work, "truncated.so")
    with open(files["bad_truncated"], "wb") as f:
        f.write(mlp[:len(mlp) // 2])
    flipped = bytearray(mlp)
    at = flipped.find(b"GraphExecutorFactory")
    assert at > 0
    flipped[at + 40000] ^= 0xFF  # inside the weights
    files["bad_checksum"] = os.path.join(work, "flipped.so")
    with open(files["bad_checksum"], "wb") as f:
        f.write(flipped)
    files["bad_root"] = zoo_path("libreference_ops")
    return files


def test_corrupt_models_fail_alone_with_sorun_message(start_server, tmp_path):
    repo = str(tmp_path / "repo")
    add_model(repo, "mlp", zoo_path("mlp"), explicit_config(zoo_path("mlp")))
    broken = corrupt_copies(str(tmp_path / "broken"))
    for name, library in broken.items():
        add_model(repo, name, library, 'parameters: { key: "verify_checksum" value: { string_value: "true" } }\n')
    server = start_server(repo, name="corrupt")
    index = server.repository_index()
    assert index["mlp"]["state"] == "READY"
    x = mlp_input()
    np.testing.assert_array_equal(http_infer(server, "mlp", x), sorun_run(zoo_path("mlp"), {"data": x},
                                                                          str(tmp_path / "ref"))[0])
    log = server.log_text()
    for name, library in broken.items():
        entry = index[name]
        assert entry["state"] == "UNAVAILABLE", entry
        # sorun's own message (as `sorun run` prints it, less the CLI's hints after the cause), in
        # the index and the log, with the model's file name.
        cli = sorun_error(library, str(tmp_path / "cli"))
        cause = cli.split(": ", 1)[1][:60]
        assert os.path.join(repo, name, "1", "model.so") in entry["reason"]
        assert cause in entry["reason"], (entry["reason"], cause)
        assert "model '%s' version 1" % name in entry["reason"]
        assert cause in log
        status, _ = server.request("GET", "/v2/models/%s/ready" % name)
        assert status != 200
    assert server.alive()


def test_bad_config_fails_that_model_naming_the_problem(start_server, tmp_path):
    repo = str(tmp_path / "repo")
    add_model(repo, "mlp", zoo_path("mlp"))
    add_model(repo, "bad_dims", zoo_path("mlp"), 'input [ { name: "data" data_type: TYPE_FP32 dims: [ 1, 32 ] } ]\n'
                                                 'output [ { name: "softmax" data_type: TYPE_FP32 dims: [ 1, 10 ] } ]\n')
    add_model(repo, "bad_param", zoo_path("mlp"), 'parameters: { key: "num_thread" value: { string_value: "2" } }\n')
    add_model(repo, "bad_file", zoo_path("mlp"), 'parameters: { key: "model_file" value: { string_value: "x.so" } }\n')
    server = start_server(repo, name="badconfig")
    index = server.repository_index()
    assert index["mlp"]["state"] == "READY"
    assert "input 'data' has dims [1, 32] in config.pbtxt but the model's shape is [1, 64]" in index["bad_dims"]["reason"]
    assert "unknown parameter 'num_thread'" in index["bad_param"]["reason"]
    assert "x.so" in index["bad_file"]["reason"]


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_bad_requests_get_errors_naming_the_input(start_server, tmp_path, protocol):
    repo = str(tmp_path / "repo")
    add_model(repo, "mlp", zoo_path("mlp"), explicit_config(zoo_path("mlp")))
    add_model(repo, "mlp_batched", zoo_path("mlp"))  # auto-complete: max_batch_size 4
    server = start_server(repo, name="badreq")
    lib = httpclient if protocol == "http" else grpcclient
    client = lib.InferenceServerClient(server.http_url if protocol == "http" else server.grpc_url)
    x = mlp_input()

    def send(model, inputs):
        with pytest.raises(InferenceServerException) as err:
            client.infer(model, inputs)
        return str(err.value)

    def make(name, value, datatype):
        i = lib.InferInput(name, list(value.shape), datatype)
        i.set_data_from_numpy(value)
        return i

    msg = send("mlp", [make("data", np.zeros((1, 32), np.float32), "FP32")])
    assert "'data'" in msg and "shape" in msg, msg
    msg = send("mlp", [make("data", x.astype(np.float64), "FP64")])
    assert "'data'" in msg and "FP64" in msg, msg
    msg = send("mlp", [])
    assert "data" in msg, msg
    msg = send("mlp", [make("data", x, "FP32"), make("extra", x, "FP32")])
    assert "'extra'" in msg, msg
    msg = send("mlp_batched", [make("data", np.zeros((5, 64), np.float32), "FP32")])
    assert "batch" in msg.lower() or "shape" in msg.lower(), msg
    client.close()
    # Still serving, correctly.
    np.testing.assert_array_equal(http_infer(server, "mlp", x),
                                  sorun_run(zoo_path("mlp"), {"data": x}, str(tmp_path / "ref"))[0])
    assert server.alive()


def _raw_http(server, model, body_bytes, content_length, read_response):
    s = socket.create_connection(("127.0.0.1", server.http_port), timeout=10)
    header = ('{"inputs":[{"name":"data","shape":[1,16,48,48],"datatype":"FP32",'
              '"parameters":{"binary_data_size":%d}}]}' % (16 * 48 * 48 * 4)).encode()
    head = ("POST /v2/models/%s/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
            "Inference-Header-Content-Length: %d\r\nContent-Length: %d\r\n\r\n"
            % (model, len(header), content_length)).encode()
    s.sendall(head + header + body_bytes)
    if read_response:
        s.recv(1)
    s.close()


def test_client_disconnects_mid_request(start_server, tmp_path):
    """HTTP clients that hang up (body half sent; request sent, response never read) and gRPC calls
    cancelled in flight: the server keeps serving and answers the next client correctly."""
    repo = str(tmp_path / "repo")
    add_model(repo, "conv_heavy", zoo_path("conv_heavy"), explicit_config(zoo_path("conv_heavy")))
    add_model(repo, "mlp", zoo_path("mlp"), explicit_config(zoo_path("mlp")))
    server = start_server(repo, name="disconnect")
    x = np.load(os.path.join(os.environ["ZOO_DIR"], "conv_heavy_input.npy"))
    full = x.tobytes()
    for _ in range(5):
        _raw_http(server, "conv_heavy", full[:len(full) // 2], 200 + len(full), read_response=False)  # body cut
        _raw_http(server, "conv_heavy", full, 10**9, read_response=False)  # wrong length, hang up
    header_len = len(('{"inputs":[{"name":"data","shape":[1,16,48,48],"datatype":"FP32",'
                      '"parameters":{"binary_data_size":%d}}]}' % (16 * 48 * 48 * 4)).encode())
    for _ in range(10):
        _raw_http(server, "conv_heavy", full, header_len + len(full), read_response=False)  # full, unread
    g = grpcclient.InferenceServerClient(server.grpc_url)
    cancelled = []
    for _ in range(10):
        i = grpcclient.InferInput("data", list(x.shape), "FP32")
        i.set_data_from_numpy(x)
        done = threading.Event()
        future = g.async_infer("conv_heavy", [i], callback=lambda result, error: done.set())
        time.sleep(0.01)
        future.cancel()
        done.wait(10)
        cancelled.append(done.is_set())
    g.close()
    assert all(cancelled)
    time.sleep(1.0)  # let the abandoned requests finish on the server
    assert server.alive()
    reference = sorun_run(zoo_path("conv_heavy"), {"data": x}, str(tmp_path / "ref"))[0]
    client = httpclient.InferenceServerClient(server.http_url)
    i = httpclient.InferInput("data", list(x.shape), "FP32")
    i.set_data_from_numpy(x)
    result = client.infer("conv_heavy", [i])
    client.close()
    np.testing.assert_array_equal(list(result.as_numpy(o["name"]) for o in result.get_response()["outputs"])[0],
                                  reference)


def test_unload_and_reload_while_requests_flow(start_server, tmp_path):
    """--model-control-mode=explicit: 8 clients send requests (each its own input) while the model is
    unloaded and loaded 4 times. A request either gets ITS OWN correct output or a clean 'not
    available' error; the server never crashes; after the last load every client is served again."""
    repo = str(tmp_path / "repo")
    add_model(repo, "mlp", zoo_path("mlp"),
              explicit_config(zoo_path("mlp"), max_batch_size=8,
                              extra="dynamic_batching {}\ninstance_group [ { kind: KIND_CPU count: 2 } ]\n"))
    server = start_server(repo, ["--model-control-mode=explicit", "--load-model=mlp"], name="reload")
    base = mlp_input()
    clients = 8
    inputs = [(base * (1.0 + 0.25 * c)).astype(np.float32) for c in range(clients)]
    expected = [sorun_run(zoo_path("mlp"), {"data": inputs[c]}, str(tmp_path / ("ref%d" % c)))[0]
                for c in range(clients)]
    stop = threading.Event()
    results = [{"ok": 0, "unavailable": 0, "wrong": 0, "other": []} for _ in range(clients)]

    def client_loop(c):
        client = grpcclient.InferenceServerClient(server.grpc_url)
        i = grpcclient.InferInput("data", list(inputs[c].shape), "FP32")
        i.set_data_from_numpy(inputs[c])
        while not stop.is_set():
            try:
                y = client.infer("mlp", [i], client_timeout=30).as_numpy("softmax")
                if np.array_equal(y, expected[c]):
                    results[c]["ok"] += 1
                else:
                    results[c]["wrong"] += 1
            except InferenceServerException as e:
                text = str(e).lower()
                if any(k in text for k in ("unavailable", "not found", "unknown model", "not ready", "unload")):
                    results[c]["unavailable"] += 1
                    time.sleep(0.005)
                else:
                    results[c]["other"].append(str(e))
        client.close()

    threads = [threading.Thread(target=client_loop, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    try:
        for _ in range(4):
            time.sleep(0.4)
            status, body = server.request("POST", "/v2/repository/models/mlp/unload")
            assert status == 200, body
            time.sleep(0.3)
            status, body = server.request("POST", "/v2/repository/models/mlp/load")
            assert status == 200, body
        time.sleep(0.5)
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    assert server.alive()
    wrong = sum(r["wrong"] for r in results)
    others = [m for r in results for m in r["other"]]
    assert wrong == 0, "requests got another request's output"
    assert not others, others[:5]
    assert all(r["ok"] > 0 for r in results), results
    assert sum(r["unavailable"] for r in results) >= 0
    # Served again after the last load.
    for c in range(clients):
        np.testing.assert_array_equal(http_infer(server, "mlp", inputs[c]), expected[c])
