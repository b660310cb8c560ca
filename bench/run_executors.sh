#!/usr/bin/env bash
# Target 3 (many executors): RSS growth per extra executor from one load (1, 2, 4, 8 executors, each
# created and run once; fresh process per model) against its activations + 1 MiB, and the throughput
# of two executors on two threads against one, with kernels single-threaded (SORUN_NUM_THREADS=1,
# target >= 1.7x on 2 cores) and with the default pool size.
source "$(dirname "$0")/bench_common.sh"
bench_build //bench:memory_driver //bench:executor_throughput_bench //testdata/models:big256 //testdata/models:conv_heavy //testdata/models:cnn
bench_header "executors (target 3)"
TVM_DIR="${SORUN_TVM_ARTIFACTS:-/opt/tvm-research/artifacts/hhb}"
JSONL="$OUT_DIR/executors.jsonl"; : > "$JSONL"
models=("$BIN/testdata/models/conv_heavy.so" "$BIN/testdata/models/cnn.so" "$BIN/testdata/models/big256.so")
[[ -f "$TVM_DIR/resnet18_deploy.so" ]] && models+=("$TVM_DIR/resnet18_deploy.so")
for m in "${models[@]}"; do
  "$BIN/bench/memory_driver" --label "$(basename "$m")" --model "$m" --executors 8 --verify 0 >> "$JSONL"
done
python3 - "$JSONL" <<'PY'
import json, sys
print("| model | activations KiB | RSS after 1 exec MiB | RSS after 2 / 4 / 8 MiB | per extra executor KiB (2 / 4 / 8) | limit KiB (act + 1 MiB) | pass |")
print("|---|---|---|---|---|---|---|")
for line in open(sys.argv[1]):
    d = json.loads(line); s = d["scaling"]
    print(f"| {d['label']} | {d['activations_mib']*1024:.0f} | {d['after_first_run']['rss_mib']:.2f} | "
          f"{' / '.join('%.2f' % x['rss_mib'] for x in s)} | {' / '.join('%.0f' % x['per_extra_kib'] for x in s)} | "
          f"{d['per_extra_limit_kib']:.0f} | {'PASS' if d['per_extra_ok'] else 'FAIL'} |")
PY
echo
echo "| SORUN_NUM_THREADS | pool threads | 1 executor runs/s | 2 executors (2 threads) runs/s | speed-up (median of rounds) | CPU ms/run 1 exec / 2 exec (calling threads) | cores used by other processes meanwhile | load avg | target |"
echo "|---|---|---|---|---|---|---|---|---|"
for threads in 1 default; do
  json="$OUT_DIR/executor_throughput_${threads}.json"
  if [[ $threads == default ]]; then
    env -u SORUN_NUM_THREADS "$BIN/bench/executor_throughput_bench" --benchmark_filter=TwoExecutors --benchmark_out="$json" --benchmark_out_format=json >&2
  else
    SORUN_NUM_THREADS=$threads "$BIN/bench/executor_throughput_bench" --benchmark_filter=TwoExecutors --benchmark_out="$json" --benchmark_out_format=json >&2
  fi
  python3 - "$json" "$threads" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["benchmarks"][0]
t = sys.argv[2]
target = ("PASS" if b["speedup"] >= 1.7 else "FAIL") + " (>= 1.7)" if t == "1" else "n/a (explained)"
load = open("/proc/loadavg").read().split()[0]
print(f"| {t} | {b['pool_threads']:.0f} | {b['one_exec_runs_per_s']:.2f} | {b['two_exec_runs_per_s']:.2f} | {b['speedup']:.2f}x | "
      f"{b['one_exec_cpu_ms_per_run']:.1f} / {b['two_exec_cpu_ms_per_run']:.1f} | {b['other_procs_cores']:.2f} | {load} | {target} |")
PY
done
