"""The zoo served by Triton with the sorun backend: results over HTTP and gRPC equal `sorun run`'s, the
auto-completed configuration and the metadata endpoint show the model's own names, shapes and dtypes,
Triton's dynamic batches run row by row, and the statistics and metrics count every request."""
import os
import re
import shutil
import subprocess
import urllib.request

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from conftest import (TRITON_DTYPES, add_model, explicit_config, record_measurement, settled_server, sorun_inspect,
                      sorun_run, zoo_path)

# Every CPU model of the zoo (big256 is served by test_load.py; mlp_cuda needs a GPU). chain10k's
# 10,000 sorun_empty nodes write nothing (its output is whatever the activation pool held): it is
# served and checked for shapes, not values.
ZOO = ["mlp", "cnn", "resblock", "digits", "conv_heavy", "chain10k"]
WITH_DEFINED_OUTPUT = [m for m in ZOO if m != "chain10k"]


@pytest.fixture(scope="module")
def zoo_repo(tmp_path_factory):
    """<m>: explicit config, max_batch_size 0; <m>_auto: only `backend: "sorun"` (auto-complete);
    mlp.sorun: only 1/model.so; cnn_tar: the .tar export (model_file parameter)."""
    repo = str(tmp_path_factory.mktemp("zoo_repo"))
    for name in ZOO:
        add_model(repo, name, zoo_path(name), explicit_config(zoo_path(name)))
        add_model(repo, name + "_auto", zoo_path(name))
    # No config.pbtxt at all: Triton takes the backend from the ".sorun" suffix of the directory name.
    os.makedirs(os.path.join(repo, "mlp.sorun", "1"))
    shutil.copyfile(zoo_path("mlp"), os.path.join(repo, "mlp.sorun", "1", "model.so"))
    add_model(repo, "cnn_tar", zoo_path("cnn_tar", ".tar"),
              'parameters: { key: "model_file" value: { string_value: "model.tar" } }\n', model_file="model.tar")
    return repo


@pytest.fixture(scope="module")
def zoo_server(zoo_repo):
    with settled_server(zoo_repo, "zoo") as server:
        yield server


def model_input(name):
    return np.load(os.path.join(os.environ["ZOO_DIR"], name + "_input.npy"))


def infer(protocol, server, model, inputs, outputs=None):
    """{output name: array} of one inference over `protocol` ("http" or "grpc")."""
    lib = httpclient if protocol == "http" else grpcclient
    client = (lib.InferenceServerClient(server.http_url) if protocol == "http"
              else lib.InferenceServerClient(server.grpc_url))
    try:
        infer_inputs = []
        for n, v in inputs.items():
            i = lib.InferInput(n, list(v.shape), TRITON_DTYPES[str(v.dtype)])
            i.set_data_from_numpy(v)
            infer_inputs.append(i)
        requested = None if outputs is None else [lib.InferRequestedOutput(o) for o in outputs]
        result = client.infer(model, infer_inputs, outputs=requested)
        names = outputs or [o["name"] for o in (result.get_response()["outputs"] if protocol == "http"
                                                else result.get_response(as_json=True)["outputs"])]
        return {n: result.as_numpy(n) for n in names}
    finally:
        client.close()


@pytest.mark.parametrize("protocol", ["http", "grpc"])
@pytest.mark.parametrize("name", WITH_DEFINED_OUTPUT)
def test_zoo_outputs_equal_sorun_run(zoo_server, tmp_path, name, protocol):
    x = model_input(name)
    (input_info,), outputs_info = sorun_inspect(zoo_path(name))
    reference = sorun_run(zoo_path(name), {input_info["name"]: x}, str(tmp_path))
    expected = np.load(os.path.join(os.environ["ZOO_DIR"], name + "_expected.npy"))
    for model, batch_input in ((name, x), (name + "_auto", x)):
        got = infer(protocol, zoo_server, model, {input_info["name"]: batch_input})
        assert list(got) == [o["name"] for o in outputs_info]
        y = got[outputs_info[0]["name"]]
        assert y.dtype == reference[0].dtype and y.shape == reference[0].shape, (model, y.shape)
        # Same library, same kernels, same thread partition: bit-identical to the CLI.
        np.testing.assert_array_equal(y, reference[0], err_msg="%s over %s differs from sorun run" % (model, protocol))
        np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)


