"""Relax VM exports of TVM 0.27 (testdata/relax: mlp, cnn, dyn_batch) served by Triton with the sorun
backend, over HTTP and gRPC, with an explicit config.pbtxt and with auto-complete. Outputs are
bit-identical to TVM's (the .npy references) and to `sorun run`. dyn_batch (x[n, 8] -> a tuple of two
[n, 4] tensors) has a dynamic batch dimension: the backend serves it as Triton's batch dimension
(max_batch_size > 0, dims without it) and runs Triton's whole batch in one run; max_batch_size: 0 with
dims [-1, 8] is refused with a message saying so. The bytecode of these exports does not tell main's
outputs, so the backend learns them (output_0, output_1...) by running the model at load. 0-d tensors
(prim_scale's R.Prim parameter, bool_if's bool scalar, row_argmax's one value per batch row) are served as
one-element tensors (dims [1]), and a config.pbtxt reshape is served as Triton defines it."""
import concurrent.futures
import os

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from conftest import ROOT, add_model, settled_server, sorun_run

RELAX_DIR = os.path.join(ROOT, "testdata", "relax")
STATIC = ["mlp", "cnn"]


def relax_file(name, suffix=".so"):
    path = os.path.join(RELAX_DIR, name + suffix)
    assert os.path.exists(path), "missing fixture %s" % path
    return path


def reference(name):
    """(input x, [TVM's outputs]) of testdata/relax/<name>."""
    x = np.load(relax_file(name, ".input_0.npy"))
    outputs = []
    while os.path.exists(os.path.join(RELAX_DIR, "%s.output_%d.npy" % (name, len(outputs)))):
        outputs.append(np.load(os.path.join(RELAX_DIR, "%s.output_%d.npy" % (name, len(outputs)))))
    return x, outputs


def dims(shape):
    return ", ".join(str(d) for d in shape)


def static_config(name):
    x, ys = reference(name)
    outputs = ",\n".join('  { name: "output_%d" data_type: TYPE_FP32 dims: [ %s ] }' % (k, dims(y.shape))
                         for k, y in enumerate(ys))
    return ('max_batch_size: 0\ninput [ { name: "x" data_type: TYPE_FP32 dims: [ %s ] } ]\noutput [\n%s\n]\n'
            % (dims(x.shape), outputs))


# dyn_batch: the batch dimension is Triton's; the queue delay lets concurrent requests merge into one run.
DYN_CONFIG = """max_batch_size: 8
input [ { name: "x" data_type: TYPE_FP32 dims: [ 8 ] } ]
output [
  { name: "output_0" data_type: TYPE_FP32 dims: [ 4 ] },
  { name: "output_1" data_type: TYPE_FP32 dims: [ 4 ] }
]
dynamic_batching { max_queue_delay_microseconds: 100000 }
"""


# 0-d inputs: prim_scale's k is an R.Prim("int64") parameter, bool_if's c a 0-d bool tensor. Triton has no
# 0-d tensors without batching (empty dims and an empty reshape are refused): they are served as dims [1].
ZERO_D = ["prim_scale", "bool_if"]
PRIM_CONFIG = """max_batch_size: 0
input [
  { name: "x" data_type: TYPE_FP32 dims: [ 4, 8 ] },
  { name: "k" data_type: TYPE_INT64 dims: [ 1 ] }
]
output [ { name: "output_0" data_type: TYPE_FP32 dims: [ 4, 8 ] } ]
"""
# A reshape: clients send x[16] and receive [10]; the model sees [1, 16] and gives [1, 10].
MLP_RESHAPE_CONFIG = """max_batch_size: 0
input [ { name: "x" data_type: TYPE_FP32 dims: [ 16 ] reshape: { shape: [ 1, 16 ] } } ]
output [ { name: "output_0" data_type: TYPE_FP32 dims: [ 10 ] reshape: { shape: [ 1, 10 ] } } ]
"""


def all_references(name):
    """([inputs], [TVM's outputs]) of testdata/relax/<name>, as the .npy files hold them."""
    def files(kind):
        out = []
        while os.path.exists(os.path.join(RELAX_DIR, "%s.%s_%d.npy" % (name, kind, len(out)))):
            out.append(np.load(os.path.join(RELAX_DIR, "%s.%s_%d.npy" % (name, kind, len(out)))))
        return out
    return files("input"), files("output")


