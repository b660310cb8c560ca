"""docs/serving.md's `triton` blocks (tests/docs/doc_blocks.py) in a real tritonserver: each is a
config.pbtxt whose first line names its place (`# models/<zoo model>/config.pbtxt`); served as written
for that zoo model, over HTTP and gRPC, it answers like `sorun run`."""
import os
import re
import shutil
import sys

import numpy as np
import pytest

from conftest import settled_server, sorun_inspect, sorun_run, zoo_path
from test_inference import infer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "docs"))
import doc_blocks  # noqa: E402


def triton_blocks():
    blocks, _ = doc_blocks.page_blocks(ROOT, "docs/serving.md")
    return [b for b in blocks if b.kind == "triton"]


def test_serving_md_has_a_config_sample():
    assert triton_blocks(), "docs/serving.md has no block marked `doc-test: triton`"


@pytest.mark.parametrize("block", triton_blocks(), ids=lambda b: b.where())
def test_documented_config_serves(block, tmp_path):
    m = re.match(r"# models/(\w+)/config\.pbtxt\n", block.text())
    assert m, "%s: the block's first line must be `# models/<zoo model>/config.pbtxt`" % block.where()
    name = m.group(1)
    repo = tmp_path / "models"
    os.makedirs(repo / name / "1")
    shutil.copyfile(zoo_path(name), repo / name / "1" / "model.so")
    (repo / name / "config.pbtxt").write_text(block.text())
    (input_info,), _ = sorun_inspect(zoo_path(name))
    x = np.load(os.path.join(os.environ["ZOO_DIR"], name + "_input.npy"))
    expected = sorun_run(zoo_path(name), {input_info["name"]: x}, str(tmp_path / "ref"))
    with settled_server(str(repo), "docs") as server:
        for protocol in ("http", "grpc"):
            got = infer(protocol, server, name, {input_info["name"]: x})
            assert len(got) == len(expected)
            for actual, want in zip(got.values(), expected):
                np.testing.assert_array_equal(actual.reshape(want.shape), want)
