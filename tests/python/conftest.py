"""Shared fixtures of the sorun Python tests (tests/python/run_python_tests.sh runs them against the
installed wheel). SORUN_TEST_MODELS: the directory of the Bazel-built model zoo
(bazel-bin/testdata/models: <name>.so, .json, .params, _input.npy, _expected.npy)."""
import os

import numpy as np
import pytest

import sorun

ZOO = ["mlp", "cnn", "resblock", "digits", "chain10k"]


def pytest_configure(config):
    config.addinivalue_line("markers", "smoke: the subset every CPython's wheel runs (tests/python/run_wheel_matrix.sh): "
                            "load, run, DLPack in and out, errors, threads, packaging")


@pytest.fixture(scope="session")
def models_dir():
    d = os.environ.get("SORUN_TEST_MODELS")
    if not d or not os.path.isdir(d):
        pytest.fail("SORUN_TEST_MODELS must name the built model zoo directory (got %r)" % d)
    return d


@pytest.fixture(scope="session")
def zoo(models_dir):
    """zoo(name, suffix) -> path of bazel-bin/testdata/models/<name><suffix>."""
    def path(name, suffix=".so"):
        p = os.path.join(models_dir, name + suffix)
        assert os.path.exists(p), p
        return p
    return path


@pytest.fixture
def mlp(zoo):
    return sorun.load(zoo("mlp"))


@pytest.fixture
def mlp_data(zoo):
    return np.load(zoo("mlp", "_input.npy")), np.load(zoo("mlp", "_expected.npy"))


def aligned_empty(shape, dtype, alignment=64):
    """A C-contiguous NumPy array whose data is `alignment`-byte aligned (for the zero-copy calls)."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(n + alignment, np.uint8)
    offset = (-raw.ctypes.data) % alignment
    return raw[offset:offset + n].view(dtype).reshape(shape)
