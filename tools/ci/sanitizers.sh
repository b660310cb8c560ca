#!/usr/bin/env bash
# The sanitizer jobs of CI (.ci/run calls this after the main suite):
#   asan: bazel test --config=asan --build_tests_only //...                       (ASan + LSan + UBSan, gcc)
#   tsan: bazel test --config=tsan --test_tag_filters=concurrency --build_tests_only //...   (TSan, gcc)
# --build_tests_only: every test and what it depends on, not the targets no test uses (the other CPythons'
# extensions and wheels, benchmarks, fuzzers, the -Os static cores: minutes of sanitizer compiles on 2 cores
# that no sanitized test would run; the fuzz job builds the fuzzers with ASan itself).
# Each config builds into its own output directory (--platform_suffix), so the jobs do not rebuild each
# other's objects; the first run of each compiles everything once (several minutes on 2 cores).
#
# Usage: tools/ci/sanitizers.sh [asan] [tsan]      (default: both, in that order)
# Prints one result line per job:  [asan] PASS  301 passed, 0 failed, 31 skipped  (262s)
# and exits non-zero when a job fails: a failing test, or a sanitizer report in any test log (reports
# that did not stop the test still count).
set -uo pipefail
cd "$(dirname "$0")/../.."

JOBS=("$@")
[ "${#JOBS[@]}" -eq 0 ] && JOBS=(asan tsan)

# TSan: the .bazelrc options plus the suppressions file (an absolute path: tests run in their runfiles).
TSAN_SUPPRESSIONS="$PWD/tools/ci/tsan_suppressions.txt"
declare -A ARGS=(
  [asan]="--config=asan --build_tests_only //..."
  [tsan]="--config=tsan --test_env=TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$TSAN_SUPPRESSIONS --test_tag_filters=concurrency --build_tests_only //..."
)
REPORTS='ERROR: AddressSanitizer|ERROR: LeakSanitizer|WARNING: ThreadSanitizer|ThreadSanitizer: reported|runtime error: |UndefinedBehaviorSanitizer'

RESULTS=()
FAILED=0
START=$(date +%s)
for job in "${JOBS[@]}"; do
  if [ -z "${ARGS[$job]+x}" ]; then
    echo "sanitizers: unknown job '$job' (asan, tsan)" >&2
    exit 2
  fi
  config="--config=$job"
  logs=$(bazel info "$config" bazel-testlogs 2>/dev/null)
  [ -n "$logs" ] && rm -rf "$logs"  # count only this run's tests
  echo
  echo "=== [$job] bazel test ${ARGS[$job]}"
  t0=$(date +%s)
  # shellcheck disable=SC2086
  bazel test ${ARGS[$job]}
  rc=$?
  secs=$(( $(date +%s) - t0 ))
  counts="no test results"
  if [ -d "$logs" ]; then
    read -r p f s < <(python3 tools/ci/count_tests.py "$logs" --list-failures)
    counts="$p passed, $f failed, $s skipped"
    reported=$(grep -rlE "$REPORTS" "$logs" --include=test.log 2>/dev/null)
    if [ -n "$reported" ]; then
      echo "[$job] sanitizer reports in:"
      echo "$reported" | sed 's/^/  /'
      [ "$rc" -eq 0 ] && rc=1
      counts="$counts, reports in $(echo "$reported" | wc -l) log(s)"
    fi
  fi
  status=PASS
  if [ "$rc" -ne 0 ]; then status=FAIL; FAILED=$((FAILED + 1)); fi
  RESULTS+=("[$job] $status  $counts  (${secs}s)")
done

echo
echo "=== sanitizer jobs ($(( $(date +%s) - START ))s)"
for r in "${RESULTS[@]}"; do echo "$r"; done
[ "$FAILED" -eq 0 ]
