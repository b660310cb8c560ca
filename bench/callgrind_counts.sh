#!/usr/bin/env bash
# Instruction counts (valgrind --tool=callgrind) per load, per executor creation and per run, for
# zoo models: figures that do not drift with the load of a shared machine (bench/README.md,
# "Instruction counts"). Prints a Markdown table; --tsv FILE also writes "model<TAB>phase<TAB>Ir per call".
#
# usage: bench/callgrind_counts.sh [--tsv FILE] [--count N] [MODEL...]
#        (default: chain10k mlp relax/mlp relax/dyn_batch)
# MODEL is a zoo model of testdata/models (built), or relax/NAME: a TVM Relax export of testdata/relax.
#
# One valgrind process per model and phase runs bench/callgrind_driver.cc (that phase N times, the
# others once; one uncounted first run before the runs); callgrind collects only inside the phase's
# function (--toggle-collect), and the count is divided by N. SORUN_NUM_THREADS=1 (a pool worker would be counted apart).
# Needs valgrind (tools/setup.sh). Builds with the repository's default configuration (.bazelrc: -O2).
set -euo pipefail
cd "$(dirname "$0")/.."
TSV=""
COUNT=3
MODELS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tsv) TSV=$2; shift 2 ;;
    --count) COUNT=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) MODELS+=("$1"); shift ;;
  esac
done
[ ${#MODELS[@]} -gt 0 ] || MODELS=(chain10k mlp relax/mlp relax/dyn_batch)
command -v valgrind >/dev/null || { echo "callgrind_counts: valgrind not found (bash tools/setup.sh)" >&2; exit 2; }

targets=(//bench:callgrind_driver)
for m in "${MODELS[@]}"; do
  case "$m" in relax/*) ;; *) targets+=("//testdata/models:$m") ;; esac
done
bazel build "${targets[@]}" >&2
BIN=$(bazel info bazel-bin 2>/dev/null)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

[ -z "$TSV" ] || : >"$TSV"
echo "| model | phase | instructions per call (Ir) |"
echo "|---|---|---:|"
for m in "${MODELS[@]}"; do
  case "$m" in
    relax/*) so="$PWD/testdata/$m.so" ;;
    *) so="$BIN/testdata/models/$m.so" ;;
  esac
  for phase in load create run; do
    SORUN_NUM_THREADS=1 valgrind -q --tool=callgrind --collect-atstart=no --toggle-collect="sorun_cg_$phase" \
      --callgrind-out-file="$WORK/${m//\//_}.$phase.out" "$BIN/bench/callgrind_driver" --model "$so" --phase "$phase" --count "$COUNT" >/dev/null
    total=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$WORK/${m//\//_}.$phase.out" | head -1)
    [ -n "$total" ] && [ "$total" -gt 0 ] || { echo "callgrind_counts: no instructions counted for $m $phase" >&2; exit 1; }
    per=$((total / COUNT))
    echo "| $m | $phase | $per |"
    [ -z "$TSV" ] || printf '%s\t%s\t%s\n' "$m" "$phase" "$per" >>"$TSV"
  done
done
