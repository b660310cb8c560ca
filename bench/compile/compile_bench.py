#!/usr/bin/env python3
"""`sorun compile` benchmark (bench/compile/README.md): bench/peer's ONNX models compiled for this CPU untuned and
after growing MetaSchedule budgets (one database per model, so each point continues the last), each result run
by sorun against ONNX Runtime on the same inputs, interleaved in one process, at 1 and 2 threads.

usage: (the compile venv: tests/compile/install_compile_venv.sh, with the sorun wheel installed)
    python bench/compile/compile_bench.py --out DIR [--models resnet18,mobilenetv2] [--budgets 0,5m,15m]
                                          [--threads 1,2] [--rounds 5] [--runs 20] [--markdown FILE]
A budget is cumulative tuning time (or trials) on the model's database; 0 is TVM's default schedules. Steady
state per point: the median over rounds of each round's median run time (R runs after 3 warm-up runs); the
order of the runtimes rotates every round. Writes DIR/compile_bench.json and prints a markdown table.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "peer"))
import onnx_models  # noqa: E402  (bench/peer: ResNet-18 and MobileNetV2 of torchvision's structure)


def budget_seconds(b):
    m = re.fullmatch(r"(\d+)(s|m|h)?", b)
    return int(m.group(1)) * {"s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]


def compile_point(onnx_path, out, db, budget):
    args = [sys.executable, "-m", "sorun.compile", onnx_path, "-o", out, "--json", out + ".json"]
    if budget != "0":
        args += ["--tune", budget, "--database", db]
    t0 = time.time()
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("compile_bench: %s failed:\n%s" % (" ".join(args), r.stderr[-3000:]))
    with open(out + ".json") as f:
        report = json.load(f)
    report["wall_s"] = time.time() - t0
    return report


def measure(variants, rounds, runs):
    """{name: median over rounds of the round's median ms} for callables variants[name](x)."""
    per = {name: [] for name in variants}
    names = list(variants)
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            fn = variants[name]
            for _ in range(3):
                fn()
            times = []
            for _ in range(runs):
                t = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t) * 1e3)
            per[name].append(statistics.median(times))
    return {name: statistics.median(v) for name, v in per.items()}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--models", default="mobilenetv2,resnet18")
    p.add_argument("--budgets", default="0,5m,15m")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--markdown")
    a = p.parse_args()
    import onnx
    import onnxruntime as ort
    import sorun

    os.makedirs(a.out, exist_ok=True)
    budgets = a.budgets.split(",")
    results = {"load_average": os.getloadavg(), "cpu": open("/proc/cpuinfo").read().split("model name")[1]
               .split("\n")[0].strip(": "), "points": []}
    for name in a.models.split(","):
        onnx_path = os.path.join(a.out, name + ".onnx")
        onnx.save(onnx_models.MODELS[name](), onnx_path)
        x = np.random.default_rng(1).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)
        db = os.path.join(a.out, name + ".db")
        for budget in budgets:
            out = os.path.join(a.out, "%s.%s.so" % (name, budget))
            report = compile_point(onnx_path, out, db, budget)
            print("%s budget %s: compiled in %.0f s" % (name, budget, report["wall_s"]), flush=True)
            for t in [int(v) for v in a.threads.split(",")]:
                ex = sorun.load(out).executor(num_threads=t)
                ex.set_input("data", x)
                opts = ort.SessionOptions()
                opts.intra_op_num_threads, opts.inter_op_num_threads = t, 1
                sess = ort.InferenceSession(onnx_path, opts, providers=["CPUExecutionProvider"])
                want = sess.run(None, {"data": x})[0]
                ex.run()
                got = np.asarray(ex.get_output(0))
                scale = float(np.abs(want).max())
                ms = measure({"sorun": ex.run, "ort": lambda: sess.run(None, {"data": x})}, a.rounds, a.runs)
                point = {"model": name, "budget": budget, "threads": t, "sorun_ms": ms["sorun"], "ort_ms": ms["ort"],
                         "ratio": ms["sorun"] / ms["ort"], "max_diff_rel_scale": float(np.abs(got - want).max()) / scale,
                         "tuning": report["tuning"], "compile_s": report["wall_s"], "load_average": os.getloadavg()}
                results["points"].append(point)
                print("  %d thread(s): sorun %.2f ms, ORT %.2f ms, ratio %.2f" % (t, ms["sorun"], ms["ort"],
                                                                                  point["ratio"]), flush=True)
                del ex, sess
    with open(os.path.join(a.out, "compile_bench.json"), "w") as f:
        json.dump(results, f, indent=1)
    lines = ["| model | tuning budget (cumulative) | trials | threads | sorun ms | ONNX Runtime ms | sorun / ORT |",
             "|---|---|---:|---:|---:|---:|---:|"]
    trials = {}
    for pt in results["points"]:
        t = pt["tuning"] or {}
        trials[(pt["model"], pt["budget"])] = trials.get((pt["model"], pt["budget"]), 0) or t.get("trials", 0)
    cum = {}
    for pt in results["points"]:
        key = (pt["model"], pt["budget"])
        if key not in cum:
            prev = [v for (m, b), v in cum.items() if m == pt["model"]]
            cum[key] = (prev[-1] if prev else 0) + trials[key]
        lines.append("| %s | %s | %d | %d | %.2f | %.2f | %.2f |" % (
            pt["model"], "none" if pt["budget"] == "0" else pt["budget"], cum[key], pt["threads"], pt["sorun_ms"],
            pt["ort_ms"], pt["ratio"]))
    table = "\n".join(lines)
    print(table)
    print("load average at the end: %.2f %.2f %.2f" % os.getloadavg())
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
