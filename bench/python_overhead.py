#!/usr/bin/env python3
"""Per-call overhead of the Python binding: ex.run() (pre-set inputs) vs the C++ GraphExecutor::Run(),
both in this process, on the same executor, interleaved round by round.

usage: python_overhead.py MODELS_DIR [--rounds 21] [--calls 2000] [--models chain10k,mlp]
Run by the Python of the venv the wheel is installed in (tests/python/run_python_tests.sh makes one),
e.g.  ~/.cache/sorun/python-venv/bin/python bench/python_overhead.py $(bazel info -c opt bazel-bin)/testdata/models
Each round times `calls` back-to-back C++ Run() calls (sorun._sorun._bench_run_loop: the GIL released
once, steady_clock around the loop) and then `calls` back-to-back ex.run() calls (time.perf_counter_ns
around the loop; the loop's own bytecode, ~20 ns a call, is counted against the binding). Reported:
the median over rounds of each side's µs/call, and the median of the per-round differences.
"""
import argparse
import os
import statistics
import time

import numpy as np

import sorun
from sorun import _sorun


def python_ns(ex, calls):
    run = ex.run
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        run()
    return time.perf_counter_ns() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--models", dest="names", default="chain10k,mlp")
    args = ap.parse_args()
    print("load average %.2f %.2f %.2f; sorun %s; %d threads; %d rounds of %d calls each side"
          % (*os.getloadavg(), sorun.__version__, sorun.num_threads(), args.rounds, args.calls))
    for name in args.names.split(","):
        ex = sorun.load(os.path.join(args.models, name + ".so")).executor()
        ex.set_input("data", np.load(os.path.join(args.models, name + "_input.npy")))
        _sorun._bench_run_loop(ex, args.calls)  # warm-up, both paths
        python_ns(ex, args.calls)
        cc, py = [], []
        for _ in range(args.rounds):  # interleaved: C++ then Python, round by round
            cc.append(_sorun._bench_run_loop(ex, args.calls) / args.calls / 1e3)
            py.append(python_ns(ex, args.calls) / args.calls / 1e3)
        c, p = statistics.median(cc), statistics.median(py)
        d = statistics.median(b - a for a, b in zip(cc, py))
        print("%-9s C++ Run() %8.2f us   Python ex.run() %8.2f us   extra %+6.2f us/call  (ratio %.3f)"
              % (name, c, p, d, p / c))
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
