#!/usr/bin/env bash
# Builds sorun's libFuzzer targets (bazel --config=fuzz: clang, -fsanitize=fuzzer,address,undefined)
# and runs each one on a private copy of its committed corpus (fuzz/corpus/<target>/, never modified)
# with its dictionary (fuzz/dicts/<target>.dict). See fuzz/README.md.
#
# Usage: fuzz/run_fuzzers.sh [--long] [--time=SECONDS] [--runs=N] [--jobs=N] [--keep] [TARGET...]
#   (default)     smoke mode for CI: each target for --time seconds (default 15: 3 min of fuzzing)
#   --long        long mode: each target for --runs executions (default 1000000)
#   --time=S      seconds per target (smoke mode)
#   --runs=N      executions per target (long mode)
#   --jobs=N      targets fuzzed at the same time (default 1; each target is one process)
#   --keep        keep the work directory (logs, grown corpora) even when everything passed
#   TARGET...     a subset, e.g. blob_fuzzer npy_fuzzer (default: all twelve)
#
# Crashes, leaks, timeouts (-timeout=25 s per input), out-of-memory (-rss_limit_mb=2048, also any
# single malloc above it) and sanitizer reports fail the run: the input is written under the work
# directory and its path printed. The last lines are one summary line per target
#   <target>  OK|FAIL  execs=<n>  <s>s  [artifact path]
# and the exit status is non-zero when any target failed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

ALL_TARGETS=(blob_fuzzer factory_payload_fuzzer device_payload_fuzzer graph_json_fuzzer params_fuzzer npy_fuzzer
  elf_inspect_fuzzer tar_fuzzer elf_inject_fuzzer model_load_fuzzer memory_load_fuzzer relax_fuzzer relax_vm_fuzzer)
MODE=smoke
TIME=15
RUNS=1000000
JOBS=1
KEEP=0
TARGETS=()
for arg in "$@"; do
  case "$arg" in
    --long) MODE=long ;;
    --time=*) TIME=${arg#--time=} ;;
    --runs=*) RUNS=${arg#--runs=} ;;
    --jobs=*) JOBS=${arg#--jobs=} ;;
    --keep) KEEP=1 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) echo "run_fuzzers: unknown option $arg" >&2; exit 2 ;;
    *) TARGETS+=("$arg") ;;
  esac
done
[ "${#TARGETS[@]}" -eq 0 ] && TARGETS=("${ALL_TARGETS[@]}")
for t in "${TARGETS[@]}"; do
  [ -d "fuzz/corpus/$t" ] || { echo "run_fuzzers: unknown target $t (no fuzz/corpus/$t)" >&2; exit 2; }
done

START=$(date +%s)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sorun_fuzz.XXXXXX")
echo "=== building fuzzers (bazel build --config=fuzz //fuzz:fuzzers)"
bazel build --config=fuzz //fuzz:fuzzers >"$WORK/build.log" 2>&1
BUILD_RC=$?
grep -v -e "Cannot export local symbol" -e "^INFO: From Linking" "$WORK/build.log" | tail -n 25
BIN="$(bazel info --config=fuzz bazel-bin 2>/dev/null)/fuzz"
if [ "$BUILD_RC" -ne 0 ]; then
  echo "run_fuzzers: build FAILED (log: $WORK/build.log)"
  exit 1
fi
BUILD_S=$(( $(date +%s) - START ))
echo "=== built in ${BUILD_S}s; work directory: $WORK (mode: $MODE)"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0:detect_odr_violation=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# Runs one target; writes $WORK/<t>/result: "<status> <execs> <seconds> <artifact>".
run_one() {
  local t=$1 dir="$WORK/$1"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp -r "fuzz/corpus/$t/." "$dir/corpus/"
  local limit=(-max_total_time="$TIME")
  [ "$MODE" = long ] && limit=(-runs="$RUNS")
  local t0 rc
  t0=$(date +%s)
  # relax_vm_fuzzer's seeds are whole executables (the real CNN's is 25 KB, its weights included).
  local max_len=16384
  [ "$t" = relax_vm_fuzzer ] && max_len=32768
  "$BIN/$t" "${limit[@]}" -dict="fuzz/dicts/$t.dict" -artifact_prefix="$dir/artifacts/" \
    -print_final_stats=1 -timeout=25 -rss_limit_mb=2048 -max_len="$max_len" "$dir/corpus" >"$dir/log" 2>&1
  rc=$?
  local secs=$(( $(date +%s) - t0 ))
  local execs
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/log" | tail -1 | grep -o '[0-9]*$')
  local artifact
  artifact=$(ls "$dir"/artifacts/crash-* "$dir"/artifacts/leak-* "$dir"/artifacts/timeout-* "$dir"/artifacts/oom-* \
    2>/dev/null | head -1)
  local status=OK
  if [ "$rc" -ne 0 ] || [ -n "$artifact" ]; then status=FAIL; fi
  echo "$status ${execs:-0} $secs ${artifact:-}" >"$dir/result"
  echo "--- $t: $status, ${execs:-0} executions in ${secs}s (exit $rc, log $dir/log)"
  if [ "$status" = FAIL ]; then
    # What went wrong and the first frames in sorun's code, for the summary (a CI log keeps its tail).
    { grep -m1 -E "ERROR: |FUZZ_CHECK|runtime error|SUMMARY" "$dir/log"
      grep -E '^ +#[0-9]+ .* in .*sorun::' "$dir/log" | head -n 3 | sed -E 's/^ +#[0-9]+ 0x[0-9a-f]+ in /at /'
    } >"$dir/why"
    sed 's/^/    /' "$dir/why"
  fi
}

running=0
for t in "${TARGETS[@]}"; do
  echo "=== fuzzing $t"
  if [ "$JOBS" -le 1 ]; then
    run_one "$t"
  else
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
  fi
done
wait

echo
echo "=== summary ($MODE mode; build ${BUILD_S}s, total $(( $(date +%s) - START ))s; work directory $WORK)"
FAILED=0
for t in "${TARGETS[@]}"; do
  read -r status execs secs artifact <"$WORK/$t/result" || { status=FAIL; execs=0; secs=0; artifact="(no result)"; }
  [ "$status" = OK ] || FAILED=$((FAILED + 1))
  printf '%-24s %-4s execs=%-10s %6ss %s\n' "$t" "$status" "$execs" "$secs" "$artifact"
  [ -f "$WORK/$t/why" ] && sed 's/^/    /' "$WORK/$t/why"
done
if [ "$FAILED" -ne 0 ]; then
  echo "run_fuzzers: $FAILED target(s) FAILED; crashing inputs and logs are under $WORK"
  echo "reproduce: bazel run --config=asan //fuzz:<target> -- <artifact>  (then add it to tests/fuzz/regressions/<target>/)"
  exit 1
fi
[ "$KEEP" -eq 1 ] || rm -rf "$WORK"
echo "run_fuzzers: all ${#TARGETS[@]} target(s) passed"
