#!/usr/bin/env bash
# Rehearses the GPU benchmark (bench/gpu/run_gpu_bench.sh) on the stand-in driver: stages the folder layout
# stage_gpu_bench.sh --small makes (bin/, models/, the scripts) from the runfiles, runs it with
# testdata/cuda/fake_driver first on LD_LIBRARY_PATH (SORUN_FAKE_CUDA_ANY_KERNEL=1: the Relax export's kernels
# launch as no-ops) and short measurements, and checks that every step passed and that the summary has the
# rows: sorun with and without CUDA graphs (recorded, not refused, for both models), 1 and 4 executors with
# device memory per executor. PyTorch and ncu are absent here: those steps are skipped, as on a GPU machine
# without them.
set -euo pipefail
runfiles=${TEST_SRCDIR:-$PWD/..}/${TEST_WORKSPACE:-sorun}
stage=${TEST_TMPDIR:-/tmp}/gpu_bench
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/models"
cp "$runfiles/tools/sorun" "$runfiles/bench/gpu/gpu_executors_bench" "$stage/bin/"
cp "$runfiles/bench/gpu/run_gpu_bench.sh" "$runfiles/bench/gpu/torch_bench.py" \
  "$runfiles/bench/gpu/summarize_gpu_bench.py" "$stage/"
cp "$runfiles/testdata/models/mlp_cuda_only.so" "$stage/models/"
cp "$runfiles/testdata/relax_cuda/mlp_cubin.so" "$stage/models/mlp_relax.so"
export LD_LIBRARY_PATH="$runfiles/testdata/cuda/fake_driver" SORUN_FAKE_CUDA_ANY_KERNEL=1
export SORUN_GPU_BENCH_SECONDS=0.2 SORUN_GPU_BENCH_REPEAT=20 SORUN_GPU_BENCH_RESULTS="$stage/results"
log="$stage/run.log"
if ! PATH=/usr/bin:/bin bash "$stage/run_gpu_bench.sh" >"$log" 2>&1; then
  cat "$log"
  echo "FAIL: run_gpu_bench.sh failed"
  exit 1
fi
cat "$log"
fail() { echo "FAIL: $*"; exit 1; }
grep -q "^8 passed, 0 failed$\|^[0-9]* passed, 0 failed$" "$log" || fail "a step failed"
md="$stage/results/results.md"
for model in mlp_cuda_only mlp_relax; do
  grep -q "^| $model | [0-9.]* ms | [0-9.]* ms | " "$md" || fail "no latency row with a CUDA-graph latency for $model"
  grep -q "^| $model | [0-9.]* ms | [0-9.]* ms (not recorded" "$md" && fail "$model was not recorded as a CUDA graph"
  for n in 1 4; do
    grep -q "^| $model | $n | no | [0-9.]* | [0-9.]* ms | [0-9.]* MiB |" "$md" || fail "no $n-executor row for $model"
    grep -q "^| $model | $n | yes | [0-9.]* | [0-9.]* ms | [0-9.]* MiB |" "$md" || fail "no $n-executor graph row for $model"
  done
done
python3 - "$stage/results" <<'PY' || fail "JSON checks"
import json, sys
d = sys.argv[1]
for model in ("mlp_cuda_only", "mlp_relax"):
    bench = json.load(open("%s/%s.bench.json" % (d, model)))
    cold = bench["cold_start"]
    assert cold["modules_loaded"] >= 1, cold
    graph = json.load(open("%s/%s.bench_graph.json" % (d, model)))["cuda_graph"]
    assert graph["captures"] == 1 and graph["replays"] >= 20 and graph["refusal"] == "", graph
    four = json.load(open("%s/%s.exec4_graph.json" % (d, model)))
    assert four["graph_replays"] > 0 and four["runs"] > 0, four
# The zoo model's PTX is compiled by the (stand-in) driver's JIT; the Relax export is a cubin: no JIT.
assert json.load(open(d + "/mlp_cuda_only.bench.json"))["cold_start"]["modules_ptx_only"] == 1
assert json.load(open(d + "/mlp_relax.bench.json"))["cold_start"]["jit_ms"] == 0
print("JSON checks passed")
PY
echo "PASS"
