# Shared by bench/run_*.sh (sourced). Builds the named targets with -c opt unless SORUN_BENCH_NO_BUILD=1,
# cds to the workspace root and prints a header line (date, host, load) for the record.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BIN="$ROOT/bazel-bin"
OUT_DIR="${SORUN_BENCH_OUT:-/tmp/sorun_bench_results}"
mkdir -p "$OUT_DIR"

bench_build() {
  if [[ "${SORUN_BENCH_NO_BUILD:-0}" != 1 ]]; then
    bazel build -c opt "$@" >&2
  fi
}

bench_header() {
  echo "# $1"
  echo "# $(date -u '+%Y-%m-%d %H:%M UTC') | $(uname -n) | $(nproc) cores | $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "# load: $(cut -d' ' -f1-3 /proc/loadavg) | $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
}
