#!/usr/bin/env bash
# The static core's size table (docs/embedded.md, bench/README.md) and its CI budget: builds the
# hello-model programs of embedded/BUILD.bazel for aarch64 at -Os (--config=aarch64 --config=minsize
# -c opt: -ffunction-sections, --gc-sections) and prints, per variant, what sorun adds to
# .text + .rodata + .data (hello_model_<variant> minus embedded:baseline, the same program without sorun,
# built alike; both link libc and libstdc++ dynamically). Fails (exit 1) when a variant is more than 2% over
# its line in embedded/size_budget.txt; says so when one is more than 5% under (lower the budget in the same
# change).
#
# Variants: both, graph, vm (the default build of each core), and graph_noexc_lto: the graph-only core
# compiled with -fno-exceptions -fno-rtti and linked with link-time optimization (--config=minsize_lto),
# the configuration that meets issue 23's 300 KB goal (its build adds 72 s to CI; docs/embedded.md).
# SORUN_SIZE_NOEXC=1 adds both_noexc, vm_noexc and graph_noexc (the -fno-exceptions -fno-rtti cores
# without LTO: a second compile of the whole runtime, so CI leaves them out); SORUN_SIZE_LTO=1 adds the
# _lto counterpart (--config=minsize_lto) of every other variant. A variant's target is
# hello_model_<variant without _lto>, "both" being plain hello_model.
#
# usage: embedded/size_report.sh [BUDGET_FILE]   (extra bazel flags: SORUN_SIZE_BAZEL_FLAGS)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/budget_verdict.sh
BUDGET_FILE=${1:-embedded/size_budget.txt}
COMMON_FLAGS=(--config=aarch64 -c opt ${SORUN_SIZE_BAZEL_FLAGS:-})
PLAIN_FLAGS=("${COMMON_FLAGS[@]}" --config=minsize)
LTO_FLAGS=("${COMMON_FLAGS[@]}" --config=minsize_lto)
PLAIN=(both graph vm)
[ "${SORUN_SIZE_NOEXC:-0}" = 1 ] && PLAIN+=(both_noexc graph_noexc vm_noexc)
LTO=(graph_noexc_lto)
if [ "${SORUN_SIZE_LTO:-0}" = 1 ]; then
  for variant in "${PLAIN[@]}"; do
    [ "$variant" = graph_noexc ] || LTO+=("${variant}_lto")
  done
fi
# hello_model<suffix> of a variant name (both -> "", graph_noexc_lto -> _graph_noexc).
suffix_of() { echo "_$1" | sed 's/_lto$//; s/^_both//'; }
# Builds the baseline and the variants' programs and archives with the flags after "--".
build() {
  local targets=(//embedded:baseline)
  while [ "$1" != -- ]; do
    targets+=("//embedded:hello_model$(suffix_of "$1")" "//embedded:sorun_core$(suffix_of "$1")")
    shift
  done
  shift
  bazel build "$@" "${targets[@]}" >&2
}
build "${PLAIN[@]}" -- "${PLAIN_FLAGS[@]}"
build "${LTO[@]}" -- "${LTO_FLAGS[@]}"
plain_bin="$(bazel info "${PLAIN_FLAGS[@]}" bazel-bin 2>/dev/null)/embedded"
lto_bin="$(bazel info "${LTO_FLAGS[@]}" bazel-bin 2>/dev/null)/embedded"
# .text + .rodata + .data of one ELF file (section sizes from `size -A`).
tdr() { aarch64-linux-gnu-size -A "$1" | awk '$1 == ".text" || $1 == ".rodata" || $1 == ".data" {s += $2} END {print s}'; }
status=0
printf '%-16s %12s %14s\n' variant "sorun adds" "archive bytes"
for variant in "${PLAIN[@]}" "${LTO[@]}"; do
  bin=$plain_bin
  [ "${variant%_lto}" = "$variant" ] || bin=$lto_bin
  suffix=$(suffix_of "$variant")
  added=$(( $(tdr "$bin/hello_model$suffix") - $(tdr "$bin/baseline") ))
  archive=$(stat -c %s "$bin/libsorun_core$suffix.a")
  printf '%-16s %12d %14d\n' "$variant" "$added" "$archive"
  budget=$(awk -v v="$variant" '$1 == v {print $2}' "$BUDGET_FILE")
  [ -n "$budget" ] || { echo "size: no budget line for $variant in $BUDGET_FILE"; status=1; continue; }
  budget_verdict size "$variant adds" "$added" "$budget" || status=1
done
exit $status
