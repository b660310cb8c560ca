"""The Python API gives the same numbers as TVM's Python API on TVM-built models.

The interop job (tests/interop/run_interop.sh) builds models with TVM 0.16 (hhb-tvm, CPython 3.10) and
records, per model, TVM's own outputs from its Python API (tvm.runtime.load_module +
graph_executor.GraphModule; for the OpenCL variants, TVM's llvm build of the same model and weights,
TVM's runtime here having no OpenCL) in <dir>/<model>/reference_output_K.npy, with the inputs and a
manifest.json. The sorun wheel is built for CPython 3.11, so the two cannot share a process: this test
reads those files. SORUN_INTEROP_MODELS names the directory (.ci/run passes the interop job's); without
it every case is skipped with that reason.
"""
import json
import os

import numpy as np
import pytest

import sorun

MODELS_DIR = os.environ.get("SORUN_INTEROP_MODELS", "")
# mlp_system_lib calls TVMBackendRegisterSystemLibSymbol BY NAME from its constructor: it runs only
# if the extension's TVM* C ABI is visible to libraries it dlopens (as it is in the sorun CLI).
CPU = ["mlp", "multi_output", "resnet18", "mobilenet", "mlp_link_params", "mlp_system_lib"]
OPENCL = ["mlp_opencl", "cnn_opencl"]
RTOL, ATOL = 1e-4, 1e-5  # the interop job's tolerances (tests/interop/interop_test.py)


def _model(name):
    if not MODELS_DIR:
        pytest.skip("SORUN_INTEROP_MODELS is not set (the TVM interop job's model directory)")
    d = os.path.join(MODELS_DIR, name)
    man_path = os.path.join(d, "manifest.json")
    if not os.path.exists(man_path):
        pytest.skip("TVM did not build %s here (%s missing)" % (name, man_path))
    with open(man_path) as f:
        return d, json.load(f)


def _check(ex, d, man):
    inputs = {k: np.load(os.path.join(d, f)) for k, f in man["inputs"].items()}
    outs = ex.run(**inputs)
    refs = [np.load(os.path.join(d, f)) for f in man["outputs"]]
    assert len(outs) == len(refs)
    for i, (got, want) in enumerate(zip(outs, refs)):
        got = np.from_dlpack(got)
        assert got.shape == want.shape and got.dtype == want.dtype, (i, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg="output %d" % i)


@pytest.mark.parametrize("name", CPU + OPENCL)
def test_deploy_so_matches_tvm_python_api(name):
    d, man = _model(name)
    device = "opencl" if man["variant"] == "opencl" else "cpu"
    model = sorun.load(os.path.join(d, "deploy.so"))
    _check(model.executor(device=device), d, man)


@pytest.mark.parametrize("name", CPU + OPENCL)
def test_three_files_match_tvm_python_api(name):
    d, man = _model(name)
    if man["variant"] == "link_params":
        pytest.skip("link-params: the weights are compiled into lib.so (no params file to give)")
    device = "opencl" if man["variant"] == "opencl" else "cpu"
    model = sorun.load(os.path.join(d, "lib.so"), graph=os.path.join(d, "graph.json"),
                       params=os.path.join(d, "model.params"))
    _check(model.executor(device=device), d, man)

