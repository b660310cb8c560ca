#!/usr/bin/env bash
# Installs the pinned TVM release the interop tests run against (tests/interop/requirements-tvm.txt:
# hhb-tvm 3.2.3 = TVM 0.16.dev0 with LLVM 17, on CPython 3.10) into a venv OUTSIDE the repository.
#
# usage: tests/interop/install_tvm.sh [VENV_DIR]
#   VENV_DIR   default $SORUN_TVM_VENV, else $HOME/.cache/sorun/tvm-venv
#   SORUN_TVM_PYTHON   the Python 3.10 interpreter to use (default: the newest pyenv 3.10.x, else python3.10)
#
# Idempotent: a venv whose stamp matches the pins (and that imports tvm) is left as it is ("up to date").
# Exit codes: 0 installed / up to date; 3 = cannot be installed here, with the reason on the last line of
# stdout as "skipped: <reason>" (no Python 3.10, no g++, the wheel or PyPI unreachable); 1 = installed but
# broken (pip check or the import check failed): a real failure.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REQ="$HERE/requirements-tvm.txt"
VENV=${1:-${SORUN_TVM_VENV:-$HOME/.cache/sorun/tvm-venv}}
T0=$(date +%s.%N)

skip() { echo "install_tvm: skipped: $*"; echo "skipped: $*"; exit 3; }
fail() { echo "install_tvm: FAILED: $*" >&2; exit 1; }
elapsed() { python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$T0" "$(date +%s.%N)"; }

case "$VENV" in
  /*) ;;
  *) VENV="$(pwd)/$VENV" ;;
esac
ROOT=$(cd "$HERE/../.." && pwd)
case "$VENV/" in
  "$ROOT"/*) fail "the venv must live outside the repository (got $VENV)" ;;
esac

# --- Python 3.10 (the wheel is cp310; cp38 exists too, but the pins are for 3.10)
PY=${SORUN_TVM_PYTHON:-}
if [ -z "$PY" ]; then
  for cand in $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.10.*/bin/python 2>/dev/null | sort -V -r) \
              "$(command -v python3.10 2>/dev/null)"; do
    [ -n "$cand" ] && [ -x "$cand" ] && { PY=$cand; break; }
  done
fi
[ -n "$PY" ] && [ -x "$PY" ] || skip "no Python 3.10 found (pyenv 3.10.x or python3.10 on PATH; set SORUN_TVM_PYTHON)"
PYVER=$("$PY" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null) || skip "$PY does not run"
case "$PYVER" in
  3.10.*) ;;
  *) skip "$PY is Python $PYVER; the pinned hhb-tvm wheel set needs CPython 3.10" ;;
esac
"$PY" -c "import venv, ensurepip" 2>/dev/null || skip "$PY has no venv/ensurepip module"

# --- export_library links with g++ -shared
command -v g++ >/dev/null 2>&1 || skip "no g++ on PATH (TVM's export_library links deploy.so with g++)"

STAMP_WANT="$(sha256sum "$REQ" | cut -d' ' -f1) python $PYVER"
STAMP="$VENV/.sorun-tvm-pins"
CHECK='import tvm; from tvm import relay; from tvm.contrib import graph_executor; import tvm.relay.testing; print(tvm.__version__, tvm.support.libinfo().get("LLVM_VERSION", "?"))'

mkdir -p "$(dirname "$VENV")" || skip "cannot create $(dirname "$VENV")"
exec 9>"$VENV.lock" || skip "cannot write $VENV.lock"
flock 9  # one installer at a time per venv

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$STAMP_WANT" ] && ver=$("$VENV/bin/python" -c "$CHECK" 2>/dev/null); then
  echo "install_tvm: up to date: $VENV (tvm $ver, python $PYVER, $(elapsed) s)"
  exit 0
fi

if [ -e "$VENV" ]; then
  [ -f "$VENV/pyvenv.cfg" ] || fail "$VENV exists and is not a venv; refusing to replace it"
  echo "install_tvm: replacing stale venv $VENV"
  rm -rf "$VENV"
fi
echo "install_tvm: creating $VENV with $PY (Python $PYVER)"
"$PY" -m venv "$VENV" || skip "python -m venv failed for $PY"

LOG="$VENV.pip.log"
# --no-deps: every package of the venv is in the pin list; pip check below proves the set is complete.
if ! "$VENV/bin/pip" install --no-deps --only-binary=:all: --progress-bar off -q -r "$REQ" >"$LOG" 2>&1; then
  reason=$(grep -E "ERROR|error:" "$LOG" | tail -1)
  rm -rf "$VENV"
  skip "pip could not install the pinned wheels (hhb-tvm==3.2.3 for cp310 or a dependency unavailable, or PyPI unreachable): ${reason:-see $LOG}"
fi
"$VENV/bin/pip" check >>"$LOG" 2>&1 || fail "pip check: the pinned set is inconsistent (see $LOG)"
ver=$("$VENV/bin/python" -c "$CHECK" 2>>"$LOG") || fail "the installed TVM does not import (see $LOG)"
echo "$STAMP_WANT" >"$STAMP"
echo "install_tvm: installed $VENV (tvm $ver, python $PYVER, $(elapsed) s)"
