#!/usr/bin/env bash
# The `sorun compile` tests (tests/compile/test_compile.py): the wheel built by Bazel installed into the pinned
# compile venv (install_compile_venv.sh: apache-tvm 0.27, onnx, onnxruntime), pytest run from outside the
# repository against the installed package.
#
# usage: tests/compile/run_compile_tests.sh JUNIT_XML
#   SORUN_COMPILE_VENV    the venv (default $HOME/.cache/sorun/compile-venv)
#   SORUN_AARCH64_HELLO   the aarch64 embedded/hello_model (bazel build --config=aarch64 //embedded:hello_model,
#                         which tools/ci/aarch64.sh builds): the aarch64 compile then runs under qemu-aarch64
#                         (else that test compiles and inspects only)
# Exit codes: 0 passed; 3 = skipped with the reason printed (the venv cannot be installed here); else failed.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
JUNIT=${1:?usage: run_compile_tests.sh JUNIT_XML}
VENV=${SORUN_COMPILE_VENV:-$HOME/.cache/sorun/compile-venv}
T0=$(date +%s)
cd "$ROOT"

install_log=$(bash "$HERE/install_compile_venv.sh" "$VENV" 2>&1)
rc=$?
echo "$install_log"
if [ $rc -eq 3 ]; then
  reason=$(echo "$install_log" | grep '^skipped: ' | tail -1 | sed 's/^skipped: //')
  mkdir -p "$(dirname "$JUNIT")"
  python3 - "$JUNIT" "$reason" <<'PY'
import sys
from xml.sax.saxutils import quoteattr
open(sys.argv[1], "w").write('<testsuite name="compile" tests="1" skipped="1"><testcase classname="compile" '
                             'name="setup"><skipped message=%s/></testcase></testsuite>\n' % quoteattr(sys.argv[2]))
PY
  exit 3
fi
[ $rc -eq 0 ] || { echo "run_compile_tests: installing the venv failed" >&2; exit 1; }

bazel build -c opt //python:wheel >/dev/null 2>&1 && bazel build //tools:sorun >/dev/null 2>&1 ||
  { echo "run_compile_tests: bazel build of the wheel / CLI failed" >&2; exit 1; }
WHEEL=$(ls "$(bazel info -c opt bazel-bin 2>/dev/null)"/python/sorun-*-cp311-cp311-manylinux_*_x86_64.whl) || exit 1
"$VENV/bin/pip" install -q --disable-pip-version-check --no-deps --no-index --force-reinstall "$WHEEL" ||
  { echo "run_compile_tests: pip install $WHEEL failed" >&2; exit 1; }
echo "run_compile_tests: venv and wheel ready in $(( $(date +%s) - T0 )) s"

export SORUN_BIN="$(bazel info bazel-bin 2>/dev/null)/tools/sorun"
export PATH="$VENV/bin:$PATH:/usr/local/cuda/bin"
mkdir -p "$(dirname "$JUNIT")"
cd /tmp  # import sorun from the venv, never from the checkout
"$VENV/bin/python" -m pytest -p no:cacheprovider -q -rs --junitxml="$JUNIT" "$HERE"
rc=$?
echo "run_compile_tests: pytest exit $rc in $(( $(date +%s) - T0 )) s total"
exit $rc
