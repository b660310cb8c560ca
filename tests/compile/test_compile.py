"""`sorun compile` (python/sorun/compile, docs/compile.md) in its venv: ONNX in, one packed model out, for the host
(untuned, and tuned with a tiny MetaSchedule budget), CUDA (nvcc, no GPU) and aarch64 (run under qemu by the static
core's hello_model when one is given); every refusal names what failed and leaves no file behind."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import sorun


def compile_cmd(*args, env=None, timeout=900):
    return subprocess.run([sys.executable, "-m", "sorun.compile", *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env, timeout=timeout)


def ort_outputs(onnx_path, feeds):
    import onnxruntime as ort

    return ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"]).run(None, feeds)


def no_partials(directory):
    return [f for f in os.listdir(directory) if ".partial-" in f]


def test_host_untuned_dynamic_batch(models, tmp_path):
    out = tmp_path / "small.so"
    report_path = tmp_path / "report.json"
    r = compile_cmd(models["small"], "--target", "host", "-o", str(out), "--json", str(report_path))
    assert r.returncode == 0, r.stderr
    assert "wrote %s" % out in r.stdout and "sorun vs TVM's VM: bit-identical" in r.stdout
    report = json.loads(report_path.read_text())
    assert report["inputs"] == ["x float32[N, 3, 16, 16]"] and report["kernels"] >= 3
    assert report["checksum"] and report["constants"]["aligned_after"] == report["constants"]["tensors"] == 4
    assert report["check"]["sorun_vs_onnxruntime"]["max_rel"] < 1e-4
    # Packed as it was linked: ONE blob, in .rodata, 64-byte aligned; no second copy injected beside TVM's.
    sections = subprocess.run(["readelf", "-SW", str(out)], stdout=subprocess.PIPE, text=True, check=True).stdout
    assert re.search(r"\.rodata\s", sections) and not re.search(r"\.sorun_blob\s", sections), sections
    symbols = subprocess.run(["nm", "-D", str(out)], stdout=subprocess.PIPE, text=True, check=True).stdout
    blob = [ln.split() for ln in symbols.splitlines() if ln.endswith(" __tvm_ffi__library_bin")]
    assert len(blob) == 1 and int(blob[0][0], 16) % 64 == 0, symbols
    # The written file in this process (no TVM here): any batch, ONNX Runtime's outputs.
    model = sorun.load(str(out))
    assert model.executor_kind == "Relax VM" and model.inputs[0].shape == (-1, 3, 16, 16)
    x = np.random.default_rng(5).uniform(-1, 1, (3, 3, 16, 16)).astype(np.float32)
    (got,) = model.executor().run(x=x)
    np.testing.assert_allclose(np.asarray(got), ort_outputs(models["small"], {"x": x})[0], rtol=1e-4, atol=1e-5)


def test_host_tuned_tiny_budget_then_reused(models, tmp_path):
    db = tmp_path / "db"
    first, second = tmp_path / "tuned.so", tmp_path / "tuned_again.so"
    args = [models["small"], "--input", "x:1x3x16x16", "--tune", "4", "--database", str(db)]
    r = compile_cmd(*args, "-o", str(first))
    assert r.returncode == 0, r.stderr
    assert "4 trials over" in r.stdout, r.stdout
    assert (db / "database_tuning_record.json").is_file() and (db / "sorun_compile_tuning.json").is_file()
    t0 = time.time()
    r = compile_cmd(*args, "-o", str(second))
    assert r.returncode == 0, r.stderr
    assert "all reused: no tuning" in r.stdout and time.time() - t0 < 60
    assert first.read_bytes() == second.read_bytes()
    x = np.random.default_rng(6).uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)
    (got,) = sorun.load(str(second)).executor().run(x=x)
    np.testing.assert_allclose(np.asarray(got), ort_outputs(models["small"], {"x": x})[0], rtol=1e-4, atol=1e-5)


def test_time_budget_stops_at_its_deadline_then_reused(models, tmp_path):
    """--tune 25s ends the tune at the deadline (the batch in flight finishes; what is not yet built is skipped),
    the ledger counts the seconds, and the same budget again tunes nothing."""
    db, out = tmp_path / "db", tmp_path / "timed.so"
    args = [models["small"], "--input", "x:1x3x16x16", "--tune", "25s", "--database", str(db)]
    r = compile_cmd(*args, "-o", str(out))
    assert r.returncode == 0, r.stderr
    # The budget's clock starts after MetaSchedule's tensor intrinsics are loaded (over a minute here); one
    # batch of the small net's kernels measures in seconds, a whole round took 35-100 s on 2 loaded cores.
    ledger = json.loads((db / "sorun_compile_tuning.json").read_text())
    assert 25 <= [v["seconds"] for v in ledger.values()][0] < 25 + 40, ledger
    r = compile_cmd(*args, "-o", str(tmp_path / "again.so"))
    assert r.returncode == 0 and "all reused: no tuning" in r.stdout, (r.stdout, r.stderr)


def test_check_tolerance_is_relative_to_the_output_scale():
    """A near-zero element may carry the absolute error of the output's large values; an error beyond
    rtol of the output's largest magnitude is still refused, naming the element."""
    from sorun.compile import checks
    from sorun.compile.errors import CompileError

    want = np.array([[8.0, -5.0, 0.004]], np.float32)
    near = want + np.array([[1e-5, -2e-5, 6e-5]], np.float32)
    result = checks.compare("sorun", [near], [want], 1e-4, 1e-5)
    assert result["max_abs"] == pytest.approx(6e-5, rel=1e-2) and result["max_rel"] < 1e-5
    far = want + np.array([[0, 0, 2e-3]], np.float32)
    with pytest.raises(CompileError, match="element 2 is"):
        checks.compare("sorun", [far], [want], 1e-4, 1e-5)
    with pytest.raises(CompileError, match="NaN"):
        checks.compare("sorun", [np.array([[8.0, np.nan, 0.0]], np.float32)], [want], 1e-4, 1e-5)


