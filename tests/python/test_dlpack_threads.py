"""DLPack round trips with NumPy, and 4 Python threads x 4 executors running at the same time."""
import threading
import time

import numpy as np
import pytest

import sorun

pytestmark = pytest.mark.smoke  # every version's wheel runs this file (run_wheel_matrix.sh)


def test_numpy_round_trip_is_zero_copy(mlp, mlp_data):
    x, expected = mlp_data
    ex = mlp.executor()
    ex.run(data=x)
    y = ex.get_output(0)
    a = np.from_dlpack(y)
    b = np.from_dlpack(y)
    assert a.ctypes.data == b.ctypes.data == np.asarray(y).ctypes.data  # one memory, no copies
    assert y.__dlpack_device__() == (1, 0)
    np.testing.assert_allclose(a, expected, rtol=1e-5, atol=1e-7)
    ex.run(data=np.zeros_like(x))  # the arrays view the executor's memory: the next run shows through
    assert not np.allclose(a, expected)


def test_inputs_through_dlpack_objects(mlp, mlp_data):
    x, expected = mlp_data

    class OnlyDLPack:  # no buffer protocol: forces the __dlpack__ path
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    ex = mlp.executor()
    out = ex.run(data=OnlyDLPack(x))
    np.testing.assert_allclose(np.asarray(out[0]), expected, rtol=1e-5, atol=1e-7)
    # A sorun.Tensor is itself an input (here of the wrong shape: the executor's check speaks).
    with pytest.raises(sorun.InvalidArgumentError, match=r"got float32\[1, 10\]"):
        ex.set_input("data", ex.get_output(0))
    with pytest.raises(sorun.InvalidArgumentError, match="float64"):
        ex.set_input("data", OnlyDLPack(x.astype(np.float64)))


def test_readonly_numpy_input(mlp, mlp_data):
    x, expected = mlp_data
    ro = x.copy()
    ro.flags.writeable = False  # numpy's __dlpack__ refuses these; the buffer protocol takes them
    np.testing.assert_allclose(np.asarray(mlp.executor().run(data=ro)[0]), expected, rtol=1e-5, atol=1e-7)


def test_dtypes_via_buffer_protocol(mlp):
    for dtype in (np.float16, np.int32, np.uint8, np.bool_, np.int64):
        with pytest.raises(sorun.InvalidArgumentError, match="got "):
            mlp.executor().set_input("data", np.zeros((1, 64), dtype))


def test_four_threads_four_executors_overlap(zoo):
    model = sorun.load(zoo("cnn"))  # ~ms per run: long enough to see overlap
    x, expected = np.load(zoo("cnn", "_input.npy")), np.load(zoo("cnn", "_expected.npy"))
    executors = [model.executor() for _ in range(4)]
    intervals = [[] for _ in range(4)]
    barrier = threading.Barrier(4)

    def work(i):
        ex = executors[i]
        ex.set_input("data", x)
        barrier.wait()
        for _ in range(15):
            t0 = time.perf_counter()
            ex.run()
            intervals[i].append((t0, time.perf_counter()))
        np.testing.assert_allclose(np.asarray(ex.get_output(0)), expected, rtol=1e-5, atol=1e-6)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # With the GIL held during run(), the interval [before run, after run] of one thread could never
    # contain another thread's run: count pairs of runs of different threads that overlap in time.
    overlaps = sum(1 for i in range(4) for j in range(i + 1, 4)
                   for a in intervals[i] for b in intervals[j] if a[0] < b[1] and b[0] < a[1])
    print("overlapping run pairs: %d of %d" % (overlaps, 6 * 15 * 15))
    assert all(len(iv) == 15 for iv in intervals)
    assert overlaps > 0
