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

TAG=install_tvm
# shellcheck source=tests/interop/pinned_venv.sh
. "$HERE/pinned_venv.sh"

VENV=$(venv_path "$VENV") || exit 1

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

CHECK='import tvm; from tvm import relay; from tvm.contrib import graph_executor; import tvm.relay.testing; print(tvm.__version__, tvm.support.libinfo().get("LLVM_VERSION", "?"))'
install_pinned_venv "$VENV" "$PY" "$PYVER" "$REQ" .sorun-tvm-pins "$CHECK" "hhb-tvm==3.2.3 for cp310"
