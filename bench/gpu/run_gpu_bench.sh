#!/usr/bin/env bash
# The GPU benchmark, run on the GPU machine from the folder bench/gpu/stage_gpu_bench.sh staged (no Bazel,
# toolkit or sources there; bench/gpu/README.md). For every models/<name>.so:
#   - sorun bench --device cuda --json, kernel by kernel and with --cuda-graph (latency, cold start split);
#   - bin/gpu_executors_bench with 1 and 4 executors on 4 threads, without and with CUDA graphs
#     (throughput, latency, device memory per executor);
#   - the kernel-time limit: ncu --metrics gpu__time_duration.sum --clock-control none --cache-control none
#     over `sorun bench --warmup 0 --repeat 1` (two runs: the sum is halved), when ncu is on PATH;
# then torch_bench.py (PyTorch eager and CUDA graph on the same architectures) when torch is importable,
# and summarize_gpu_bench.py writes results/results.md. Ends with "N passed, M failed" (steps).
#
# Environment: SORUN_GPU_BENCH_SECONDS (per executor measurement, default 5), SORUN_GPU_BENCH_REPEAT (timed
# runs of sorun bench, default 200), SORUN_GPU_BENCH_RESULTS (default <folder>/results). The stand-in driver
# rehearsal (tests/cuda/gpu_bench_rehearsal_test.sh) sets them small.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
results=${SORUN_GPU_BENCH_RESULTS:-$here/results}
seconds=${SORUN_GPU_BENCH_SECONDS:-5}
repeat=${SORUN_GPU_BENCH_REPEAT:-200}
mkdir -p "$results"
# Drivers mounted outside the loader's default path (containers) are usually here; staged libraries in lib/.
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
  [ -e "$d/libcuda.so.1" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
done
[ -d "$here/lib" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$here/lib"
passed=0
failed=0
step() {  # step NAME OUTPUT COMMAND...: runs COMMAND with stdout to OUTPUT; counts it
  local name=$1 output=$2
  shift 2
  if "$@" >"$output" 2>"$output.err"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAILED: $name (exit $?): $(tail -3 "$output.err")"
  fi
}
t0=$(date +%s)
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader >"$results/gpu.txt"
else
  echo "no nvidia-smi (stand-in driver?)" >"$results/gpu.txt"
fi
date -u +%Y-%m-%dT%H:%M:%SZ >"$results/date.txt"
for model in "$here"/models/*.so; do
  name=$(basename "$model" .so)
  echo "=== $name"
  input=()
  [ -f "$here/models/$name.input.npy" ] && input=(--input "data=$here/models/$name.input.npy")
  step "$name sorun bench" "$results/$name.bench.json" \
    "$here/bin/sorun" bench "$model" --device cuda --warmup 20 --repeat "$repeat" --json "${input[@]}"
  step "$name sorun bench --cuda-graph" "$results/$name.bench_graph.json" \
    "$here/bin/sorun" bench "$model" --device cuda --warmup 20 --repeat "$repeat" --json --cuda-graph "${input[@]}"
  for n in 1 4; do
    for graph in "" --cuda-graph; do
      step "$name $n executor(s) $graph" "$results/$name.exec$n${graph:+_graph}.json" \
        "$here/bin/gpu_executors_bench" "$model" --executors "$n" --seconds "$seconds" $graph
    done
  done
  if command -v ncu >/dev/null; then
    step "$name ncu" "$results/$name.ncu.csv" ncu --metrics gpu__time_duration.sum --clock-control none \
      --cache-control none --csv "$here/bin/sorun" bench "$model" --device cuda --warmup 0 --repeat 1
  fi
done
if python3 -c "import torch, torchvision" 2>/dev/null; then
  step "torch" "$results/torch.log" python3 "$here/torch_bench.py" "$results/torch.json" --runs "$repeat"
else
  echo "torch: skipped (no torch/torchvision on this machine's python3)" | tee "$results/torch.log"
fi
step "summary" "$results/results.md" python3 "$here/summarize_gpu_bench.py" "$results"
cat "$results/results.md"
echo "GPU benchmark: $(( $(date +%s) - t0 )) s; results in $results"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
