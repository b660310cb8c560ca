#!/usr/bin/env bash
# Interop check of the ELF blob injector (`sorun pack` without relinking) on real TVM artifacts:
# for each TVM three-file set (X_lib.so + X_graph.json + X.params, built by TVM 0.16 / LLVM 17), a
# GraphExecutorFactory blob is injected into a copy of X_lib.so, and the single resulting library is
#   1. checked with binutils (readelf -aW prints no warning, nm -D lists __tvm_dev_mblob),
#   2. loaded and run by sorun (LoadModule + GraphExecutor) against TVM's reference outputs,
#   3. loaded and run by TVM's own runtime (tvm.runtime.load_module(path)["default"](tvm.cpu())),
#   4. stripped with strip(1) and run by TVM again,
# and a TVM deploy library (which already has a blob) is refused, then replaced with --replace.
# With valgrind installed, one sorun run is repeated under memcheck.
#
# usage: tools/interop/inject_check.sh [ARTIFACTS_DIR] [TVM_VENV] [OUT_DIR]
#   ARTIFACTS_DIR  default /opt/tvm-research/artifacts/hhb
#   TVM_VENV       default /opt/tvm-research/venv-hhb (Python with TVM 0.16, e.g. hhb-tvm 3.2.3)
# Prints SKIP and exits 0 when the artifacts or the venv are absent; exits 1 on any failure.
set -euo pipefail

ART=${1:-/opt/tvm-research/artifacts/hhb}
VENV=${2:-/opt/tvm-research/venv-hhb}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY="$VENV/bin/python"

if [[ ! -f "$ART/mlp_lib.so" ]]; then echo "SKIP: no TVM artifacts in $ART"; exit 0; fi
if [[ ! -x "$PY" ]] || ! "$PY" -c "import tvm" >/dev/null 2>&1; then
  echo "SKIP: no Python with TVM at $VENV"; exit 0
fi

cd "$ROOT"
bazel build //tools/interop:sorun_inject >/dev/null 2>&1 || bazel build //tools/interop:sorun_inject
INJECT="$ROOT/bazel-bin/tools/interop/sorun_inject"
OUT=${3:-$(mktemp -d /tmp/sorun_inject_check.XXXXXX)}
mkdir -p "$OUT"
echo "TVM: $("$PY" -c 'import tvm; print(tvm.__version__, tvm.support.libinfo().get("LLVM_VERSION", ""))')"
echo "artifacts: $ART   output: $OUT"

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
run() { echo "+ $*"; "$@"; }

# model -> inputs (name=file) and outputs
declare -A INPUTS=(
  [mlp]="data=$ART/mlp_input_data.npy"
  [misc]="data=$ART/misc_input_data.npy idx=$ART/misc_input_idx.npy"
  [resnet18_logits]="data=$ART/resnet18_logits_input_data.npy"
  [mobilenet_logits]="data=$ART/mobilenet_logits_input_data.npy"
)
declare -A OUTPUTS=(
  [mlp]="$ART/mlp_output_0.npy"
  [misc]="$ART/misc_output_0.npy $ART/misc_output_1.npy $ART/misc_output_2.npy $ART/misc_output_3.npy"
  [resnet18_logits]="$ART/resnet18_logits_output_0.npy"
  [mobilenet_logits]="$ART/mobilenet_logits_output_0.npy"
)

for model in mlp misc resnet18_logits mobilenet_logits; do
  [[ -f "$ART/${model}_lib.so" ]] || { echo "skip $model (no ${model}_lib.so)"; continue; }
  echo; echo "=== $model"
  packed="$OUT/${model}_packed.so"
  run "$INJECT" pack --lib "$ART/${model}_lib.so" --graph "$ART/${model}_graph.json" \
      --params "$ART/${model}.params" --out "$packed" || { fail "$model: injection"; continue; }
  warnings=$(readelf -aW "$packed" 2>&1 >/dev/null || true)
  [[ -z "$warnings" ]] && echo "readelf -aW: no warnings" || fail "$model: readelf -aW: $warnings"
  nm -D "$packed" | grep -E ' R (__tvm_dev_mblob|__sorun_blob_checksum)$' || fail "$model: nm -D"

  in_args=(); exp_args=()
  for i in ${INPUTS[$model]}; do in_args+=(--input "$i"); done
  for e in ${OUTPUTS[$model]}; do exp_args+=(--expect "$e"); done
  run "$INJECT" run --model "$packed" "${in_args[@]}" "${exp_args[@]}" || fail "$model: sorun run"
  run "$PY" tools/interop/tvm_run_packed.py "$packed" "${in_args[@]}" "${exp_args[@]}" || fail "$model: TVM run"
  strip -o "$OUT/${model}_packed_stripped.so" "$packed" || fail "$model: strip"
  run "$PY" tools/interop/tvm_run_packed.py "$OUT/${model}_packed_stripped.so" "${in_args[@]}" "${exp_args[@]}" \
      || fail "$model: TVM run after strip"
done

echo; echo "=== deploy library that already has a blob"
if [[ -f "$ART/mlp_deploy.so" ]]; then
  if "$INJECT" pack --lib "$ART/mlp_deploy.so" --graph "$ART/mlp_graph.json" --params "$ART/mlp.params" \
       --out "$OUT/refused.so"; then
    fail "mlp_deploy.so was not refused"
  else
    echo "refused as expected"
  fi
  run "$INJECT" pack --replace --lib "$ART/mlp_deploy.so" --graph "$ART/mlp_graph.json" --params "$ART/mlp.params" \
      --out "$OUT/mlp_replaced.so" || fail "replace"
  run "$PY" tools/interop/tvm_run_packed.py "$OUT/mlp_replaced.so" --input "data=$ART/mlp_input_data.npy" \
      --expect "$ART/mlp_output_0.npy" || fail "TVM run of the replaced blob"
fi

if command -v valgrind >/dev/null 2>&1; then
  echo; echo "=== valgrind (memcheck) on a sorun load + run"
  run valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite -q \
      "$INJECT" run --model "$OUT/mlp_packed.so" --input "data=$ART/mlp_input_data.npy" \
      --expect "$ART/mlp_output_0.npy" || fail "valgrind"
fi

echo
if [[ $failures -ne 0 ]]; then echo "inject_check: $failures failure(s)"; exit 1; fi
echo "inject_check: all checks passed"
