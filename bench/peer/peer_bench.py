#!/usr/bin/env python3
"""Peer benchmark: the same ONNX model run by ONNX Runtime, by TVM's runtime and by sorun (bench/peer/README.md).

usage: bench/peer/peer_bench.py [--sorun BIN] [--out DIR] [--models resnet18,mobilenetv2] [--threads 1,2]
                                [--processes K] [--repeat R] [--warmup W] [--markdown FILE]
(bench/peer/run_peer.sh installs the venvs, builds sorun and runs this with the defaults.)

Steps: onnx_models.py writes each model.onnx (peer venv); tvm_compile.py compiles it with TVM 0.16 into
generic/deploy.so and host/deploy.so (-mcpu of this machine); then for each model and thread count, K
rounds of fresh processes, the runtimes in a rotating order within each round (interleaved):
  ort          ort_bench.py (onnxruntime's Python API, pre-allocated OrtValue input)
  tvm-generic / tvm-host      bench/tvm_runtime_bench.c (libtvm_runtime.so via the C API) on deploy.so
  sorun-generic / sorun-host  `sorun bench deploy.so --json` (library defaults: prefetch willneed)
Reported per runtime: medians over the K processes of load-to-ready, first run, time to first result
(load-to-ready + first run), steady p50 and p90 (R runs after W warm-up) and peak RSS (VmHWM); ratios
are against ONNX Runtime and, for sorun, against TVM's runtime on the same deploy.so. Outputs: sorun's
equal TVM's on the same .so bit for bit, and both within 1e-3 (relative to the output's scale) of
ONNX Runtime's. Thread counts: ORT intra_op_num_threads, TVM_NUM_THREADS/OMP_NUM_THREADS and
SORUN_NUM_THREADS (TVM 0.16's runtime here runs parallel launches on ONE thread whatever those say:
see the README). Exit 1 when an output check fails.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
from interop_compare import build_harness, cpu_name, sh  # noqa: E402

PEER_VENV = os.environ.get("SORUN_PEER_VENV", os.path.expanduser("~/.cache/sorun/peer-venv"))
TVM_VENV = os.environ.get("SORUN_TVM_VENV", os.path.expanduser("~/.cache/sorun/tvm-venv"))
METRICS = [("load", "load-to-ready ms"), ("first", "first run ms"), ("ttfr", "time to first result ms"),
           ("p50", "steady p50 ms"), ("p90", "steady p90 ms"), ("rss", "peak RSS MiB")]


def peer_site():
    return sh([os.path.join(PEER_VENV, "bin", "python"), "-c", "import onnx, os; print(os.path.dirname(os.path.dirname(onnx.__file__)))"]).strip()


def run_ort(d, threads, a, output=None):
    cmd = [os.path.join(PEER_VENV, "bin", "python"), os.path.join(HERE, "ort_bench.py"), os.path.join(d, "model.onnx"),
           os.path.join(d, "input_data.npy"), "--threads", str(threads), "--warmup", str(a.warmup), "--repeat",
           str(a.repeat)] + (["--output", output] if output else [])
    r = json.loads(sh(cmd).strip().splitlines()[-1])
    return {"load": r["load_ms"], "first": r["first_run_ms"], "p50": r["run_ms"]["median"], "p90": r["run_ms"]["p90"],
            "rss": r["peak_rss_bytes"], "import_ms": r["import_ms"], "version": r["version"]}


def run_tvm(exe, so, raw_spec, a, env, output):
    r = json.loads(sh([exe, so, raw_spec, "--warmup", str(a.warmup), "--repeat", str(a.repeat), "--output", output],
                      env=env).strip().splitlines()[-1])
    return {"load": r["load_ms"], "first": r["first_run_ms"], "p50": r["run_ms"]["median"], "p90": r["run_ms"]["p90"],
            "rss": r["peak_rss_bytes"]}


def run_sorun(sorun, so, inp, a, env):
    r = json.loads(sh([sorun, "bench", so, "--input", "data=" + inp, "--warmup", str(a.warmup), "--repeat",
                       str(a.repeat), "--json"], env=env))
    return {"load": r["load_ms"] + r["create_ms"], "first": r["first_run_ms"], "p50": r["run_ms"]["median"],
            "p90": r["run_ms"]["p90"], "rss": r["peak_rss_bytes"]}


def stripped_size(lib, out):
    """Bytes of `lib` stripped (sorun's CPU runtime library: what an application links), or "?"."""
    if not os.path.exists(lib):
        return "? (bazel build //api:libsorun_runtime_cpu.so)"
    tmp = os.path.join(out, "libsorun_runtime_cpu.stripped.so")
    sh(["strip", "-o", tmp, lib])
    return str(os.path.getsize(tmp))


def fmt(k, v):
    if k == "rss":
        return "%.1f" % (v / 2**20)
    return "%.2f" % v if v < 10 else "%.1f" % v


def check_outputs(a, d, tvm_py, raw_dir, runtimes_so):
    """sorun == TVM bit for bit per build; every build within 1e-3 of ORT (scaled by max |ORT|)."""
    ort_out = os.path.join(raw_dir, "ort_output.npy")
    run_ort(d, 1, argparse.Namespace(warmup=0, repeat=1), ort_out)
    lines = []
    ok = True
    for variant, so in runtimes_so:
        sdir = os.path.join(raw_dir, "sorun_" + variant)
        sh([a.sorun, "run", so, "--input", "data=" + os.path.join(d, "input_data.npy"), "--output-dir", sdir])
        res = json.loads(sh([tvm_py, "-c", (
            "import numpy as np, sys, json; o = np.load(sys.argv[1]).ravel(); s = np.load(sys.argv[2]).ravel(); "
            "t = np.fromfile(sys.argv[3], dtype=np.float32); scale = float(np.abs(o).max()) or 1.0; "
            "print(json.dumps({'sorun_eq_tvm': bool(s.shape == t.shape and np.array_equal(s, t)), "
            "'max_rel_diff_vs_ort': float(np.abs(s - o).max() / scale), 'argmax_same': bool(s.argmax() == o.argmax())}))"),
            ort_out, os.path.join(sdir, "output_0.npy"), os.path.join(raw_dir, "tvm_%s_output.raw" % variant)]))
        good = res["sorun_eq_tvm"] and res["max_rel_diff_vs_ort"] <= 1e-3
        ok = ok and good
        lines.append("%s: sorun == TVM bit for bit: %s; max |sorun - ORT| / max |ORT| = %.2e; same argmax: %s" % (
            variant, "yes" if res["sorun_eq_tvm"] else "NO", res["max_rel_diff_vs_ort"], res["argmax_same"]))
    return ok, lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sorun", default=os.path.join(ROOT, "bazel-bin", "tools", "sorun"))
    ap.add_argument("--out", default="/tmp/sorun-peer-bench")
    ap.add_argument("--models", default="resnet18,mobilenetv2")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--processes", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--markdown")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    tvm_py = os.path.join(TVM_VENV, "bin", "python")
    models = [m for m in a.models.split(",") if m]
    t_start = time.time()
    sh([os.path.join(PEER_VENV, "bin", "python"), os.path.join(HERE, "onnx_models.py"), a.out] + models)
    env_build = dict(os.environ, PYTHONPATH=peer_site())
    for m in models:
        d = os.path.join(a.out, m)
        if not all(os.path.exists(os.path.join(d, v, "deploy.so")) for v in ("generic", "host")):
            print("compiling %s with TVM (generic and host)..." % m, flush=True)
            sh([tvm_py, os.path.join(HERE, "tvm_compile.py"), d], env=env_build, timeout=3600)
    exe, _ = build_harness(tvm_py, a.out)
    host_cpu = json.load(open(os.path.join(a.out, models[0], "build.json")))["host_cpu"]
    runtime_size = {
        "ort": sh([os.path.join(PEER_VENV, "bin", "python"), "-c",
                   "import onnxruntime, os, glob; d = os.path.dirname(onnxruntime.__file__); "
                   "print(sum(os.path.getsize(f) for f in glob.glob(d + '/capi/*.so')))"]).strip(),
        "tvm": sh([tvm_py, "-c", "import tvm, os; print(os.path.getsize(os.path.join(os.path.dirname(tvm.__file__), "
                   "'libtvm_runtime.so')))"]).strip(),
        "sorun": stripped_size(os.path.join(os.path.dirname(os.path.dirname(a.sorun)), "api",
                                            "libsorun_runtime_cpu.so"), a.out),
    }
    all_ok, check_lines, results = True, [], {}
    load_before = os.getloadavg()
    for m in models:
        d = os.path.join(a.out, m)
        inp = os.path.join(d, "input_data.npy")
        raw = os.path.join(a.out, m + "_input.raw")
        sh([tvm_py, "-c", "import numpy as np, sys; np.load(sys.argv[1]).tofile(sys.argv[2])", inp, raw])
        raw_spec = "data=%s:float32:1x3x224x224" % raw
        sos = [(v, os.path.join(d, v, "deploy.so")) for v in ("generic", "host")]
        for threads in [int(t) for t in a.threads.split(",")]:
            env = dict(os.environ, TVM_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
                       SORUN_NUM_THREADS=str(threads))
            runners = {"ort": lambda: run_ort(d, threads, a)}
            for v, so in sos:
                runners["tvm-" + v] = (lambda so=so, v=v: run_tvm(exe, so, raw_spec, a, env,
                                                                  os.path.join(a.out, "tvm_%s_output.raw" % v)))
                runners["sorun-" + v] = lambda so=so: run_sorun(a.sorun, so, inp, a, env)
            names = list(runners)
            runs = {n: [] for n in names}
            for k in range(a.processes):
                for n in names[k % len(names):] + names[:k % len(names)]:  # rotate who goes first
                    runs[n].append(runners[n]())
            res = {}
            for n in names:
                res[n] = {key: statistics.median(r[key] for r in runs[n]) for key in ("load", "first", "p50", "p90", "rss")}
                res[n]["ttfr"] = statistics.median(r["load"] + r["first"] for r in runs[n])
            results["%s/%dt" % (m, threads)] = res
            print("%s, %d thread(s): done" % (m, threads), flush=True)
        ok, lines = check_outputs(a, d, tvm_py, a.out, sos)
        all_ok = all_ok and ok
        check_lines += ["%s %s" % (m, line) for line in lines]
    load_after = os.getloadavg()
    header = ("Peer benchmark: ONNX Runtime %s | TVM 0.16 (hhb-tvm 3.2.3) runtime | %s | %s (%d cores, host "
              "build -mcpu=%s) | median of %d fresh processes per runtime, rotating order, each %d runs after %d "
              "warm-up | load average %.2f before / %.2f after | %.0f s" % (
                  runs["ort"][0]["version"], sh([a.sorun, "--version"]).strip().split(" (")[0], cpu_name(),
                  os.cpu_count() or 0, host_cpu, a.processes, a.repeat, a.warmup, load_before[0], load_after[0],
                  time.time() - t_start))
    out = [header, ""]
    cols = ["ort", "tvm-generic", "sorun-generic", "tvm-host", "sorun-host"]
    out.append("| model | threads | metric | " + " | ".join(cols) +
               " | sorun-generic / ORT | sorun-host / ORT | sorun / TVM (generic, host) |")
    out.append("|---|---|---|" + "---:|" * (len(cols) + 3))
    for key, res in results.items():
        m, t = key.split("/")
        for i, (k, label) in enumerate(METRICS):
            o = res["ort"][k]
            ratio = lambda x, y: "%.2f" % (x / y) if y else "-"
            out.append("| %s | %s | %s | %s | %s | %s | %s/%s |" % (
                m if i == 0 else "", t if i == 0 else "", label, " | ".join(fmt(k, res[c][k]) for c in cols),
                ratio(res["sorun-generic"][k], o), ratio(res["sorun-host"][k], o),
                ratio(res["sorun-generic"][k], res["tvm-generic"][k]), ratio(res["sorun-host"][k], res["tvm-host"][k])))
    out.append("")
    out.append("Runtime size, bytes: ORT %s (onnxruntime/capi/*.so), TVM %s (libtvm_runtime.so), sorun %s "
               "(libsorun_runtime_cpu.so, stripped)" % (runtime_size["ort"], runtime_size["tvm"], runtime_size["sorun"]))
    out += ["Outputs: " + line for line in check_lines]
    text = "\n".join(out)
    print(text)
    if a.markdown:
        open(a.markdown, "w").write(text + "\n")
    json.dump({"results": results, "checks": check_lines, "header": header},
              open(os.path.join(a.out, "peer_bench.json"), "w"), indent=1)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