def test_cuda_fatbin_without_a_gpu(models, tmp_path, sorun_bin):
    if shutil.which("nvcc") is None:
        pytest.skip("no nvcc on PATH (the CUDA Toolkit)")
    out = tmp_path / "small_cuda.so"
    r = compile_cmd(models["small"], "--target", "cuda:sm_90", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "the cuda library does not run here" in r.stdout
    inspect = subprocess.run([sorun_bin, "inspect", str(out)], stdout=subprocess.PIPE, text=True)
    assert "cuda: fmt fatbin" in inspect.stdout and "runnable by sorun: yes" in inspect.stdout, inspect.stdout
    assert "devices needed: cuda" in inspect.stdout and "__tvm_ffi__library_bin in .rodata" in inspect.stdout
    assert sorun.load(str(out)).device_types_needed == ["cuda"]


def test_aarch64_cross_compile_runs_under_qemu(models, tmp_path, sorun_bin):
    if shutil.which("aarch64-linux-gnu-gcc") is None:
        pytest.skip("no aarch64-linux-gnu-gcc (apt-get install gcc-aarch64-linux-gnu)")
    out = tmp_path / "small_a64.so"
    r = compile_cmd(models["small"], "--target", "aarch64", "--input", "x:2x3x16x16", "-o", str(out))
    assert r.returncode == 0, r.stderr
    inspect = subprocess.run([sorun_bin, "inspect", str(out)], stdout=subprocess.PIPE, text=True)
    assert "aarch64" in inspect.stdout, inspect.stdout
    hello, qemu = os.environ.get("SORUN_AARCH64_HELLO", ""), shutil.which("qemu-aarch64")
    if not (os.access(hello, os.X_OK) and qemu):
        pytest.skip("compiled and inspected; no aarch64 hello_model (SORUN_AARCH64_HELLO) or qemu-aarch64 to run it")
    # embedded/hello_model (sorun's static core, aarch64): zeros in, each output's first value out.
    run = subprocess.run([qemu, "-L", "/usr/aarch64-linux-gnu", hello, str(out)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=600)
    assert run.returncode == 0, run.stdout
    first = float(run.stdout.split("first value ")[1].split()[0])
    want = ort_outputs(models["small"], {"x": np.zeros((2, 3, 16, 16), np.float32)})[0].ravel()[0]
    assert abs(first - want) <= 1e-5 + 1e-4 * abs(want), (run.stdout, want)


@pytest.mark.parametrize("case", [
    "unsupported_operator", "no_shape", "not_onnx", "unknown_target", "bad_cpu", "tune_without_database",
    "bad_budget", "tune_cuda", "no_output_dir", "bad_input_flag", "unknown_input"])
def test_refusals_name_what_failed(models, tmp_path, case):
    out = tmp_path / "out.so"
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x00\x01 this is not protobuf \xff" * 10)
    args, want = {
        "unsupported_operator": ([models["det"], "-o", str(out)],
                                 "onnx: %s: ONNX operator 'Det' (node 'determinant', opset 17) is not supported by "
                                 "TVM 0.27's ONNX frontend" % models["det"]),
        "no_shape": ([models["shapeless"], "-o", str(out)], "input 'x' has no shape in the file: give --input x:"),
        "not_onnx": ([str(junk), "-o", str(out)], "onnx: %s: not an ONNX model" % junk),
        "unknown_target": ([models["small"], "--target", "riscv", "-o", str(out)], "unknown target 'riscv'"),
        "bad_cpu": ([models["small"], "--target", "cpu:pentium9000", "-o", str(out)],
                    "'pentium9000' is not a CPU LLVM knows for x86-64"),
        "tune_without_database": ([models["small"], "--tune", "4", "-o", str(out)], "--tune needs --database DIR"),
        "bad_budget": ([models["small"], "--tune", "lots", "--database", str(tmp_path), "-o", str(out)],
                       "--tune 'lots': expected a trial count"),
        "tune_cuda": ([models["small"], "--target", "cuda", "--input", "x:1x3x16x16", "--tune", "4",
                       "--database", str(tmp_path / "db"), "-o", str(out)],
                      "target cuda cannot be tuned on this machine: the kernels run on an NVIDIA GPU"),
        "no_output_dir": ([models["small"], "-o", str(tmp_path / "missing" / "out.so")], "does not exist"),
        "bad_input_flag": ([models["small"], "--input", "x=1x3", "-o", str(out)], "expected NAME:D1xD2x"),
        "unknown_input": ([models["small"], "--input", "data:1x3x16x16", "-o", str(out)],
                          "--input data: the graph has no input of that name (inputs: x)"),
    }[case]
    r = compile_cmd(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert want in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists() and not no_partials(tmp_path)


def test_missing_tools_are_named(models, tmp_path):
    out = tmp_path / "out.so"
    bare = dict(os.environ, PATH=os.path.dirname(sys.executable), NVCC="/nonexistent/nvcc")
    r = compile_cmd(models["small"], "--target", "cuda", "-o", str(out), env=bare)
    assert r.returncode == 2, r.stderr
    assert "toolchain: target cuda: no nvcc (the CUDA Toolkit compiles the kernels into a fatbin): " \
           "NVCC=/nonexistent/nvcc is not an executable" in r.stderr, r.stderr
    r = compile_cmd(models["small"], "--target", "aarch64", "-o", str(out), env=bare)
    assert r.returncode == 2 and "no aarch64-linux-gnu-gcc (cross compiler and linker)" in r.stderr, r.stderr
    assert not out.exists()


def test_interrupted_tune_leaves_nothing(models, tmp_path):
    out, db = tmp_path / "out.so", tmp_path / "db"
    proc = subprocess.Popen([sys.executable, "-m", "sorun.compile", models["small"], "--input", "x:1x3x16x16",
                             "--tune", "10m", "--database", str(db), "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and not (db / "logs").is_dir():  # MetaSchedule has started
        time.sleep(0.5)
    assert (db / "logs").is_dir(), "tuning did not start"
    time.sleep(3)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the whole foreground process group
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 130, (stdout, stderr[-2000:])
    assert "sorun compile: tune: interrupted" in stderr, stderr[-2000:]
    assert not out.exists() and not no_partials(tmp_path)


def test_sorun_refuses_to_load_beside_tvm(models, tmp_path):
    """TVM and sorun both define the TVM C ABI globally: after `import tvm`, sorun.load refuses, naming it."""
    out = tmp_path / "m.so"
    assert compile_cmd(models["small"], "-o", str(out), "--no-check").returncode == 0
    code = "import tvm, sorun\ntry:\n    sorun.load(%r)\nexcept sorun.FailedPreconditionError as e:\n    print(e)\n" % (
        str(out))
    r = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0, r.stderr
    assert "another TVM runtime is loaded in this process" in r.stdout and "tvm" in r.stdout, r.stdout


def test_sorun_cli_compile_runs_the_package(models, tmp_path, sorun_bin):
    """`sorun compile` of the C++ CLI runs this Python's sorun.compile and returns its status."""
    out = tmp_path / "cli.so"
    env = dict(os.environ, SORUN_PYTHON=sys.executable)
    r = subprocess.run([sorun_bin, "compile", models["small"], "-o", str(out), "--no-check"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0 and "wrote %s" % out in r.stdout, r.stderr
    r = subprocess.run([sorun_bin, "compile", models["det"], "-o", str(out) + "2"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 2 and "ONNX operator 'Det'" in r.stderr
    env["SORUN_PYTHON"] = "/usr/bin/python3.11"  # no sorun package there
    r = subprocess.run([sorun_bin, "compile", models["small"], "-o", str(out)], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 2 and "cannot import sorun.compile: install the Python package" in r.stderr, r.stderr
