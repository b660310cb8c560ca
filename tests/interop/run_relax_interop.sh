#!/usr/bin/env bash
# The Relax interop job: TVM 0.27 and TVM 0.16 Relax VM exports in sorun, sorun-packed exports in TVM
# (tests/interop/README.md, "Relax VM exports"). Bazel-independent: uses the prebuilt sorun CLI.
#
#   bazel build //tools:sorun
#   SORUN_BIN=bazel-bin/tools/sorun OUT_DIR=/tmp/relax-interop tests/interop/run_relax_interop.sh
#
# Environment (all optional):
#   SORUN_BIN           the sorun CLI            (default: bazel-bin/tools/sorun of this checkout)
#   OUT_DIR             results and artifacts    (default: /tmp/sorun-relax-interop); writes
#                       $OUT_DIR/relax_interop_results.xml (JUnit-style) and $OUT_DIR/relax_interop_results.txt
#   SORUN_TVM027_VENV   the TVM 0.27 venv        (default: $HOME/.cache/sorun/tvm027-venv; install_tvm027.sh)
#   SORUN_TVM_VENV      the TVM 0.16 venv        (default: $HOME/.cache/sorun/tvm-venv; install_tvm.sh)
#   RELAX_INTEROP_JOBS  TVM 0.27 build processes (default 1: the builds take seconds, importing TVM about 2 s a process)
# Prints one line per check, then "N passed, M failed, K skipped". Exit 1 when a check failed; 0 otherwise
# (a TVM venv that cannot be installed here: its checks are reported as skipped with the reason).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
START=$(date +%s.%N)

SORUN_BIN=${SORUN_BIN:-$ROOT/bazel-bin/tools/sorun}
OUT_DIR=${OUT_DIR:-/tmp/sorun-relax-interop}
VENV027=${SORUN_TVM027_VENV:-$HOME/.cache/sorun/tvm027-venv}
VENV016=${SORUN_TVM_VENV:-$HOME/.cache/sorun/tvm-venv}
mkdir -p "$OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)
SYS_PY=$(command -v python3)

seconds_since() { "$SYS_PY" -c "import sys, time; print('%.1f' % (time.time() - float(sys.argv[1])))" "$1"; }
# The last line is always the summary ("N passed, M failed, K skipped"), after the total time.
finish() {
  echo "relax interop: total $(seconds_since "$START") s${1:+ ($1)}"
  tail -1 "$OUT_DIR/relax_interop_results.txt" 2>/dev/null || echo "0 passed, 1 failed, 0 skipped"
}

echo "relax interop: sorun $SORUN_BIN, results $OUT_DIR"
if [ ! -x "$SORUN_BIN" ]; then
  msg="prebuilt sorun CLI missing: SORUN_BIN=$SORUN_BIN (run: bazel build //tools:sorun)"
  echo "relax interop: $msg"
  "$SYS_PY" "$HERE/relax_interop_test.py" --sorun "$SORUN_BIN" --out "$OUT_DIR" --setup "sorun:FAIL:0:$msg" \
    --skip-027 "setup failed" --skip-016 "setup failed" >/dev/null
  finish
  exit 1
fi
"$SORUN_BIN" --version

# install NAME SCRIPT VENV: runs one installer; sets SETUP (the --setup argument) and SKIP (empty when usable)
install() {
  local t0 log rc secs reason
  t0=$(date +%s.%N)
  log=$(bash "$HERE/$2" "$3" 2>&1)
  rc=$?
  secs=$(seconds_since "$t0")
  echo "$log"
  case $rc in
    0) SETUP="$1:PASS:$secs:$(echo "$log" | tail -1 | sed 's/^install_tvm[0-9]*: //')"; SKIP="" ;;
    3) reason=$(echo "$log" | grep '^skipped: ' | tail -1 | sed 's/^skipped: //')
       SETUP="$1:SKIP:$secs:${reason:-unavailable}"; SKIP="skipped: $1 unavailable: ${reason:-see $2}" ;;
    *) SETUP="$1:FAIL:$secs:$2 failed (exit $rc): $(echo "$log" | tail -1)"; SKIP="$1 installation failed" ;;
  esac
}

install install_tvm027 install_tvm027.sh "$VENV027"; SETUP027=$SETUP; SKIP027=$SKIP
install install_tvm016 install_tvm.sh "$VENV016"; SETUP016=$SETUP; SKIP016=$SKIP
install_s=$(seconds_since "$START")

# The driver needs numpy once a model is checked: the TVM 0.27 venv's Python, else the 0.16 one's.
args=(--sorun "$SORUN_BIN" --out "$OUT_DIR" --jobs "${RELAX_INTEROP_JOBS:-1}" --setup "$SETUP027" --setup "$SETUP016")
PY=$SYS_PY
if [ -z "$SKIP016" ]; then args+=(--tvm016-python "$VENV016/bin/python"); PY=$VENV016/bin/python; else args+=(--skip-016 "$SKIP016"); fi
if [ -z "$SKIP027" ]; then args+=(--tvm027-python "$VENV027/bin/python"); PY=$VENV027/bin/python; else args+=(--skip-027 "$SKIP027"); fi
"$PY" "$HERE/relax_interop_test.py" "${args[@]}"
rc=$?
finish "TVM installs $install_s s"
exit $rc
