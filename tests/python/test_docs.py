"""The documentation's Python samples against the installed wheel: every block marked
`<!-- doc-test: python -->` in README.md and docs/*.md (tests/docs/doc_blocks.py) runs here, a block with
`>>>` prompts as a doctest (its outputs compared, `...` matching anything), any other as a script; and the
wheel sizes docs/python.md states are the built wheel's.

Each block runs in its own directory holding the zoo MLP as mlp.so and model.so, mlp.params and its
sample input as x.npy."""
import doctest
import os
import re
import shutil
import sys
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "docs"))
import doc_blocks  # noqa: E402

FIXTURES = {"mlp.so": ("mlp", ".so"), "model.so": ("mlp", ".so"), "mlp.params": ("mlp", ".params"),
            "x.npy": ("mlp", "_input.npy")}


def python_blocks():
    blocks = []
    for page in doc_blocks.doc_pages(ROOT):
        found, _ = doc_blocks.page_blocks(ROOT, page)
        blocks += [b for b in found if b.kind == "python"]
    return blocks


def test_every_page_has_its_python_samples_marked():
    # README.md and docs/python.md hold the Python samples; an empty list would mean a broken parser.
    pages = {b.page for b in python_blocks()}
    assert {"README.md", "docs/python.md"} <= pages


@pytest.mark.parametrize("block", python_blocks(), ids=lambda b: b.where())
def test_doc_sample_runs(block, zoo, tmp_path, monkeypatch):
    for name, (model, suffix) in FIXTURES.items():
        shutil.copyfile(zoo(model, suffix), tmp_path / name)
    monkeypatch.chdir(tmp_path)
    text = block.text()
    if ">>>" not in text:
        exec(compile(text, block.where(), "exec"), {"__name__": "__doc_sample__"})
        return
    # One doctest per block: its line numbers are the page's.
    test = doctest.DocTestParser().get_doctest(text, {"__name__": "__doc_sample__"}, block.where(), block.page,
                                               block.line)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = []
    runner.run(test, out=out.append)
    assert runner.failures == 0, "%s: %d of %d examples failed:\n%s" % (block.where(), runner.failures, runner.tries,
                                                                       "".join(out))


def _stated_sizes():
    """(extension MB, wheel KB) as docs/python.md states them: '(2.12 MB stripped; the wheel is 940 KB; ...)'."""
    text = doc_blocks.read_page(ROOT, "docs/python.md")
    m = re.search(r"\(([\d.]+) MB stripped; the wheel is ([\d.]+) KB[;)]", text)
    assert m, "docs/python.md no longer states the extension's and the wheel's sizes in the expected words"
    return float(m.group(1)), float(m.group(2))


def test_python_md_states_the_wheel_sizes():
    wheel = os.environ.get("SORUN_WHEEL")
    if not wheel or not os.path.isfile(wheel):
        pytest.skip("SORUN_WHEEL (set by run_python_tests.sh) does not name the built wheel")
    ext_mb, wheel_kb = _stated_sizes()
    with zipfile.ZipFile(wheel) as z:
        ext = [i for i in z.infolist() if re.match(r"sorun/_sorun\..*\.so$", i.filename)]
    assert len(ext) == 1
    actual_mb, actual_kb = ext[0].file_size / 1e6, os.path.getsize(wheel) / 1e3
    # Within 5%: the page is updated when the build changes its size noticeably, not for every byte.
    assert abs(actual_mb - ext_mb) <= 0.05 * actual_mb, "extension is %.2f MB; docs/python.md says %.2f" % (
        actual_mb, ext_mb)
    assert abs(actual_kb - wheel_kb) <= 0.05 * actual_kb, "wheel is %.0f KB; docs/python.md says %.0f" % (
        actual_kb, wheel_kb)