@pytest.fixture(scope="module")
def relax_server(tmp_path_factory):
    repo = str(tmp_path_factory.mktemp("relax_repo"))
    for name in STATIC:
        add_model(repo, "relax_" + name, relax_file(name), static_config(name))
        add_model(repo, "relax_%s_auto" % name, relax_file(name))
    add_model(repo, "relax_dyn", relax_file("dyn_batch"), DYN_CONFIG)
    add_model(repo, "relax_dyn_auto", relax_file("dyn_batch"))
    for name in ZERO_D:
        add_model(repo, "relax_%s_auto" % name, relax_file(name))
    add_model(repo, "relax_prim", relax_file("prim_scale"), PRIM_CONFIG)
    add_model(repo, "relax_mlp_reshape", relax_file("mlp"), MLP_RESHAPE_CONFIG)
    add_model(repo, "relax_row_argmax_auto", relax_file("row_argmax"))
    with settled_server(repo, "relax") as server:
        yield server


def infer(protocol, server, model, x, outputs):
    lib = httpclient if protocol == "http" else grpcclient
    client = lib.InferenceServerClient(server.http_url if protocol == "http" else server.grpc_url)
    try:
        i = lib.InferInput("x", list(x.shape), "FP32")
        i.set_data_from_numpy(x)
        result = client.infer(model, [i], outputs=[lib.InferRequestedOutput(o) for o in outputs])
        return [result.as_numpy(o) for o in outputs]
    finally:
        client.close()


@pytest.mark.parametrize("protocol", ["http", "grpc"])
@pytest.mark.parametrize("name", STATIC)
def test_static_relax_outputs_equal_tvm_and_sorun_run(relax_server, tmp_path, name, protocol):
    x, (tvm_y,) = reference(name)
    (cli_y,) = sorun_run(relax_file(name), {"x": x}, str(tmp_path))
    np.testing.assert_array_equal(cli_y, tvm_y)
    for model in ("relax_" + name, "relax_%s_auto" % name):
        (y,) = infer(protocol, relax_server, model, x, ["output_0"])
        assert y.dtype == np.float32 and y.shape == tvm_y.shape, (model, y.shape)
        np.testing.assert_array_equal(y, tvm_y, err_msg="%s over %s differs from TVM" % (model, protocol))


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_dynamic_batch_of_three_equals_tvm(relax_server, tmp_path, protocol):
    x, tvm_ys = reference("dyn_batch")
    assert x.shape == (3, 8) and len(tvm_ys) == 2
    cli_ys = sorun_run(relax_file("dyn_batch"), {"x": x}, str(tmp_path))
    for model in ("relax_dyn", "relax_dyn_auto"):
        ys = infer(protocol, relax_server, model, x, ["output_0", "output_1"])
        for k in range(2):
            assert ys[k].shape == (3, 4), (model, k, ys[k].shape)
            np.testing.assert_array_equal(ys[k], tvm_ys[k], err_msg="%s output_%d over %s" % (model, k, protocol))
            np.testing.assert_array_equal(ys[k], cli_ys[k])


def test_dynamic_batch_sizes_and_merged_requests(relax_server):
    """Batches 1, 2, 5 and 8 alone, then 12 concurrent requests of 1-3 rows that Triton's dynamic batcher
    merges into runs of up to 8 rows: every response holds TVM's rows for its own input rows."""
    x, tvm_ys = reference("dyn_batch")
    rng = np.random.default_rng(5)
    picks = [rng.integers(0, 3, size=n) for n in (1, 2, 5, 8)]
    for rows in picks:
        ys = infer("grpc", relax_server, "relax_dyn", x[rows], ["output_0", "output_1"])
        for k in range(2):
            np.testing.assert_array_equal(ys[k], tvm_ys[k][rows])
    picks = [rng.integers(0, 3, size=1 + c % 3) for c in range(12)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=12) as pool:
        results = list(pool.map(lambda rows: infer("http", relax_server, "relax_dyn", x[rows],
                                                   ["output_0", "output_1"]), picks))
    for rows, ys in zip(picks, results):
        for k in range(2):
            np.testing.assert_array_equal(ys[k], tvm_ys[k][rows])
    _, stats = relax_server.request("GET", "/v2/models/relax_dyn/stats")
    s = stats["model_stats"][0]
    # Merged: fewer runs than requests (Triton counts a run of several requests once).
    assert s["execution_count"] < s["inference_count"], s


