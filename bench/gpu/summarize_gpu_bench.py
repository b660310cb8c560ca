#!/usr/bin/env python3
"""The tables of the GPU benchmark (bench/gpu/run_gpu_bench.sh's results folder) in markdown, for
bench/README.md.

usage: summarize_gpu_bench.py RESULTS_DIR      (prints the markdown)
Reads <model>.bench.json / .bench_graph.json (sorun bench --json), <model>.exec{1,4}[_graph].json
(gpu_executors_bench), <model>.ncu.csv (ncu's CSV, gpu__time_duration.sum per kernel of two runs), torch.json
(torch_bench.py), gpu.txt and date.txt. A missing part is shown as "-".
"""
import csv
import glob
import json
import os
import sys

TORCH_NAMES = {"resnet18": "resnet18", "mobilenetv2": "mobilenetv2"}
UNIT_MS = {"ns": 1e-6, "nsecond": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0, "second": 1e3}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def ms(v, digits=3):
    return "-" if v is None else ("%." + str(digits) + "f") % v


def ncu_kernel_ms(path, runs=2):
    """Sum of gpu__time_duration.sum over the kernels ncu profiled, per run, and the kernels per run."""
    try:
        with open(path) as f:
            lines = [l for l in f if l.startswith('"')]  # ncu prints its own log lines before the CSV
    except OSError:
        return None, None
    total, kernels = 0.0, 0
    for row in csv.DictReader(lines):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        value = float(row["Metric Value"].replace(",", ""))
        total += value * UNIT_MS.get(row.get("Metric Unit", "ns").strip(), 1e-6)
        kernels += 1
    return (total / runs, kernels // runs) if kernels else (None, None)


def main(argv):
    d = argv[1]
    models = sorted(os.path.basename(p)[:-len(".bench.json")] for p in glob.glob(os.path.join(d, "*.bench.json")))
    torch = load(os.path.join(d, "torch.json")) or {}
    gpu = open(os.path.join(d, "gpu.txt")).read().strip() if os.path.exists(os.path.join(d, "gpu.txt")) else "-"
    date = open(os.path.join(d, "date.txt")).read().strip() if os.path.exists(os.path.join(d, "date.txt")) else "-"
    out = ["GPU: %s; %s; PyTorch %s" % (gpu, date, torch.get("torch", "-")), "",
           "| model | sorun steady (median) | sorun + CUDA graph | sum of its kernels (ncu) | kernels | "
           "PyTorch eager | PyTorch CUDA graph | cold start: driver / context / code (JIT) / weights / first run |",
           "|---|---|---|---|---|---|---|---|"]
    for m in models:
        plain = load(os.path.join(d, m + ".bench.json")) or {}
        graph = load(os.path.join(d, m + ".bench_graph.json")) or {}
        kernel_ms, kernels = ncu_kernel_ms(os.path.join(d, m + ".ncu.csv"))
        t = torch.get("models", {}).get(TORCH_NAMES.get(m, ""), {})
        c = plain.get("cold_start", {})
        g = graph.get("cuda_graph", {})
        graph_cell = ms(graph.get("run_ms", {}).get("median"))
        if g.get("refusal"):
            graph_cell += " (not recorded: %s)" % g["refusal"][:80]
        cold = "-" if not c else "%s / %s / %s (%s) / %s / %s ms" % (
            ms(c.get("driver_open_ms"), 1), ms(c.get("device_context_ms"), 1), ms(c.get("module_load_ms"), 1),
            "JIT %s ms" % ms(c.get("jit_ms"), 1) if c.get("jit_ms") else "no JIT", ms(c.get("weight_upload_ms"), 1),
            ms(c.get("first_run_ms"), 1))
        out.append("| %s | %s ms | %s ms | %s ms | %s | %s | %s | %s |" % (
            m, ms(plain.get("run_ms", {}).get("median")), graph_cell, ms(kernel_ms), kernels if kernels else "-",
            ms(t.get("eager_ms", {}).get("median")) + (" ms" if t else ""),
            ms(t.get("graph_ms", {}).get("median")) + (" ms" if t else ""), cold))
    out += ["", "| model | executors | CUDA graph | runs/s | p50 latency | device memory per executor |",
            "|---|---|---|---|---|---|"]
    for m in models:
        for n in (1, 4):
            for suffix in ("", "_graph"):
                e = load(os.path.join(d, "%s.exec%d%s.json" % (m, n, suffix)))
                if not e:
                    continue
                per = e["device_bytes"]["per_executor"]
                out.append("| %s | %d | %s | %.1f | %s ms | %s |" % (
                    m, n, "yes" if suffix else "no", e["runs_per_second"], ms(e["latency_ms"]["p50"]),
                    "-" if per < 0 else "%.1f MiB" % (per / 2**20)))
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
