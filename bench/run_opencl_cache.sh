#!/usr/bin/env bash
# Target 6: cold vs warm OpenCL program load (bench/opencl_program_cache_bench.cc), PoCL's own kernel
# cache off so it does not hide the cold cost.
source "$(dirname "$0")/bench_common.sh"
bench_build //bench:opencl_program_cache_bench
bench_header "opencl_program_cache_bench (target 6)"
POCL_KERNEL_CACHE=0 POCL_CACHE_DIR="$(mktemp -d)" "$BIN/bench/opencl_program_cache_bench" \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true "$@"
