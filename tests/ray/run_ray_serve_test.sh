#!/usr/bin/env bash
# The Ray Serve test (docs/python.md, "Ray Serve"): a 2-node Ray cluster on loopback (`ray start --head` and
# `ray start --address`, separate process groups), the zoo's big256 (256 MiB of weights) served by sorun
# replicas and by ONNX Runtime replicas, requests checked, replicas scaled under load, memory measured
# (tests/ray/ray_serve_test.py says what is checked). The venv is tests/ray/install_ray.sh's.
#
# usage: tests/ray/run_ray_serve_test.sh [JUNIT_XML]
#   SORUN_RAY_OUT   where the results (ray_serve.json), the ONNX file and Ray's logs go
#                   (default $HOME/.cache/sorun/ray-test; wiped first)
#   SORUN_RAY_VENV  see install_ray.sh
#   SORUN_RAY_WHEEL, SORUN_RAY_MODELS  a built cp311 wheel and model-zoo directory (default: built here by Bazel)
# Exit codes: 0 passed; 3 = cannot run here ("skipped: <reason>" on the last line); else a failure.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${SORUN_RAY_OUT:-$HOME/.cache/sorun/ray-test}
JUNIT=${1:-$OUT/ray_serve_results.xml}
VENV=${SORUN_RAY_VENV:-$HOME/.cache/sorun/ray-venv}
MODEL=big256
T0=$(date +%s)

fail() { echo "run_ray_serve_test: FAILED: $*" >&2; exit 1; }
case "$OUT" in /*) ;; *) OUT="$(pwd)/$OUT" ;; esac
case "$OUT/" in "$ROOT"/*) fail "the output directory must live outside the repository (got $OUT)" ;; esac

cd "$ROOT" || exit 1
WHEEL=${SORUN_RAY_WHEEL:-}
MODELS=${SORUN_RAY_MODELS:-}
if [ -z "$WHEEL" ]; then
  bazel build -c opt //python:wheel || fail "bazel build -c opt //python:wheel"
  WHEEL=$(ls "$(bazel info -c opt bazel-bin 2>/dev/null)"/python/sorun-*-cp311-cp311-manylinux_*_x86_64.whl) || fail "no wheel"
fi
if [ -z "$MODELS" ]; then
  bazel build "//testdata/models:$MODEL" || fail "bazel build //testdata/models:$MODEL"
  MODELS="$(bazel info bazel-bin 2>/dev/null)/testdata/models"
fi
SORUN_RAY_VENV="$VENV" bash "$HERE/install_ray.sh" "$WHEEL"
rc=$?
[ $rc -eq 0 ] || exit $rc
PY="$VENV/bin/python"

rm -rf "$OUT"
mkdir -p "$OUT/reports" "$OUT/ray" "$(dirname "$JUNIT")" || fail "mkdir $OUT"
"$PY" "$HERE/onnx_from_graph.py" "$MODELS/$MODEL.json" "$MODELS/$MODEL.params" "$OUT/$MODEL.onnx" ||
  fail "onnx_from_graph.py"
echo "run_ray_serve_test: venv, model and ONNX file ready in $(( $(date +%s) - T0 )) s"

# Free loopback ports: GCS, HTTP, and per node the agents' ports (two nodes share this host).
read -r GCS HTTP P1 P2 P3 P4 P5 P6 P7 P8 < <("$PY" - <<'PYEOF'
import socket
socks = [socket.socket() for _ in range(10)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
PYEOF
)
export RAY_USAGE_STATS_ENABLED=0 PYTHONPATH="$HERE" RAY_ADDRESS="127.0.0.1:$GCS"
common=(--block --node-ip-address=127.0.0.1 --num-cpus=4 --object-store-memory=100000000 --disable-usage-stats)
PGIDS=()
cleanup() {
  local g
  for g in "${PGIDS[@]}"; do kill -TERM -- "-$g" 2>/dev/null; done
  for _ in $(seq 30); do
    local alive=0
    for g in "${PGIDS[@]}"; do kill -0 -- "-$g" 2>/dev/null && alive=1; done
    [ $alive -eq 0 ] && return
    sleep 0.5
  done
  for g in "${PGIDS[@]}"; do kill -KILL -- "-$g" 2>/dev/null; done
}
trap cleanup EXIT
# setsid: each node is its own process group, ended by its id at exit.
setsid "$VENV/bin/ray" start --head --port="$GCS" --include-dashboard=false --temp-dir="$OUT/ray" \
  --dashboard-agent-listen-port="$P1" --dashboard-agent-grpc-port="$P2" --metrics-export-port="$P3" \
  --runtime-env-agent-port="$P4" "${common[@]}" > "$OUT/head.log" 2>&1 &
PGIDS+=($!)
for _ in $(seq 120); do "$VENV/bin/ray" status > /dev/null 2>&1 && break; sleep 0.5; done
"$VENV/bin/ray" status > /dev/null 2>&1 || { tail -20 "$OUT/head.log"; fail "the head node did not start"; }
setsid "$VENV/bin/ray" start --address="127.0.0.1:$GCS" \
  --dashboard-agent-listen-port="$P5" --dashboard-agent-grpc-port="$P6" --metrics-export-port="$P7" \
  --runtime-env-agent-port="$P8" "${common[@]}" > "$OUT/worker.log" 2>&1 &
PGIDS+=($!)
echo "run_ray_serve_test: head up, worker starting, in $(( $(date +%s) - T0 )) s (GCS 127.0.0.1:$GCS)"

t=$(date +%s)
"$PY" "$HERE/ray_serve_test.py" --models "$MODELS" --model "$MODEL" --onnx "$OUT/$MODEL.onnx" --port "$HTTP" \
  --report-dir "$OUT/reports" --json "$OUT/ray_serve.json" 2>&1 | tee "$OUT/driver.log"
rc=${PIPESTATUS[0]}
secs=$(( $(date +%s) - t ))
if [ $rc -eq 0 ]; then body=""; else body="<failure message=\"see $OUT/driver.log\"/>"; fi
printf '<?xml version="1.0"?>\n<testsuite name="ray_serve" tests="1" failures="%d"><testcase classname="ray_serve" name="two_nodes_%s_sorun_and_onnxruntime" time="%d">%s</testcase></testsuite>\n' \
  "$([ $rc -eq 0 ] && echo 0 || echo 1)" "$MODEL" "$secs" "$body" > "$JUNIT"
echo "run_ray_serve_test: driver exit $rc in $secs s; $(( $(date +%s) - T0 )) s in all; results $OUT/ray_serve.json"
[ $rc -eq 0 ] || exit 1
