"""The API of issue 15 line by line, on the zoo models, against the installed wheel."""
import os

import numpy as np
import pytest

import sorun
from conftest import ZOO, aligned_empty


@pytest.mark.smoke
def test_imported_from_installed_wheel_not_the_repository():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    assert not os.path.abspath(sorun.__file__).startswith(repo + os.sep), sorun.__file__
    assert "site-packages" in sorun.__file__
    assert sorun.__version__ == "0.1.0"


@pytest.mark.smoke
@pytest.mark.parametrize("name", ZOO)
def test_zoo_model_matches_expected_output(zoo, name):
    model = sorun.load(zoo(name))
    x, expected = np.load(zoo(name, "_input.npy")), np.load(zoo(name, "_expected.npy"))
    (data,) = [i.name for i in model.inputs if not i.is_param]
    out = model.executor(device="cpu")(**{data: x})
    assert len(out) == 1
    got = np.asarray(out[0])
    assert got.shape == expected.shape and got.dtype == expected.dtype
    if name == "chain10k":
        return  # its kernels write nothing (a dispatch benchmark): the output is whatever its pool held
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_inputs_and_outputs_readable_without_running(mlp):
    inputs = {i.name: i for i in mlp.inputs}
    assert inputs["data"].shape == (1, 64) and inputs["data"].dtype == "float32"
    assert not inputs["data"].is_param
    assert inputs["fc1_w"].is_param and inputs["fc1_w"].shape == (128, 64)
    assert [(o.name, o.shape, o.dtype) for o in mlp.outputs] == [("softmax", (1, 10), "float32")]
    assert "fc1_w" in repr(inputs["fc1_w"]) and "is_param=True" in repr(inputs["fc1_w"])


@pytest.mark.smoke
def test_run_with_dict_keywords_and_call(mlp, mlp_data):
    x, expected = mlp_data
    ex = mlp.executor(device="cpu")
    for out in (ex.run(data=x), ex.run({"data": x}), ex(data=x)):
        assert isinstance(out, list) and isinstance(out[0], sorun.Tensor)
        np.testing.assert_allclose(np.asarray(out[0]), expected, rtol=1e-5, atol=1e-7)
    assert ex.run() is None  # pre-set inputs: nothing is copied back


def test_run_outputs_are_copies_that_survive_the_next_run(mlp, mlp_data):
    x, expected = mlp_data
    ex = mlp.executor()
    first = ex.run(data=x)[0]
    ex.run(data=np.zeros_like(x))
    np.testing.assert_allclose(np.asarray(first), expected, rtol=1e-5, atol=1e-7)


