#!/usr/bin/env bash
# Target 1 (load in place): load-to-ready (Load + CreateExecutor) vs one memcpy of the params
# (pre-faulted destination = the limit; fresh destination for reference), verify on and off, and the
# first run (page cache warm, and cold: the file dropped from the page cache), for 1, 16, 256, 1024 MiB. Ratio target: <= 0.10 for >= 256 MiB.
#   bench/run_load.sh [extra --benchmark_* flags]      SORUN_BENCH_SIZES_MIB=1,16,256,1024
source "$(dirname "$0")/bench_common.sh"
bench_build //bench:load_bench
bench_header "load_bench (target 1)"
JSON="$OUT_DIR/load_bench.json"
"$BIN/bench/load_bench" --benchmark_out="$JSON" --benchmark_out_format=json "$@" >&2
python3 - "$JSON" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("| model params | verify | load-to-ready ms | memcpy pre-faulted ms | memcpy fresh ms | ratio (limit: pre-faulted) | ratio vs fresh | target <= 0.10 |")
print("|---|---|---|---|---|---|---|---|")
for b in d["benchmarks"]:
    if not b["name"].startswith("BM_LoadToReady"): continue
    mib = b["param_MiB"]; r = b["ratio_vs_prefaulted"]
    verdict = ("PASS" if r <= 0.10 else "FAIL") if mib >= 256 else "n/a (<256 MiB)"
    print(f"| {mib:.0f} MiB | {'on' if '/verify:1' in b['name'] else 'off'} | {b['load_ready_ms']:.3f} | "
          f"{b['memcpy_prefaulted_ms']:.2f} | {b['memcpy_fresh_ms']:.2f} | {r:.4f} | {b['ratio_vs_fresh']:.4f} | {verdict} |")
print()
print("| model params | first run ms (faults weights in) | second run ms | memcpy pre-faulted ms |")
print("|---|---|---|---|")
for b in d["benchmarks"]:
    if not b["name"].startswith("BM_FirstRun"): continue
    print(f"| {b['param_MiB']:.0f} MiB | {b['first_run_ms']:.2f} | {b['second_run_ms']:.2f} | {b['memcpy_prefaulted_ms']:.2f} |")
print()
print("| model params | load-to-ready from memory ms | from the file ms | ratio memory / file |")
print("|---|---|---|---|")
for b in d["benchmarks"]:
    if not b["name"].startswith("BM_MemoryVsFile"): continue
    print(f"| {b['param_MiB']:.0f} MiB | {b['memory_load_ready_ms']:.2f} | {b['file_load_ready_ms']:.3f} | {b['ratio_memory_vs_file']:.1f} |")
print()
print("| model params | cold start: load-to-ready ms | cold start: first run ms (reads the weights from disk) |")
print("|---|---|---|")
for b in d["benchmarks"]:
    if not b["name"].startswith("BM_ColdStart"): continue
    print(f"| {b['param_MiB']:.0f} MiB | {b['cold_load_ready_ms']:.3f} | {b['cold_first_run_ms']:.1f} |")
PY
