#!/usr/bin/env bash
# CI check: the CPU runtimes' sizes. Builds each runtime library of bench/footprint_budget.txt with
# -c opt (the build the Python wheel and the callgrind job share): //api:libsorun_runtime_cpu.so (both
# executor kinds), libsorun_runtime_graph_cpu.so (graph executor only), libsorun_runtime_vm_cpu.so
# (Relax VM only); strips each and compares the stripped byte count with its budget. Fails (exit 1)
# when one is more than 2% over, naming both numbers; says so when one is more than 5% under (lower the
# budget in the same change so the next growth shows). The minimal-size build (--config=minsize) is
# measured by bench/run_footprint.sh.
#
# usage: bench/footprint_check.sh [BUDGET_FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/budget_verdict.sh
BUDGET_FILE=${1:-bench/footprint_budget.txt}
mapfile -t budgets < <(grep -v '^#' "$BUDGET_FILE" | grep -v '^[[:space:]]*$')
targets=()
for line in "${budgets[@]}"; do targets+=("//api:$(echo "$line" | awk '{print $1}')"); done
bazel build -c opt "${targets[@]}" >&2
bin="$(bazel info -c opt bazel-bin 2>/dev/null)/api"
stripped=$(mktemp)
trap 'rm -f "$stripped"' EXIT
status=0
for line in "${budgets[@]}"; do
  read -r lib budget <<<"$line"
  strip -o "$stripped" "$bin/$lib"
  size=$(stat -c %s "$stripped")
  budget_verdict footprint "$lib stripped" "$size" "$budget" || status=1
done
exit $status