def test_auto_complete_and_metadata(relax_server):
    expect = {"relax_mlp_auto": ([16], [[10]]), "relax_cnn_auto": ([3, 16, 16], [[10]]),
              "relax_dyn_auto": ([8], [[4], [4]])}
    for model, (in_dims, out_dims) in expect.items():
        status, config = relax_server.request("GET", "/v2/models/%s/config" % model)
        assert status == 200, config
        # Every one has a batch dimension (1, or dynamic for dyn_batch): Triton's default of 4 rows.
        assert config["max_batch_size"] == 4 and "dynamic_batching" in config, config
        assert [(t["name"], t["data_type"], [int(d) for d in t["dims"]]) for t in config["input"]] == \
            [("x", "TYPE_FP32", in_dims)]
        assert [(t["name"], t["data_type"], [int(d) for d in t["dims"]]) for t in config["output"]] == \
            [("output_%d" % k, "TYPE_FP32", d) for k, d in enumerate(out_dims)]
        status, meta = relax_server.request("GET", "/v2/models/" + model)
        assert status == 200, meta
        assert [(t["name"], t["shape"]) for t in meta["inputs"]] == [("x", [-1] + in_dims)]
        assert [(t["name"], t["shape"]) for t in meta["outputs"]] == \
            [("output_%d" % k, [-1] + d) for k, d in enumerate(out_dims)]
    # The batch-1 MLP served with max_batch_size 4: a batch of 3 runs row by row.
    x, (tvm_y,) = reference("mlp")
    rows = np.concatenate([x, x, x])
    (y,) = infer("grpc", relax_server, "relax_mlp_auto", rows, ["output_0"])
    np.testing.assert_array_equal(y, np.concatenate([tvm_y] * 3))


def test_bad_relax_configs_are_refused(start_server, tmp_path):
    """A dynamic dimension without batching, a wrong output name and wrong dims: the model is
    UNAVAILABLE with a reason that says what to write."""
    repo = str(tmp_path / "repo")
    add_model(repo, "dyn_no_batch", relax_file("dyn_batch"), DYN_CONFIG.replace("max_batch_size: 8", "max_batch_size: 0")
              .replace("dims: [ 8 ]", "dims: [ -1, 8 ]").replace("dims: [ 4 ]", "dims: [ -1, 4 ]"))
    add_model(repo, "mlp_bad_output", relax_file("mlp"), static_config("mlp").replace("output_0", "logits"))
    add_model(repo, "mlp_bad_dims", relax_file("mlp"), static_config("mlp").replace("[ 1, 10 ]", "[ 1, 12 ]"))
    add_model(repo, "mlp_bad_reshape", relax_file("mlp"), MLP_RESHAPE_CONFIG.replace("[ 1, 16 ]", "[ 2, 8 ]"))
    add_model(repo, "prim_bad_dims", relax_file("prim_scale"), PRIM_CONFIG.replace("dims: [ 1 ]", "dims: [ 2 ]"))
    server = start_server(repo, name="relax_bad")
    index = server.repository_index()
    assert all(index[m]["state"] == "UNAVAILABLE" for m in index), index
    assert ("input 'x' has a dynamic first dimension (model shape [-1, 8]): serve it as Triton's batch dimension, "
            "with max_batch_size > 0 and dims [8]") in index["dyn_no_batch"]["reason"]
    assert "output 'logits' is not an output of the model; the model's outputs: output_0" in \
        index["mlp_bad_output"]["reason"]
    assert "output 'output_0' has dims [1, 12] in config.pbtxt but the model's shape is [1, 10]" in \
        index["mlp_bad_dims"]["reason"]
    assert "input 'x' has reshape [2, 8] in config.pbtxt but the model's shape is [1, 16]" in \
        index["mlp_bad_reshape"]["reason"]
    assert "input 'k' has dims [2] in config.pbtxt but the model's shape is [] (0-d: write dims [1])" in \
        index["prim_bad_dims"]["reason"]


