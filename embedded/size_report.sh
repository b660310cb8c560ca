#!/usr/bin/env bash
# The static core's size table (docs/embedded.md, bench/README.md) and its CI budget: builds the
# hello-model programs of embedded/BUILD.bazel for aarch64 at -Os (--config=aarch64 --config=minsize
# -c opt: -ffunction-sections, --gc-sections) and prints, per variant, what sorun adds to
# .text + .rodata + .data (hello_model_<variant> minus embedded:baseline, the same program without sorun;
# both link libc and libstdc++ dynamically). Fails (exit 1) when a variant is more than 2% over its line in
# embedded/size_budget.txt; says so when one is more than 5% under (lower the budget in the same change).
#
# SORUN_SIZE_NOEXC=1 adds the -fno-exceptions -fno-rtti variants (hello_model_<variant>_noexc, lines
# both_noexc, graph_noexc, vm_noexc of the budget): a second compile of the whole runtime, so CI leaves it
# out (docs/embedded.md).
#
# usage: embedded/size_report.sh [BUDGET_FILE]   (extra bazel flags: SORUN_SIZE_BAZEL_FLAGS)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/budget_verdict.sh
BUDGET_FILE=${1:-embedded/size_budget.txt}
FLAGS=(--config=aarch64 --config=minsize -c opt ${SORUN_SIZE_BAZEL_FLAGS:-})
VARIANTS=(both graph vm)
[ "${SORUN_SIZE_NOEXC:-0}" = 1 ] && VARIANTS+=(both_noexc graph_noexc vm_noexc)
TARGETS=(//embedded:baseline)
for variant in "${VARIANTS[@]}"; do
  suffix=$(echo "_$variant" | sed 's/^_both//')
  TARGETS+=("//embedded:hello_model$suffix" "//embedded:sorun_core$suffix")
done
bazel build "${FLAGS[@]}" "${TARGETS[@]}" >&2
bin="$(bazel info "${FLAGS[@]}" bazel-bin 2>/dev/null)/embedded"
# .text + .rodata + .data of one ELF file (section sizes from `size -A`).
tdr() { aarch64-linux-gnu-size -A "$1" | awk '$1 == ".text" || $1 == ".rodata" || $1 == ".data" {s += $2} END {print s}'; }
base=$(tdr "$bin/baseline")
status=0
printf '%-16s %12s %14s\n' variant "sorun adds" "archive bytes"
for variant in "${VARIANTS[@]}"; do
  suffix=$(echo "_$variant" | sed 's/^_both//')
  added=$(( $(tdr "$bin/hello_model$suffix") - base ))
  archive=$(stat -c %s "$bin/libsorun_core$suffix.a")
  printf '%-16s %12d %14d\n' "$variant" "$added" "$archive"
  budget=$(awk -v v="$variant" '$1 == v {print $2}' "$BUDGET_FILE")
  [ -n "$budget" ] || { echo "size: no budget line for $variant in $BUDGET_FILE"; status=1; continue; }
  budget_verdict size "$variant adds" "$added" "$budget" || status=1
done
exit $status
