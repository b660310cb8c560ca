"""Relax VM exports through the Python package: the real TVM 0.27 and TVM 0.16 exports of testdata/relax
(SORUN_RELAX_FIXTURES, set by run_python_tests.sh) give TVM's own outputs bit for bit, a dynamic batch takes any
size, and a wrong input is an InvalidArgumentError naming it."""
import os

import numpy as np
import pytest

import sorun

# model -> number of outputs (main's return value, flattened)
RELAX = {"mlp": 1, "cnn": 1, "dyn_batch": 2, "tir_par": 1, "sort_topk": 4, "legacy_mlp": 1}


@pytest.fixture(scope="session")
def relax_dir():
    d = os.environ.get("SORUN_RELAX_FIXTURES")
    if not d or not os.path.isdir(d):
        pytest.fail("SORUN_RELAX_FIXTURES must name testdata/relax (got %r)" % d)
    return d


@pytest.mark.parametrize("name", sorted(RELAX))
def test_relax_export_matches_tvm_bit_for_bit(relax_dir, name):
    model = sorun.load(os.path.join(relax_dir, name + ".so"))
    assert [i.name for i in model.inputs] == ["x"]
    x = np.load(os.path.join(relax_dir, name + ".input_0.npy"))
    ex = model.executor(device="cpu")
    for _ in range(2):  # the second run reuses the first run's memory
        out = ex(x=x)
        assert len(out) == RELAX[name]
        for k, got in enumerate(out):
            expected = np.load(os.path.join(relax_dir, "%s.output_%d.npy" % (name, k)))
            np.testing.assert_array_equal(np.asarray(got), expected)


def test_relax_dynamic_batch_and_bad_input(relax_dir):
    model = sorun.load(os.path.join(relax_dir, "dyn_batch.so"))
    assert model.inputs[0].shape == (-1, 8)
    ex = model.executor()
    out = ex(x=np.zeros((5, 8), np.float32))
    assert [np.asarray(o).shape for o in out] == [(5, 4), (5, 4)]
    with pytest.raises(sorun.InvalidArgumentError, match="input 'x'"):
        ex(x=np.zeros((5, 9), np.float32))


def test_relax_bool_input_and_output(relax_dir):
    """TVM 0.27 writes bool as DLPack's code 6: Python sees numpy bool in and out, either branch of main's If."""
    model = sorun.load(os.path.join(relax_dir, "bool_if.so"))
    assert [(i.name, i.dtype) for i in model.inputs] == [("x", "float32"), ("c", "bool")]
    x = np.load(os.path.join(relax_dir, "bool_if.input_0.npy"))
    ex = model.executor()
    y, m = ex(x=x, c=np.array(True))
    np.testing.assert_array_equal(np.asarray(y), np.load(os.path.join(relax_dir, "bool_if.output_0.npy")))
    assert np.asarray(m).dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(m), np.load(os.path.join(relax_dir, "bool_if.output_1.npy")))
    y, m = ex(x=x, c=np.array(False))
    np.testing.assert_array_equal(np.asarray(y), x * x)
    np.testing.assert_array_equal(np.asarray(m), x * x > 0.5)
