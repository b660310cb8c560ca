#!/usr/bin/env bash
# Target 4 (dispatch): GraphExecutor::Run on the 10,000-node chain vs a hand loop over the same
# compiled function with prebuilt arguments (ratio of medians, alternating; target <= 1.3).
source "$(dirname "$0")/bench_common.sh"
bench_build //bench:dispatch_bench
bench_header "dispatch_bench (target 4)"
json="$OUT_DIR/dispatch.json"
"$BIN/bench/dispatch_bench" --benchmark_repetitions=5 --benchmark_out="$json" --benchmark_out_format=json "$@" >&2
python3 - "$json" <<'PY'
import json, sys, statistics
bs = [b for b in json.load(open(sys.argv[1]))["benchmarks"] if b["name"].startswith("BM_DispatchRatio") and b.get("run_type") == "iteration"]
r = statistics.median(b["ratio"] for b in bs)
e = statistics.median(b["executor_us"] for b in bs); h = statistics.median(b["hand_loop_us"] for b in bs)
print("| executor us / run (10k nodes) | hand loop us | ratio (median of 5 repetitions) | per-repetition ratios | target <= 1.3 |")
print("|---|---|---|---|---|")
print(f"| {e:.1f} | {h:.1f} | {r:.3f} | {', '.join('%.3f' % b['ratio'] for b in bs)} | {'PASS' if r <= 1.3 else 'FAIL'} |")
PY