def test_tvm_graphmodule_names(mlp, mlp_data):
    x, expected = mlp_data
    ex = mlp.executor()
    ex.set_input("data", x)
    ex.run()
    y = ex.get_output(0)
    assert (y.shape, y.dtype, y.device, y.ndim) == ((1, 10), "float32", "cpu:0", 2)
    np.testing.assert_allclose(np.from_dlpack(y), expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(np.asarray(ex.get_output("softmax")), np.asarray(y))
    assert ex.get_num_inputs() == 7 and ex.get_num_outputs() == 1
    assert ex.get_input_info() == ({"data": (1, 64)}, {"data": "float32"})
    ex.set_input(data=np.zeros_like(x))  # keyword form
    ex.set_input(0, x)                   # index form
    ex.run()
    np.testing.assert_allclose(np.asarray(ex.get_output(0)), expected, rtol=1e-5, atol=1e-7)


@pytest.mark.smoke
def test_get_output_is_a_view_the_next_run_overwrites(mlp, mlp_data):
    x, expected = mlp_data
    ex = mlp.executor()
    y = ex.get_output(0)
    ex.run(data=x)  # returns copies; y views the executor's memory
    np.testing.assert_allclose(np.asarray(y), expected, rtol=1e-5, atol=1e-7)
    kept = y.copy()
    ex.run(data=np.zeros_like(x))
    assert not np.allclose(np.asarray(y), expected)
    np.testing.assert_allclose(np.asarray(kept), expected, rtol=1e-5, atol=1e-7)


def test_many_executors_share_weights_and_agree(mlp, mlp_data):
    x, expected = mlp_data
    executors = [mlp.executor() for _ in range(8)]
    for ex in executors:
        np.testing.assert_allclose(np.asarray(ex.run(data=x)[0]), expected, rtol=1e-5, atol=1e-7)
    assert all(ex.model is mlp for ex in executors)
    assert executors[0].devices == ["cpu:0"]


def test_load_params_and_share_params(zoo, mlp, mlp_data):
    x, expected = mlp_data
    with open(zoo("mlp", ".params"), "rb") as f:
        params = f.read()
    a = mlp.executor()
    a.load_params(params)  # the same weights, copied in: same result
    np.testing.assert_allclose(np.asarray(a.run(data=x)[0]), expected, rtol=1e-5, atol=1e-7)
    b = mlp.executor()
    b.share_params(a, params)
    np.testing.assert_allclose(np.asarray(b.run(data=x)[0]), expected, rtol=1e-5, atol=1e-7)
    with pytest.raises(sorun.Error):
        a.load_params(b"not a params file")


def test_three_file_and_tar(zoo, mlp_data):
    x, expected = np.load(zoo("cnn", "_input.npy")), np.load(zoo("cnn", "_expected.npy"))
    three = sorun.load(zoo("cnn"), graph=zoo("cnn", ".json"), params=zoo("cnn", ".params"))
    assert any(i.is_param for i in three.inputs)
    np.testing.assert_allclose(np.asarray(three.executor()(data=x)[0]), expected, rtol=1e-5, atol=1e-6)
    tar = sorun.load(zoo("cnn_tar", ".tar"))
    np.testing.assert_allclose(np.asarray(tar.executor()(data=x)[0]), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.smoke
def test_zero_copy_input_and_output(mlp, mlp_data):
    x, expected = mlp_data
    ex = mlp.executor()
    xin = aligned_empty(x.shape, np.float32)
    yout = aligned_empty((1, 10), np.float32)
    ex.set_input_zero_copy("data", xin)
    ex.set_output_zero_copy(0, yout)
    xin[...] = x  # the kernels read the bound array itself
    ex.run()
    np.testing.assert_allclose(yout, expected, rtol=1e-5, atol=1e-7)
    misaligned = aligned_empty((65 * 4,), np.uint8)[4:].view(np.float32).reshape(1, 64)  # 4 bytes off
    with pytest.raises(sorun.InvalidArgumentError, match="align"):
        ex.set_input_zero_copy("data", misaligned)


def test_zero_copy_keeps_the_array_alive(mlp, mlp_data):
    x, expected = mlp_data
    ex = mlp.executor()
    xin = aligned_empty(x.shape, np.float32)
    xin[...] = x
    ex.set_input_zero_copy("data", xin)
    del xin  # the executor holds the buffer
    ex.run()
    np.testing.assert_allclose(np.asarray(ex.get_output(0)), expected, rtol=1e-5, atol=1e-7)


def test_bench_run_loop_runs_the_preset_graph(mlp, mlp_data):
    # The private C++ baseline of bench/python_overhead.py: n real Run() calls on the executor's inputs.
    x, expected = mlp_data
    ex = mlp.executor()
    ex.run(data=np.zeros_like(x))  # the output now differs from `expected`
    assert not np.allclose(np.asarray(ex.get_output(0)), expected)
    ex.set_input("data", x)  # only a real run makes the output `expected` again
    ns = sorun._sorun._bench_run_loop(ex, 3)
    assert isinstance(ns, int) and ns > 0
    np.testing.assert_allclose(np.asarray(ex.get_output(0)), expected, rtol=1e-5, atol=1e-7)
    with pytest.raises(sorun.InvalidArgumentError, match="n must be >= 1"):
        sorun._sorun._bench_run_loop(ex, 0)


def test_profile_table(mlp):
    rows = mlp.executor().profile(repeat=3)
    assert [r["name"] for r in rows][:2] == ["fc1", "fc2"]
    for r in rows:
        assert set(r) == {"node_id", "name", "func_name", "mean_us", "min_us"}
        assert 0 < r["min_us"] <= r["mean_us"]


def test_streams_of_a_cpu_executor(mlp, mlp_data):
    """A CPU executor queues no device work: synchronize() returns, a stream is refused naming why."""
    x, expected = mlp_data
    ex = mlp.executor()
    ex.run(data=x)
    ex.synchronize()
    with pytest.raises(sorun.InvalidArgumentError, match="a CPU executor queues nothing"):
        ex.stream("cuda:0")
    with pytest.raises(sorun.InvalidArgumentError, match="stream of cuda:0"):
        ex.set_stream("cuda:0", 0)
    with pytest.raises(sorun.InvalidArgumentError, match="bad device"):
        ex.stream("opencl:x")


@pytest.mark.smoke
def test_executor_options_memory_and_graph_report(mlp, mlp_data):
    """ExecutorOptions' warmup / cuda_graph, Memory() and GraphReport() as the C++ API gives them."""
    x, expected = mlp_data
    assert mlp.capabilities == {"output_zero_copy": True, "params_files": True}
    ex = mlp.executor(warmup=True, cuda_graph=True)
    assert ex.capabilities == mlp.capabilities
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(ex.run(data=x)[0]), expected, rtol=1e-5, atol=1e-7)
    report = ex.graph_report()
    assert report["requested"] and not report["active"]
    assert report["captures"] == 0 and report["replays"] == 0 and report["uncaptured_runs"] == 3
    assert "runs on the CPU only" in report["refusal"], report
    plain = mlp.executor()
    assert plain.graph_report()["requested"] is False and plain.graph_report()["refusal"] == ""
    (cpu,) = ex.memory()
    assert cpu["device"] == "cpu:0"
    assert cpu["weight_bytes"] == sum(4 * np.prod(i.shape) for i in mlp.inputs if i.is_param)
    assert cpu["activation_bytes"] > 0 and cpu["workspace_bytes"] >= 0
    plain.warmup()
    with pytest.raises(TypeError):
        mlp.executor("cpu", None, None, None, True)  # warmup / cuda_graph are keyword-only


def test_num_threads(mlp, mlp_data):
    x, expected = mlp_data
    n = sorun.num_threads()
    assert n >= 1
    assert mlp.executor().num_threads == n  # the process-wide pool
    own = mlp.executor(num_threads=n + 1, spin_us=0)  # a pool of its own (ExecutorOptions)
    assert own.num_threads == n + 1
    np.testing.assert_allclose(np.asarray(own.run(data=x)[0]), expected, rtol=1e-5, atol=1e-7)
    pinned = mlp.executor(num_threads=2, cpu_affinity=[sorted(os.sched_getaffinity(0))[-1]])
    np.testing.assert_allclose(np.asarray(pinned.run(data=x)[0]), expected, rtol=1e-5, atol=1e-7)
    with pytest.raises(sorun.InvalidArgumentError, match="num_threads -1"):
        mlp.executor(num_threads=-1)
    with pytest.raises(sorun.InvalidArgumentError, match="CPU 100000"):
        mlp.executor(num_threads=2, cpu_affinity=[100000])


def test_opencl_on_pocl_or_unavailable(zoo):
    model = sorun.load(zoo("mlp_opencl"))
    x, expected = np.load(zoo("mlp_opencl", "_input.npy")), np.load(zoo("mlp_opencl", "_expected.npy"))
    try:
        ex = model.executor(device="opencl")
    except sorun.UnavailableError as e:
        pytest.skip("no OpenCL platform: %s" % e)
    assert ex.devices[0] == "opencl:0"
    np.testing.assert_allclose(np.asarray(ex.run(data=x)[0]), expected, rtol=1e-4, atol=1e-6)
    y = ex.get_output(0)
    np.testing.assert_allclose(np.asarray(y.copy()), expected, rtol=1e-4, atol=1e-6)


@pytest.mark.smoke
def test_load_from_bytes_matches_the_file(zoo, tmp_path):
    path = zoo("cnn")
    x = np.load(zoo("cnn", "_input.npy"))
    from_file = np.asarray(sorun.load(path).executor()(data=x)[0])
    blob = bytearray(open(path, "rb").read())
    model = sorun.load(memoryview(blob), name="cnn.so")
    assert model.path == "cnn.so"
    blob[:] = b"\0" * len(blob)  # the caller's buffer may change once load returns
    assert np.asarray(model.executor()(data=x)[0]).tobytes() == from_file.tobytes()
    import pathlib
    assert sorun.load(pathlib.Path(path)).path == path  # os.PathLike still means a path


def test_load_from_bytes_errors_name_the_bytes(zoo):
    data = open(zoo("mlp"), "rb").read()
    with pytest.raises(sorun.DataLossError, match="^cut.so: "):
        sorun.load(data[:1000], name="cut.so")
    with pytest.raises(sorun.InvalidArgumentError, match="graph= and params= need a library path"):
        sorun.load(data, graph="g.json")


@pytest.mark.smoke
def test_load_hooks_decrypt_and_verify(zoo, mlp_data):
    data = open(zoo("mlp"), "rb").read()
    key = np.frombuffer(b"\x5a", dtype=np.uint8)
    stored = (np.frombuffer(data, dtype=np.uint8) ^ key).tobytes()
    seen = {}

    def decrypt(view, name):
        seen["decrypt"] = (len(view), name)
        return (np.frombuffer(view, dtype=np.uint8) ^ key).tobytes()

    def verify(view, name):
        seen["verify"] = bytes(view[:4])
        if bytes(view[:4]) != b"\x7fELF":
            raise ValueError("not a library")

    model = sorun.load(stored, name="mlp.enc", decrypt=decrypt, verify_library=verify)
    assert seen == {"decrypt": (len(data), "mlp.enc"), "verify": b"\x7fELF"}
    x, expected = mlp_data
    np.testing.assert_allclose(np.asarray(model.executor()(data=x)[0]), expected, rtol=1e-5, atol=1e-6)

    def refuse(view, name):
        raise ValueError(name + " carries no signature")

    with pytest.raises(sorun.PermissionDeniedError, match="mlp.so carries no signature"):
        sorun.load(zoo("mlp"), verify_library=refuse)