TRITON_TYPES = {np.dtype("float32"): "FP32", np.dtype("int64"): "INT64", np.dtype("bool"): "BOOL"}


@pytest.mark.parametrize("protocol", ["http", "grpc"])
@pytest.mark.parametrize("name", ZERO_D)
def test_zero_dim_inputs_are_one_element_tensors(relax_server, tmp_path, name, protocol):
    """Auto-complete serves each 0-d input as dims [1]; the model receives the value (R.Prim: as main's
    scalar argument) and gives TVM's outputs, as `sorun run` does with the 0-d .npy files."""
    inputs, tvm_ys = all_references(name)
    assert inputs[1].shape == () and len(tvm_ys) >= 1
    model = "relax_%s_auto" % name
    status, config = relax_server.request("GET", "/v2/models/%s/config" % model)
    assert status == 200, config
    assert config["max_batch_size"] == 0, config
    assert [[int(d) for d in t["dims"]] for t in config["input"]] == [list(inputs[0].shape), [1]], config
    names = [t["name"] for t in config["input"]]
    cli_ys = sorun_run(relax_file(name), dict(zip(names, inputs)), str(tmp_path))
    lib = httpclient if protocol == "http" else grpcclient
    client = lib.InferenceServerClient(relax_server.http_url if protocol == "http" else relax_server.grpc_url)
    try:
        for m in [model] + (["relax_prim"] if name == "prim_scale" else []):
            request = []
            for n, a in zip(names, inputs):
                a = a.reshape(a.shape or (1,))
                request.append(lib.InferInput(n, list(a.shape), TRITON_TYPES[a.dtype]))
                request[-1].set_data_from_numpy(a)
            outputs = ["output_%d" % k for k in range(len(tvm_ys))]
            result = client.infer(m, request, outputs=[lib.InferRequestedOutput(o) for o in outputs])
            for k, o in enumerate(outputs):
                y = result.as_numpy(o)
                assert y.dtype == tvm_ys[k].dtype and y.shape == tvm_ys[k].shape, (m, o, y.dtype, y.shape)
                np.testing.assert_array_equal(y, tvm_ys[k], err_msg="%s %s over %s differs from TVM" % (m, o, protocol))
                np.testing.assert_array_equal(y, cli_ys[k])
        # A wrong shape for the scalar is Triton's 400 before the backend runs.
        bad = lib.InferInput(names[1], [2], TRITON_TYPES[inputs[1].dtype])
        bad.set_data_from_numpy(np.repeat(inputs[1].reshape(1), 2))
        first = lib.InferInput(names[0], list(inputs[0].shape), "FP32")
        first.set_data_from_numpy(inputs[0])
        with pytest.raises(Exception, match="unexpected shape for input '%s'" % names[1]):
            client.infer(model, [first, bad])
    finally:
        client.close()


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_reshape_serves_the_clients_dims(relax_server, protocol):
    """config.pbtxt reshape: clients send x[16] and receive output_0[10]; the model runs on [1, 16]."""
    x, (tvm_y,) = reference("mlp")
    (y,) = infer(protocol, relax_server, "relax_mlp_reshape", x.reshape(16), ["output_0"])
    assert y.shape == (10,), y.shape
    np.testing.assert_array_equal(y, tvm_y.reshape(10))


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_one_value_per_row_is_a_one_element_row(relax_server, protocol):
    """row_argmax (x[n, 8] -> argmax and max over axis 1, [n] each): batched by auto-complete, each output
    a 0-d tensor per row, served as dims [1]: a batch of 3 rows receives [3, 1]."""
    x, tvm_ys = reference("row_argmax")
    status, config = relax_server.request("GET", "/v2/models/relax_row_argmax_auto/config")
    assert status == 200, config
    assert config["max_batch_size"] == 4, config
    assert [[int(d) for d in t["dims"]] for t in config["output"]] == [[1], [1]], config
    ys = infer(protocol, relax_server, "relax_row_argmax_auto", x, ["output_0", "output_1"])
    for y, tvm_y in zip(ys, tvm_ys):
        assert y.dtype == tvm_y.dtype and y.shape == (3, 1), (y.dtype, y.shape)
        np.testing.assert_array_equal(y, tvm_y.reshape(3, 1))
