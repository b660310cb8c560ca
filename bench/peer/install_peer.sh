#!/usr/bin/env bash
# Installs the peer benchmark's ONNX Runtime venv (bench/peer/requirements-peer.txt, every package
# pinned) OUTSIDE the repository, with the same Python 3.10 the TVM venv uses.
#
# usage: bench/peer/install_peer.sh [VENV_DIR]      (default $SORUN_PEER_VENV, else ~/.cache/sorun/peer-venv)
# Idempotent (a stamp of the pins). Exit 0 installed / up to date; 3 "skipped: <reason>" when it cannot be
# installed here (no Python 3.10, PyPI unreachable); 1 when installed but broken.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
REQ="$HERE/requirements-peer.txt"
VENV=${1:-${SORUN_PEER_VENV:-$HOME/.cache/sorun/peer-venv}}
skip() { echo "install_peer: skipped: $*"; exit 3; }
case "$VENV/" in "$ROOT"/*) echo "install_peer: the venv must live outside the repository" >&2; exit 1 ;; esac
PY=${SORUN_TVM_PYTHON:-}
if [ -z "$PY" ]; then
  for cand in $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.10.*/bin/python 2>/dev/null | sort -V -r) \
              "$(command -v python3.10 2>/dev/null)"; do
    [ -n "$cand" ] && [ -x "$cand" ] && { PY=$cand; break; }
  done
fi
[ -n "$PY" ] && [ -x "$PY" ] || skip "no Python 3.10 (pyenv 3.10.x or python3.10; set SORUN_TVM_PYTHON)"
WANT="$(sha256sum "$REQ" | cut -d' ' -f1) $("$PY" -V 2>&1)"
if [ -f "$VENV/.sorun-peer-pins" ] && [ "$(cat "$VENV/.sorun-peer-pins")" = "$WANT" ] &&
   "$VENV/bin/python" -c "import onnx, onnxruntime" 2>/dev/null; then
  echo "install_peer: up to date: $VENV"
  exit 0
fi
rm -rf "$VENV"
"$PY" -m venv "$VENV" || skip "python -m venv failed for $PY"
"$VENV/bin/pip" install --no-deps --only-binary=:all: --progress-bar off -q -r "$REQ" >"$VENV.pip.log" 2>&1 ||
  { rm -rf "$VENV"; skip "pip could not install the pinned wheels (see $VENV.pip.log)"; }
"$VENV/bin/pip" check >>"$VENV.pip.log" 2>&1 || { echo "install_peer: pip check failed ($VENV.pip.log)" >&2; exit 1; }
"$VENV/bin/python" -c "import onnx, onnxruntime" || exit 1
echo "$WANT" >"$VENV/.sorun-peer-pins"
echo "install_peer: installed $VENV"
