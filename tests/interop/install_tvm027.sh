#!/usr/bin/env bash
# Installs the pinned TVM 0.27 release of the Relax interop job (tests/interop/requirements-tvm027.txt:
# apache-tvm 0.27.0.post1 + apache-tvm-ffi 0.1.15.post2 + onnx, on CPython 3.11) into a venv OUTSIDE the
# repository. The same pattern as install_tvm.sh (the TVM 0.16 venv).
#
# usage: tests/interop/install_tvm027.sh [VENV_DIR]
#   VENV_DIR   default $SORUN_TVM027_VENV, else $HOME/.cache/sorun/tvm027-venv
#   SORUN_TVM027_PYTHON   the Python 3.11 interpreter to use (default: python3 when it is 3.11 (Debian 12),
#                         else python3.11 on PATH, else the newest pyenv 3.11.x)
#
# Idempotent: a venv whose stamp matches the pins (and that imports tvm, tvm.relax and onnx) is left as it
# is ("up to date"). Exit codes: 0 installed / up to date; 3 = cannot be installed here, with the reason on
# the last line of stdout as "skipped: <reason>" (no Python 3.11, no g++, a wheel or PyPI unreachable);
# 1 = installed but broken (pip check or the import check failed): a real failure.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REQ="$HERE/requirements-tvm027.txt"
VENV=${1:-${SORUN_TVM027_VENV:-$HOME/.cache/sorun/tvm027-venv}}
T0=$(date +%s.%N)

TAG=install_tvm027
# shellcheck source=tests/interop/pinned_venv.sh
. "$HERE/pinned_venv.sh"

VENV=$(venv_path "$VENV") || exit 1

# --- Python 3.11 (the apache-tvm 0.27 wheel set is pinned for cp311)
is_311() { [ -n "$1" ] && [ -x "$1" ] && "$1" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; }
PY=${SORUN_TVM027_PYTHON:-}
if [ -z "$PY" ]; then
  for cand in "$(command -v python3 2>/dev/null)" "$(command -v python3.11 2>/dev/null)" \
              $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.11.*/bin/python 2>/dev/null | sort -V -r); do
    is_311 "$cand" && { PY=$cand; break; }
  done
fi
[ -n "$PY" ] && [ -x "$PY" ] || skip "no Python 3.11 found (python3, python3.11 or pyenv 3.11.x; set SORUN_TVM027_PYTHON)"
PYVER=$("$PY" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null) || skip "$PY does not run"
case "$PYVER" in
  3.11.*) ;;
  *) skip "$PY is Python $PYVER; the pinned apache-tvm 0.27 wheel set needs CPython 3.11" ;;
esac
"$PY" -c "import venv, ensurepip" 2>/dev/null || skip "$PY has no venv/ensurepip module (Debian: apt-get install python3-venv)"

# --- export_library links with g++ -shared
command -v g++ >/dev/null 2>&1 || skip "no g++ on PATH (TVM's export_library links model.so with g++)"

CHECK='import tvm, tvm_ffi, onnx; from tvm import relax; from tvm.relax.frontend.onnx import from_onnx; print(tvm.__version__, tvm_ffi.__version__)'
install_pinned_venv "$VENV" "$PY" "$PYVER" "$REQ" .sorun-tvm027-pins "$CHECK" "apache-tvm==0.27.0.post1 for cp311"
