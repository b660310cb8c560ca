#!/usr/bin/env python3
"""sorun vs TVM's own runtime on the same TVM-built deploy.so files (bench/README.md, "Interop").

usage: bench/interop_compare.py [--sorun BIN] [--models-dir DIR] [--out DIR] [--models mlp,resnet18,mobilenet]
                                [--threads N] [--repeat N] [--warmup N] [--processes K] [--markdown FILE]

For each model, each runtime runs in K fresh processes (alternating which goes first), all with the
same thread count (TVM_NUM_THREADS = OMP_NUM_THREADS = SORUN_NUM_THREADS = N):
  TVM    bench/tvm_runtime_bench.c, compiled here against the pinned TVM wheel's libtvm_runtime.so
         (TVM's C++ runtime through its C API; no Python in the process)
  sorun  `sorun bench deploy.so --input data=... --json`
and reports the median over the K processes of: load-to-ready (TVM: TVMModLoadFromFile +
lib["default"](cpu); sorun: load + create), first run, steady-state latency (median of --repeat runs
after --warmup) and peak RSS (VmHWM of the whole process), with sorun/TVM ratios.

The deploy.so files come from --models-dir (e.g. the interop job's $OUT_DIR/models, built by
tests/interop/tvm_models.py) or are built into --out/models. Needs the TVM venv of
tests/interop/install_tvm.sh (installed when missing; exit 3 "skipped: <reason>" when it cannot be)
and gcc. Prints the table; --markdown also writes it as Markdown.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
INSTALL = os.path.join(ROOT, "tests", "interop", "install_tvm.sh")
MODELS_PY = os.path.join(ROOT, "tests", "interop", "tvm_models.py")
HARNESS_C = os.path.join(HERE, "tvm_runtime_bench.c")


def sh(cmd, env=None, timeout=900):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=timeout,
                       encoding="utf-8", errors="replace")
    if p.returncode != 0:
        raise RuntimeError("%s failed (exit %d): %s" % (" ".join(cmd[:3]), p.returncode, (p.stderr or p.stdout)[-800:]))
    return p.stdout


def tvm_venv(venv):
    rc = subprocess.call(["bash", INSTALL, venv])
    if rc == 3:
        print("skipped: TVM unavailable (see install_tvm.sh above)")
        sys.exit(3)
    if rc != 0:
        sys.exit("interop_compare: install_tvm.sh failed (exit %d)" % rc)
    return os.path.join(venv, "bin", "python")


def build_harness(py, out):
    tvm_dir = sh([py, "-c", "import os, tvm; print(os.path.dirname(tvm.__file__))"]).strip()
    exe = os.path.join(out, "tvm_runtime_bench")
    sh(["gcc", "-O2", "-std=c11", "-Wall", "-Wextra", "-I" + os.path.join(tvm_dir, "include"),
        "-I" + os.path.join(tvm_dir, "dlpack", "include"), HARNESS_C, "-L" + tvm_dir, "-ltvm_runtime",
        "-Wl,-rpath," + tvm_dir, "-o", exe])
    return exe, tvm_dir


def ensure_models(py, models_dir, out, models):
    missing = [m for m in models if not os.path.exists(os.path.join(models_dir or "", m, "deploy.so"))]
    if models_dir and not missing:
        return models_dir
    target = os.path.join(out, "models")
    todo = [m for m in models if not os.path.exists(os.path.join(target, m, "deploy.so"))]
    if todo:
        print("building with TVM: %s (into %s)" % (", ".join(todo), target), flush=True)
        sh([py, MODELS_PY, target] + todo, timeout=1800)
    return target


def run_tvm(exe, model_dir, raw_spec, args, env):
    out = sh([exe, os.path.join(model_dir, "deploy.so"), raw_spec, "--warmup", str(args.warmup), "--repeat",
              str(args.repeat), "--output", os.path.join(args.out, "tvm_output.raw")], env=env)
    d = json.loads(out.strip().splitlines()[-1])
    return {"load": d["load_ms"], "first": d["first_run_ms"], "steady": d["run_ms"]["median"],
            "rss": d["peak_rss_bytes"]}


def run_sorun(sorun, model_dir, args, env):
    out = sh([sorun, "bench", os.path.join(model_dir, "deploy.so"), "--input",
              "data=" + os.path.join(model_dir, "input_data.npy"), "--warmup", str(args.warmup), "--repeat",
              str(args.repeat), "--json"], env=env)
    d = json.loads(out)
    return {"load": d["load_ms"] + d["create_ms"], "first": d["first_run_ms"], "steady": d["run_ms"]["median"],
            "rss": d["peak_rss_bytes"]}


METRICS = [("load", "load-to-ready (ms)"), ("first", "first run (ms)"), ("steady", "steady-state median (ms)"),
           ("rss", "peak RSS (MiB)")]


def fmt(metric, v):
    if metric == "rss":
        return "%.1f" % (v / 2**20)
    return "%.3g" % v if v < 1 else "%.1f" % v if v >= 100 else "%.2f" % v


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sorun", default=os.path.join(ROOT, "bazel-bin", "tools", "sorun"))
    ap.add_argument("--models-dir", help="existing tvm_models.py output (e.g. the interop job's OUT_DIR/models)")
    ap.add_argument("--out", default="/tmp/sorun-interop-bench")
    ap.add_argument("--venv", default=os.environ.get("SORUN_TVM_VENV", os.path.expanduser("~/.cache/sorun/tvm-venv")))
    ap.add_argument("--models", default="resnet18,mobilenet,mlp")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--processes", type=int, default=3)
    ap.add_argument("--markdown")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    models = [m for m in args.models.split(",") if m]
    if not os.access(args.sorun, os.X_OK):
        sys.exit("interop_compare: no sorun binary at %s (bazel build //tools:sorun)" % args.sorun)

    py = tvm_venv(args.venv)
    exe, tvm_dir = build_harness(py, args.out)
    tvm_version = sh([py, "-c", "import tvm; print(tvm.__version__)"]).strip()
    sorun_version = sh([args.sorun, "--version"]).strip().split(" (")[0]
    models_dir = ensure_models(py, args.models_dir, args.out, models)

    env = dict(os.environ)
    for k in ("TVM_NUM_THREADS", "OMP_NUM_THREADS", "SORUN_NUM_THREADS"):
        env[k] = str(args.threads)
    load_before = os.getloadavg()
    t0 = time.time()
    results = {}
    for m in models:
        d = os.path.join(models_dir, m)
        man = json.load(open(os.path.join(d, "manifest.json")))
        (name, (shape, dtype)), = man["input_shapes"].items()
        raw = os.path.join(args.out, m + "_input.raw")
        sh([py, "-c", "import numpy as np, sys; np.load(sys.argv[1]).tofile(sys.argv[2])",
            os.path.join(d, "input_data.npy"), raw])
        raw_spec = "%s=%s:%s:%s" % (name, raw, dtype, "x".join(str(s) for s in shape))
        runs = {"tvm": [], "sorun": []}
        for k in range(args.processes):
            order = ["tvm", "sorun"] if k % 2 == 0 else ["sorun", "tvm"]
            for rt in order:
                r = run_tvm(exe, d, raw_spec, args, env) if rt == "tvm" else run_sorun(args.sorun, d, args, env)
                runs[rt].append(r)
        # TVM's output is checked against the reference (TVM's graph executor run at build time).
        ok = sh([py, "-c", "import numpy as np, sys; a = np.fromfile(sys.argv[1], dtype=np.float32); "
                 "b = np.load(sys.argv[2]).ravel(); print(a.shape == b.shape and bool(np.array_equal(a, b)))",
                 os.path.join(args.out, "tvm_output.raw"), os.path.join(d, "reference_output_0.npy")]).strip()
        results[m] = {rt: {k: statistics.median(r[k] for r in runs[rt]) for k, _ in METRICS} for rt in runs}
        results[m]["tvm_output_matches"] = ok == "True"
        print("%s: done (%d processes per runtime)" % (m, args.processes), flush=True)
    load_after = os.getloadavg()

    header = ("sorun vs TVM runtime: TVM %s (hhb-tvm 3.2.3, libtvm_runtime.so via the C API) | %s | "
              "%d thread(s) each | median of %d fresh processes per runtime, each %d runs after %d warmup | "
              "%s, %d cores, load average %.1f before / %.1f after | %.0f s" % (
                  tvm_version, sorun_version, args.threads, args.processes, args.repeat, args.warmup,
                  cpu_name(), os.cpu_count() or 0, load_before[0], load_after[0], time.time() - t0))
    rows = []
    for m in models:
        for k, label in METRICS:
            t, s = results[m]["tvm"][k], results[m]["sorun"][k]
            rows.append((m, label, fmt(k, t), fmt(k, s), "%.2f" % (s / t) if t else "-"))
    widths = [max(len(r[i]) for r in rows + [("model", "metric", "TVM", "sorun", "sorun/TVM")]) for i in range(5)]
    print()
    print(header)
    line = lambda r: "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
    print(line(("model", "metric", "TVM", "sorun", "sorun/TVM")))
    last = None
    for r in rows:
        print(line((r[0] if r[0] != last else "",) + r[1:]))
        last = r[0]
    bad = [m for m in models if not results[m]["tvm_output_matches"]]
    print("TVM harness outputs equal TVM's reference: %s" % ("yes" if not bad else "NO for " + ", ".join(bad)))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(header + "\n\n")
            f.write("| model | metric | TVM runtime | sorun | sorun/TVM |\n|---|---|---:|---:|---:|\n")
            last = None
            for r in rows:
                f.write("| %s | %s | %s | %s | %s |\n" % (((r[0] if r[0] != last else ""),) + r[1:]))
                last = r[0]
    json.dump(results, open(os.path.join(args.out, "interop_compare.json"), "w"), indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
