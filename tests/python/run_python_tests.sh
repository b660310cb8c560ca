#!/usr/bin/env bash
# Builds the sorun wheel and the model zoo, installs the wheel into a fresh venv OUTSIDE the repository
# (pinned numpy + pytest from PyPI: tests/python/requirements.txt) and runs tests/python with pytest
# against the installed package, never the build tree.
#
# usage: tests/python/run_python_tests.sh [JUNIT_XML]
#   JUNIT_XML      default $SORUN_PY_JUNIT, else $HOME/.cache/sorun/python-tests.xml
#   SORUN_PY_VENV  the venv to (re)create (default $HOME/.cache/sorun/python-venv); it is wiped first
# Exit codes: pytest's (0 all passed); 3 = cannot run here ("skipped: <reason>" on the last line:
# no python3.11 with venv, PyPI unreachable); anything else is a failure.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
JUNIT=${1:-${SORUN_PY_JUNIT:-$HOME/.cache/sorun/python-tests.xml}}
VENV=${SORUN_PY_VENV:-$HOME/.cache/sorun/python-venv}
T0=$(date +%s)

skip() { echo "run_python_tests: skipped: $*"; echo "skipped: $*"; exit 3; }
fail() { echo "run_python_tests: FAILED: $*" >&2; exit 1; }

case "$VENV" in /*) ;; *) VENV="$(pwd)/$VENV" ;; esac
case "$VENV/" in "$ROOT"/*) fail "the venv must live outside the repository (got $VENV)" ;; esac
PY=/usr/bin/python3.11  # the CPython the extension is built against (Debian's python3-dev)
[ -x "$PY" ] || skip "no $PY (Debian 12's python3.11)"
"$PY" -c "import venv, ensurepip" 2>/dev/null || skip "$PY has no venv/ensurepip (apt-get install python3-venv)"

cd "$ROOT" || exit 1
source "$HERE/zoo_targets.sh"
bazel build -c opt //python:wheel "${ZOO_TARGETS[@]}" || fail "bazel build"
# bazel-bin is a symlink that follows the last build's configuration: ask Bazel where -c opt outputs are.
BIN=$(bazel info -c opt bazel-bin 2>/dev/null) || fail "bazel info"
WHEELS=("$BIN"/python/sorun-*-cp311-cp311-manylinux_*_x86_64.whl)
[ "${#WHEELS[@]}" -eq 1 ] && [ -f "${WHEELS[0]}" ] || fail "expected exactly one wheel, got: ${WHEELS[*]}"

rm -rf "$VENV"
mkdir -p "$(dirname "$VENV")" "$(dirname "$JUNIT")"
"$PY" -m venv "$VENV" || fail "python3.11 -m venv $VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check -r "$HERE/requirements.txt" ||
  skip "pip could not install tests/python/requirements.txt (PyPI unreachable?)"
# --no-index: the wheel installs with no network (its only runtime need is the interpreter).
"$VENV/bin/pip" install -q --disable-pip-version-check --no-index "${WHEELS[0]}" || fail "pip install ${WHEELS[0]}"
echo "run_python_tests: wheel $(basename "${WHEELS[0]}") ($(stat -c %s "${WHEELS[0]}") bytes), venv ready in $(( $(date +%s) - T0 )) s"

# Run from a directory outside the repository so `import sorun` can only find the installed wheel.
cd "$(dirname "$VENV")" || exit 1
SORUN_TEST_MODELS="$BIN/testdata/models" SORUN_WHEEL="${WHEELS[0]}" SORUN_RELAX_FIXTURES="$ROOT/testdata/relax" POCL_CACHE_DIR=${POCL_CACHE_DIR:-$HOME/.cache/pocl} \
  "$VENV/bin/python" -m pytest -p no:cacheprovider -q -rs --junitxml="$JUNIT" "$HERE"
rc=$?
echo "run_python_tests: pytest exit $rc in $(( $(date +%s) - T0 )) s total; JUnit XML: $JUNIT"
exit $rc
