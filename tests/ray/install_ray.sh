#!/usr/bin/env bash
# Creates the Ray Serve venv OUTSIDE the repository: CPython 3.11 (the sorun wheel's Debian interpreter),
# tests/ray/requirements.txt (ray[serve], onnxruntime, onnx, numpy: all pinned) and the sorun wheel given.
#
# usage: tests/ray/install_ray.sh SORUN_WHEEL
#        tests/ray/install_ray.sh --deps-only      (the pinned venv only: CI makes it early, in the background)
#   SORUN_RAY_VENV  the venv (default $HOME/.cache/sorun/ray-venv); reused when it already holds the pinned
#                   ray, else recreated. The sorun wheel is (re)installed every time.
# Exit codes: 0 ready; 3 = cannot install here ("skipped: <reason>" on the last line); else a failure.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WHEEL=${1:?usage: install_ray.sh SORUN_WHEEL | --deps-only}
VENV=${SORUN_RAY_VENV:-$HOME/.cache/sorun/ray-venv}
PY=/usr/bin/python3.11

skip() { echo "install_ray: skipped: $*"; echo "skipped: $*"; exit 3; }
fail() { echo "install_ray: FAILED: $*" >&2; exit 1; }

case "$VENV" in /*) ;; *) VENV="$(pwd)/$VENV" ;; esac
case "$VENV/" in "$ROOT"/*) fail "the venv must live outside the repository (got $VENV)" ;; esac
[ -x "$PY" ] || skip "no $PY (Debian 12's python3.11)"
pip=("$VENV/bin/pip" -q --disable-pip-version-check)
mkdir -p "$(dirname "$VENV")" || skip "cannot create $(dirname "$VENV")"
exec 9>"$VENV.lock" || skip "cannot write $VENV.lock"
flock 9  # one installer at a time (CI's background prefetch and the test may overlap)
want=$(grep '^ray\[serve\]==' "$HERE/requirements.txt" | sed 's/\[serve\]//')
if ! "$VENV/bin/pip" freeze 2>/dev/null | grep -qx "$want"; then
  rm -rf "$VENV"
  "$PY" -m venv "$VENV" || skip "$PY -m venv failed (apt-get install python3-venv)"
  "${pip[@]}" install -r "$HERE/requirements.txt" || skip "pip could not install tests/ray/requirements.txt (PyPI unreachable?)"
fi
if [ "$WHEEL" = --deps-only ]; then
  echo "install_ray: $VENV ready ($want; no sorun wheel asked for)"
  exit 0
fi
"${pip[@]}" install --force-reinstall --no-deps --no-index "$WHEEL" || fail "pip install $WHEEL"
echo "install_ray: $VENV ready ($want, $(basename "$WHEEL"))"