def test_model_directory_without_config_serves(zoo_server, tmp_path):
    """<name>.sorun/1/model.so and nothing else: backend from the directory name, the rest from the model."""
    status, config = zoo_server.request("GET", "/v2/models/mlp.sorun/config")
    assert status == 200, config
    assert config["backend"] == "sorun" and config["max_batch_size"] == 4
    assert [(t["name"], [int(d) for d in t["dims"]]) for t in config["input"]] == [("data", [64])]
    x = model_input("mlp")
    got = infer("grpc", zoo_server, "mlp.sorun", {"data": x})
    np.testing.assert_array_equal(got["softmax"], sorun_run(zoo_path("mlp"), {"data": x}, str(tmp_path))[0])


def test_tar_export_served(zoo_server, tmp_path):
    x = model_input("cnn")
    reference = sorun_run(zoo_path("cnn_tar", ".tar"), {"data": x}, str(tmp_path))
    got = infer("http", zoo_server, "cnn_tar", {"data": x})
    np.testing.assert_array_equal(list(got.values())[0], reference[0])


@pytest.mark.parametrize("name", ZOO)
def test_metadata_and_auto_complete_show_the_model(zoo_server, name):
    inputs, outputs = sorun_inspect(zoo_path(name))
    for model, batched in ((name, False), (name + "_auto", True)):
        status, meta = zoo_server.request("GET", "/v2/models/%s" % model)
        assert status == 200, meta
        assert meta["platform"] == "sorun"

        def shapes(tensors):
            return [(t["name"], TRITON_DTYPES[t["dtype"]], ([-1] + t["shape"][1:]) if batched else t["shape"])
                    for t in tensors]

        assert [(t["name"], t["datatype"], t["shape"]) for t in meta["inputs"]] == shapes(inputs)
        assert [(t["name"], t["datatype"], t["shape"]) for t in meta["outputs"]] == shapes(outputs)
    # The auto-completed configuration: every zoo model has batch 1 first, so Triton's default
    # max_batch_size (4) with dynamic batching, dims without the batch dimension.
    status, config = zoo_server.request("GET", "/v2/models/%s_auto/config" % name)
    assert status == 200, config
    assert config["backend"] == "sorun"
    assert config["max_batch_size"] == 4
    assert "dynamic_batching" in config
    assert [(t["name"], t["data_type"], [int(d) for d in t["dims"]]) for t in config["input"]] == \
        [(t["name"], "TYPE_" + TRITON_DTYPES[t["dtype"]], t["shape"][1:]) for t in inputs]
    assert [(t["name"], t["data_type"], [int(d) for d in t["dims"]]) for t in config["output"]] == \
        [(t["name"], "TYPE_" + TRITON_DTYPES[t["dtype"]], t["shape"][1:]) for t in outputs]


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_batch_of_rows_runs_row_by_row(zoo_server, tmp_path, protocol):
    """A request with batch 3 on the auto-completed (max_batch_size 4) MLP: each output row is the
    model's output for that row alone."""
    x = model_input("mlp")
    rows = np.concatenate([x, -x, x * 0.5]).astype(np.float32)
    got = infer(protocol, zoo_server, "mlp_auto", {"data": rows})["softmax"]
    assert got.shape == (3, 10)
    for r in range(3):
        reference = sorun_run(zoo_path("mlp"), {"data": rows[r:r + 1]}, str(tmp_path))
        np.testing.assert_array_equal(got[r:r + 1], reference[0])


