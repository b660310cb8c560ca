#!/usr/bin/env python3
"""Per-call overhead of the Python binding: sorun's ex.run() (pre-set inputs) vs the C++ Run() as
timed by `sorun bench --json` (median of per-run times), on the same model, interleaved round by round.

usage: python_overhead.py SORUN_CLI MODELS_DIR [--rounds 5] [--calls 2000]
Run by the Python of the venv the wheel is installed in (tests/python/run_python_tests.sh makes one),
e.g.  ~/.cache/sorun/python-venv/bin/python bench/python_overhead.py \
          $(bazel info -c opt bazel-bin)/tools/sorun $(bazel info -c opt bazel-bin)/testdata/models
Python side: the median over batches of `calls` back-to-back ex.run() calls, total / calls. C++ side:
`sorun bench --repeat calls` (each timed run also calls DeviceApi::Sync, a no-op on the CPU, and
reads the clock twice: ~40 ns that the Python batches do not pay, so the difference is a slight
underestimate of the binding's cost).
"""
import argparse
import json
import os
import statistics
import subprocess
import time

import numpy as np

import sorun


def python_us(ex, calls):
    ex.run()
    t0 = time.perf_counter()
    for _ in range(calls):
        ex.run()
    return (time.perf_counter() - t0) / calls * 1e6


def cxx_us(cli, path, calls):
    out = subprocess.run([cli, "bench", path, "--repeat", str(calls), "--warmup", "100", "--json", "--no-verify"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["run_ms"]["median"] * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("models")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args()
    print("load average %.2f %.2f %.2f; sorun %s; %d threads" % (*os.getloadavg(), sorun.__version__, sorun.num_threads()))
    for name in ("chain10k", "mlp"):
        path = os.path.join(args.models, name + ".so")
        model = sorun.load(path)
        ex = model.executor()
        ex.set_input("data", np.load(os.path.join(args.models, name + "_input.npy")))
        py, cc = [], []
        for _ in range(args.rounds):  # interleaved: C++ then Python, round by round
            cc.append(cxx_us(args.cli, path, args.calls))
            py.append(python_us(ex, args.calls))
        p, c = statistics.median(py), statistics.median(cc)
        print("%-9s C++ Run() %8.2f us   Python ex.run() %8.2f us   extra %+6.2f us/call  (ratio %.3f; medians of %d rounds)"
              % (name, c, p, p - c, p / c, args.rounds))


if __name__ == "__main__":
    main()
