"""Bad inputs from Python and object lifetimes: clear sorun.Error subclasses, never a crash."""
import gc

import numpy as np
import pytest

import sorun

pytestmark = pytest.mark.smoke  # every version's wheel runs this file (run_wheel_matrix.sh)


def test_error_hierarchy_carries_code_and_message(mlp, mlp_data):
    x, _ = mlp_data
    with pytest.raises(sorun.InvalidArgumentError) as e:
        mlp.executor().set_input("data", x.astype(np.float64))
    assert isinstance(e.value, sorun.Error) and isinstance(e.value, RuntimeError)
    assert e.value.code == "invalid_argument"
    assert str(e.value) == "set_input 'data': expected float32[1, 64], got float64[1, 64]"


def test_wrong_shape(mlp):
    with pytest.raises(sorun.InvalidArgumentError, match=r"expected float32\[1, 64\], got float32\[2, 64\]"):
        mlp.executor().run(data=np.ones((2, 64), np.float32))


def test_non_contiguous_array(mlp):
    strided = np.ones((1, 128), np.float32)[:, ::2]
    assert strided.shape == (1, 64) and not strided.flags.c_contiguous
    # The C++ copy refuses strided tensors (the message names both tensors); np.ascontiguousarray fixes it.
    with pytest.raises(sorun.UnimplementedError, match="set_input 'data': copy of strided tensors is not supported"):
        mlp.executor().set_input("data", strided)


def test_unknown_input_and_output_names(mlp):
    ex = mlp.executor()
    with pytest.raises(sorun.NotFoundError, match="no input named 'nope' \\(inputs: data\\)"):
        ex.set_input("nope", np.ones((1, 64), np.float32))
    with pytest.raises(sorun.NotFoundError, match="nope"):
        ex.get_output("nope")
    with pytest.raises(sorun.OutOfRangeError):
        ex.get_output(5)


@pytest.mark.parametrize("device", ["tpu", "cpu:x", "opencl:-1", ""])
def test_bad_device_string(mlp, device):
    with pytest.raises(sorun.InvalidArgumentError, match="device"):
        mlp.executor(device=device)


@pytest.mark.parametrize("device,module", [("opencl", "OpenCL"), ("cuda:1", "CUDA"), (["cpu", "opencl"], "OpenCL")])
def test_cpu_model_on_a_device_is_refused(mlp, device, module):
    # mlp.so's kernels are the CPU's: refused before the backend is asked whether the device exists.
    assert mlp.device_types_needed == ["cpu"]
    with pytest.raises(sorun.InvalidArgumentError) as e:
        mlp.executor(device=device)
    assert str(e.value).startswith(mlp.path + ": it has kernels for cpu only (no %s module): it cannot run on " % module)


def test_opencl_model_on_the_cpu_is_refused(zoo):
    model = sorun.load(zoo("mlp_opencl"))
    assert model.device_types_needed == ["opencl"]
    for device in ("cpu", "cuda"):
        with pytest.raises(sorun.InvalidArgumentError) as e:
            model.executor(device=device)
        assert str(e.value) == (model.path + ": its kernels are in an OpenCL module: it needs an opencl device, "
                                "the executor was given %s:0" % device)


def test_not_an_array(mlp):
    with pytest.raises(sorun.InvalidArgumentError, match="expected an array .* got str"):
        mlp.executor().set_input("data", "hello")
    with pytest.raises(sorun.InvalidArgumentError, match="buffer format"):
        mlp.executor().set_input("data", np.array([[object()] * 64]))


def test_missing_and_corrupt_files(tmp_path):
    with pytest.raises(sorun.Error, match="no_such.so"):
        sorun.load(str(tmp_path / "no_such.so"))
    bad = tmp_path / "bad.so"
    bad.write_bytes(b"\x7fELF" + b"\0" * 60)
    with pytest.raises(sorun.Error, match="bad.so"):
        sorun.load(str(bad))
    with pytest.raises(sorun.InvalidArgumentError, match="params= needs graph="):
        sorun.load(str(bad), params="p.params")


def test_run_keywords_misused(mlp):
    with pytest.raises(TypeError):
        mlp.executor().run(1, 2)


def test_model_dropped_before_executor(zoo, mlp_data):
    x, expected = mlp_data
    ex = sorun.load(zoo("mlp")).executor()  # the Model object goes away at once
    gc.collect()
    np.testing.assert_allclose(np.asarray(ex.run(data=x)[0]), expected, rtol=1e-5, atol=1e-7)


def test_output_kept_after_executor_and_model_dropped(zoo, mlp_data):
    x, expected = mlp_data
    model = sorun.load(zoo("mlp"))
    ex = model.executor()
    ex.run(data=x)
    view = ex.get_output(0)
    arr = np.from_dlpack(ex.get_output(0))
    del ex, model
    gc.collect()
    np.testing.assert_allclose(np.asarray(view), expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(arr, expected, rtol=1e-5, atol=1e-7)


def test_same_executor_from_two_threads_is_refused_or_serialised(zoo):
    import threading
    model = sorun.load(zoo("cnn"))
    ex = model.executor()
    x = np.load(zoo("cnn", "_input.npy"))
    ex.set_input("data", x)
    errors, ok = [], [0]

    def loop():
        for _ in range(20):
            try:
                ex.run()
                ok[0] += 1
            except sorun.FailedPreconditionError as e:
                errors.append(str(e))

    threads = [threading.Thread(target=loop) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ok[0] + len(errors) == 40
    assert all("another thread" in e for e in errors)
