#!/usr/bin/env bash
# The interop job: sorun <-> TVM (tests/interop/README.md). Bazel-independent: uses prebuilt binaries.
#
#   bazel build //tools:sorun //testdata/models/...
#   SORUN_BIN=bazel-bin/tools/sorun ZOO_DIR=bazel-bin/testdata/models OUT_DIR=/tmp/interop \
#     tests/interop/run_interop.sh
#
# Environment (all optional):
#   SORUN_BIN       the sorun CLI              (default: bazel-bin/tools/sorun of this checkout)
#   ZOO_DIR         the packed model zoo       (default: bazel-bin/testdata/models of this checkout)
#   OUT_DIR         results and artifacts      (default: /tmp/sorun-interop); writes
#                   $OUT_DIR/interop_results.xml (JUnit-style) and $OUT_DIR/interop_results.txt
#   SORUN_TVM_VENV  the pinned TVM venv        (default: $HOME/.cache/sorun/tvm-venv; install_tvm.sh)
#   INTEROP_JOBS    parallel TVM model builds  (default 2)
# Prints one line per check, then "N passed, M failed, K skipped". Exit 1 when a check failed; 0 otherwise
# (TVM or Python 3.10 unavailable: every check is reported as skipped with the reason).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
START=$(date +%s.%N)

SORUN_BIN=${SORUN_BIN:-$ROOT/bazel-bin/tools/sorun}
ZOO_DIR=${ZOO_DIR:-$ROOT/bazel-bin/testdata/models}
OUT_DIR=${OUT_DIR:-/tmp/sorun-interop}
VENV=${SORUN_TVM_VENV:-$HOME/.cache/sorun/tvm-venv}
mkdir -p "$OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)
SYS_PY=$(command -v python3)

seconds_since() { "$SYS_PY" -c "import sys, time; print('%.1f' % (time.time() - float(sys.argv[1])))" "$1"; }
# The last line is always the summary ("N passed, M failed, K skipped"), after the total time.
finish() {
  echo "interop: total $(seconds_since "$START") s${1:+ ($1)}"
  tail -1 "$OUT_DIR/interop_results.txt" 2>/dev/null || echo "0 passed, 1 failed, 0 skipped"
}

driver_setup_only() {  # STATUS MESSAGE SECONDS SKIP_REASON
  "$SYS_PY" "$HERE/interop_test.py" --sorun "$SORUN_BIN" --zoo "$ZOO_DIR" --out "$OUT_DIR" \
    --setup "$1:$3:$2" --skip-all "$4"
}

echo "interop: sorun $SORUN_BIN, zoo $ZOO_DIR, results $OUT_DIR"
if [ ! -x "$SORUN_BIN" ] || [ ! -f "$ZOO_DIR/mlp.so" ]; then
  msg="prebuilt sorun binaries missing: SORUN_BIN=$SORUN_BIN, ZOO_DIR=$ZOO_DIR (run: bazel build //tools:sorun //testdata/models/...)"
  echo "interop: $msg"
  driver_setup_only FAIL "$msg" 0 "setup failed" >/dev/null
  finish
  exit 1
fi
"$SORUN_BIN" --version

t0=$(date +%s.%N)
install_log=$(bash "$HERE/install_tvm.sh" "$VENV" 2>&1)
install_rc=$?
install_s=$(seconds_since "$t0")
echo "$install_log"
case $install_rc in
  0)
    setup="PASS:$install_s:$(echo "$install_log" | tail -1 | sed 's/^install_tvm: //')"
    ;;
  3)
    reason=$(echo "$install_log" | grep '^skipped: ' | tail -1 | sed 's/^skipped: //')
    driver_setup_only SKIP "${reason:-TVM unavailable}" "$install_s" "skipped: TVM unavailable: ${reason:-see install_tvm.sh}"
    finish
    exit 0
    ;;
  *)
    driver_setup_only FAIL "install_tvm.sh failed (exit $install_rc): $(echo "$install_log" | tail -1)" "$install_s" \
      "TVM installation failed"
    finish
    exit 1
    ;;
esac

"$VENV/bin/python" "$HERE/interop_test.py" --sorun "$SORUN_BIN" --zoo "$ZOO_DIR" --out "$OUT_DIR" \
  --tvm-python "$VENV/bin/python" --jobs "${INTEROP_JOBS:-2}" --setup "$setup"
rc=$?
finish "TVM install $install_s s"
exit $rc
