#!/usr/bin/env bash
# CI check: the CPU runtime's size. Builds //api:libsorun_runtime_cpu.so with -c opt (the build the
# Python wheel and the callgrind job share), strips it and compares the stripped byte count with the
# budget in bench/footprint_budget.txt. Fails (exit 1) when it is more than 2% over, naming both
# numbers; says so when it is more than 5% under (lower the budget in the same change so the next
# growth shows). The minimal-size build (--config=minsize) is measured by bench/run_footprint.sh.
#
# usage: bench/footprint_check.sh [BUDGET_FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
BUDGET_FILE=${1:-bench/footprint_budget.txt}
bazel build -c opt //api:libsorun_runtime_cpu.so >&2
so="$(bazel info -c opt bazel-bin 2>/dev/null)/api/libsorun_runtime_cpu.so"
stripped=$(mktemp)
trap 'rm -f "$stripped"' EXIT
strip -o "$stripped" "$so"
size=$(stat -c %s "$stripped")
budget=$(grep -v '^#' "$BUDGET_FILE" | head -1 | tr -d '[:space:]')
limit=$(( budget + budget / 50 ))
if [ "$size" -gt "$limit" ]; then
  echo "footprint: libsorun_runtime_cpu.so stripped $size bytes OVER BUDGET $budget (+2% = $limit)"
  exit 1
fi
if [ "$size" -lt $(( budget - budget / 20 )) ]; then
  echo "footprint: libsorun_runtime_cpu.so stripped $size bytes, budget $budget: ok, more than 5% under: lower it"
else
  echo "footprint: libsorun_runtime_cpu.so stripped $size bytes, budget $budget: ok"
fi
