#!/usr/bin/env bash
# Installs the pinned venv of the `sorun compile` tests (tests/compile/requirements-compile.txt: the
# 'compile' extra's apache-tvm 0.27 + onnx + onnxruntime, pytest; CPython 3.11, Debian's) OUTSIDE the
# repository. The sorun wheel is installed into it by run_compile_tests.sh. Same pattern as
# tests/interop/install_tvm027.sh (tests/interop/pinned_venv.sh).
#
# usage: tests/compile/install_compile_venv.sh [VENV_DIR]
#   VENV_DIR   default $SORUN_COMPILE_VENV, else $HOME/.cache/sorun/compile-venv
# Exit codes: 0 installed / up to date; 3 = cannot be installed here ("skipped: <reason>" last on stdout);
# 1 = installed but broken.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REQ="$HERE/requirements-compile.txt"
VENV=${1:-${SORUN_COMPILE_VENV:-$HOME/.cache/sorun/compile-venv}}
T0=$(date +%s.%N)

TAG=install_compile_venv
# shellcheck source=tests/interop/pinned_venv.sh
. "$HERE/../interop/pinned_venv.sh"
VENV=$(venv_path "$VENV") || exit 1

PY=/usr/bin/python3.11  # the sorun wheel's interpreter (Debian 12)
[ -x "$PY" ] || skip "no $PY (Debian 12's python3.11)"
"$PY" -c "import venv, ensurepip" 2>/dev/null || skip "$PY has no venv/ensurepip (apt-get install python3-venv)"
command -v g++ >/dev/null 2>&1 || skip "no g++ on PATH (TVM's export_library links with it)"
PYVER=$("$PY" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')

CHECK='import tvm, tvm_ffi, onnx, onnxruntime, psutil, cloudpickle, pytest; import tvm.s_tir.meta_schedule; print(tvm.__version__, tvm_ffi.__version__)'
install_pinned_venv "$VENV" "$PY" "$PYVER" "$REQ" .sorun-compile-pins "$CHECK" "apache-tvm==0.27.0.post1 + its tuner's needs"
