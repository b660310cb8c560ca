#!/usr/bin/env bash
# sorun vs TVM 0.27's runtime on the same Relax exports (issue 17's closing table; bench/README.md,
# "Relax: sorun vs TVM 0.27"). Installs the TVM 0.27 venv when missing (tests/interop/install_tvm027.sh),
# builds the sorun side with -c opt and runs bench/relax_vs_tvm.py; extra arguments go to it.
#   bench/run_relax_vs_tvm.sh [--rounds K] [--models mlp,cnn,tir_par,mlp_big] [--threads 1,2] [--markdown FILE]
# (--models: mlp_big and any TVM 0.27 export in testdata/relax with its .npy files, e.g. dyn_batch)
source "$(dirname "$0")/bench_common.sh"
VENV="${SORUN_TVM027_VENV:-$HOME/.cache/sorun/tvm027-venv}"
if [[ ! -x "$VENV/bin/python" ]]; then
  bash "$ROOT/tests/interop/install_tvm027.sh" "$VENV" >&2
fi
# Measured code -c opt; `sorun pack` (not measured) in the default configuration, which CI has built already.
bench_build //bench:relax_bench_main //api:libsorun_runtime_cpu.so
if [[ "${SORUN_BENCH_NO_BUILD:-0}" != 1 ]]; then bazel build //tools:sorun >&2; fi
# The output folders themselves: the bazel-bin symlink follows whichever build ran last (shared server).
BIN="$(bazel info -c opt bazel-bin 2>/dev/null)"
SORUN="$(bazel info bazel-bin 2>/dev/null)/tools/sorun"
bench_header "relax_vs_tvm (issue 17: sorun vs TVM 0.27 runtime)"
exec "$VENV/bin/python" "$ROOT/bench/relax_vs_tvm.py" --driver "$BIN/bench/relax_bench_main" --sorun "$SORUN" \
  --runtime-lib "$BIN/api/libsorun_runtime_cpu.so" "$@"
