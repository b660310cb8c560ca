#!/usr/bin/env bash
# Every target's benchmark, one after the other (never in parallel: they would disturb each other).
# Results (markdown tables) go to stdout; raw JSON to $SORUN_BENCH_OUT (default /tmp/sorun_bench_results).
# SORUN_BENCH_SKIP="run_export_routes.sh ..." skips scripts (the export-route run takes ~15 minutes and
# up to 12 GiB for the C compiler).
set -uo pipefail
dir="$(dirname "$0")"
for s in run_load.sh run_memory.sh run_executors.sh run_dispatch.sh run_footprint.sh run_opencl_cache.sh run_export_routes.sh; do
  [[ " ${SORUN_BENCH_SKIP:-} " == *" $s "* ]] && continue
  "$dir/$s" || echo "# $s failed (exit $?)"
  echo
done