def test_statistics_and_metrics_count_requests(zoo_server):
    x = model_input("cnn")
    _, before = zoo_server.request("GET", "/v2/models/cnn/stats")
    before_success = before["model_stats"][0]["inference_stats"]["success"]["count"]
    for _ in range(7):
        infer("http", zoo_server, "cnn", {"data": x})
    status, stats = zoo_server.request("GET", "/v2/models/cnn/stats")
    assert status == 200, stats
    s = stats["model_stats"][0]
    assert s["inference_stats"]["success"]["count"] == before_success + 7
    assert s["inference_stats"]["compute_infer"]["count"] == before_success + 7
    assert s["inference_stats"]["compute_infer"]["ns"] > 0
    assert s["execution_count"] >= 7
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % zoo_server.metrics_port, timeout=10) as r:
        metrics = r.read().decode()
    m = re.search(r'nv_inference_request_success\{model="cnn",version="1"\} (\d+)', metrics)
    assert m and int(m.group(1)) == before_success + 7, metrics[:2000]
    m = re.search(r'nv_inference_compute_infer_duration_us\{model="cnn",version="1"\} (\d+)', metrics)
    assert m and int(m.group(1)) > 0


def test_backend_exports_only_entry_points():
    """nm -D: the TRITONBACKEND_* entry points and the TVM C ABI functions kernels call, nothing else."""
    backend = os.environ["SORUN_TRITON_BACKEND"]
    out = subprocess.run(["nm", "-D", "--defined-only", backend], capture_output=True, text=True, check=True).stdout
    names = sorted(line.split()[-1] for line in out.splitlines() if line.strip())
    entry = [n for n in names if n.startswith("TRITONBACKEND_")]
    assert entry == sorted(["TRITONBACKEND_Initialize", "TRITONBACKEND_Finalize", "TRITONBACKEND_GetBackendAttribute",
                            "TRITONBACKEND_ModelInitialize", "TRITONBACKEND_ModelFinalize",
                            "TRITONBACKEND_ModelInstanceInitialize", "TRITONBACKEND_ModelInstanceFinalize",
                            "TRITONBACKEND_ModelInstanceExecute"])
    others = [n for n in names if not n.startswith("TRITONBACKEND_")]
    assert others and all(n.startswith("TVM") for n in others), others
    assert "TVMBackendAllocWorkspace" in others and "TVMFuncCall" in others


def interop_models():
    root = os.environ.get("SORUN_INTEROP_DIR", "")
    if not root or not os.path.isdir(root):
        return []
    return sorted(d for d in os.listdir(root) if os.path.exists(os.path.join(root, d, "deploy.so")))


@pytest.mark.skipif(not interop_models(), reason="no TVM-built models (set SORUN_INTEROP_DIR to a tests/interop/"
                                                 "tvm_models.py output directory)")
def test_tvm_built_models_served(start_server, tmp_path):
    """Libraries exported by TVM's export_library, served with auto-complete, equal `sorun run`."""
    root = os.environ["SORUN_INTEROP_DIR"]
    repo = str(tmp_path / "repo")
    # The OpenCL variants (their graph places every entry on an OpenCL device) are served on PoCL through
    # the backend's `device` parameter; the rest on the CPU.
    device = {name: "opencl" if name.endswith("_opencl") else None for name in interop_models()}
    for name in interop_models():
        config = ('parameters: { key: "device" value: { string_value: "opencl" } }\n' if device[name] else "")
        add_model(repo, "tvm_" + name, os.path.join(root, name, "deploy.so"), config)
    server = start_server(repo, name="interop")
    index = server.repository_index()
    for name in interop_models():
        assert index["tvm_" + name]["state"] == "READY", index["tvm_" + name]
        d = os.path.join(root, name)
        inputs = {f[len("input_"):-4]: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d))
                  if f.startswith("input_") and f.endswith(".npy")}
        reference = sorun_run(os.path.join(d, "deploy.so"), inputs, str(tmp_path / name), device[name])
        _, meta = server.request("GET", "/v2/models/tvm_" + name)
        batched = meta["inputs"][0]["shape"][0] == -1
        got = infer("grpc", server, "tvm_" + name, inputs)
        outputs = [o["name"] for o in meta["outputs"]]
        for i, ref in enumerate(reference):
            np.testing.assert_array_equal(got[outputs[i]], ref)
        tvm_ref = os.path.join(d, "reference_output_0.npy")
        if os.path.exists(tvm_ref):
            np.testing.assert_allclose(got[outputs[0]], np.load(tvm_ref), rtol=1e-4, atol=1e-5)
        record_measurement("interop_served_" + name, {"batched": batched, "outputs": len(outputs)})
