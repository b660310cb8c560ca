"""Relax VM exports through the Python package: the real TVM 0.27 and TVM 0.16 exports of testdata/relax
(SORUN_RELAX_FIXTURES, set by run_python_tests.sh) give TVM's own outputs bit for bit, a dynamic batch takes any
size, and a wrong input is an InvalidArgumentError naming it."""
import os

import numpy as np
import pytest

import sorun

# model -> number of outputs (main's return value, flattened)
RELAX = {"mlp": 1, "cnn": 1, "dyn_batch": 2, "tir_par": 1, "legacy_mlp": 1}


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
