#!/usr/bin/env bash
# Every CPython's wheel in a fresh venv: builds the wheels (python/build_wheels.sh, with its auditwheel
# check), then for each version other than 3.11 (whose wheel run_python_tests.sh runs the full suite on)
# creates a venv OUTSIDE the repository from that interpreter (Debian's or pyenv's), installs the pinned
# test requirements and the wheel, and runs the smoke subset of tests/python (`pytest -m smoke`: load, run,
# DLPack in and out, errors, threads, packaging). One version (SORUN_PIP_INSTALL_VERSION, default 3.12)
# installs the checkout with `pip install .` instead (pyproject.toml's backend) and checks that
# `pip wheel .` gives the same bytes as build_wheels.sh.
#
# usage: tests/python/run_wheel_matrix.sh [JUNIT_DIR]   (JUNIT_DIR/python_smoke_3X/test.xml a version, the
#                                                         layout tools/ci/count_tests.py reads; default
#                                                         $HOME/.cache/sorun/wheel-matrix)
#   SORUN_PY_SMOKE_VERSIONS  default "3.9 3.10 3.12 3.13"
#   SORUN_PY_MATRIX_DIR      where the wheels and venvs go (default $HOME/.cache/sorun/py-matrix; wiped)
# Exit codes: 0 all passed; 3 = cannot run here ("skipped: <reason>" on the last line: PyPI unreachable,
# or auditwheel not installable); anything else is a failure.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
JUNIT_DIR=${1:-$HOME/.cache/sorun/wheel-matrix}
VERSIONS=${SORUN_PY_SMOKE_VERSIONS:-3.9 3.10 3.12 3.13}
PIP_VERSION=${SORUN_PIP_INSTALL_VERSION:-3.12}
WORK=${SORUN_PY_MATRIX_DIR:-$HOME/.cache/sorun/py-matrix}
T0=$(date +%s)

skip() { echo "run_wheel_matrix: skipped: $*"; echo "skipped: $*"; exit 3; }
fail() { echo "run_wheel_matrix: FAILED: $*" >&2; exit 1; }

case "$WORK" in /*) ;; *) WORK="$(pwd)/$WORK" ;; esac
case "$WORK/" in "$ROOT"/*) fail "the venvs must live outside the repository (got $WORK)" ;; esac

# The interpreter of a version: Debian's, else the newest pyenv one.
interpreter() {
  if [ -x "/usr/bin/python$1" ]; then echo "/usr/bin/python$1"; return; fi
  local found
  found=$(compgen -G "${PYENV_ROOT:-$HOME/.pyenv}/versions/$1.*/bin/python$1" | sort -V | tail -1)
  [ -n "$found" ] && echo "$found"
}

# The venvs and their pinned requirements (network, not CPU) are made while Bazel builds the wheels.
make_venvs() {
  local v py
  for v in $VERSIONS; do
    py=$(interpreter "$v")
    [ -n "$py" ] || continue
    "$py" -m venv "$WORK/venv$v" || { echo "$py -m venv failed" > "$WORK/venvs_failed"; return; }
    "$WORK/venv$v/bin/pip" install -q --disable-pip-version-check -r "$HERE/requirements.txt" ||
      { echo "pip could not install tests/python/requirements.txt for $v (PyPI unreachable?)" > "$WORK/venvs_failed"; return; }
  done
}

rm -rf "$WORK"
mkdir -p "$WORK/wheels" "$JUNIT_DIR" || fail "mkdir $WORK"
make_venvs > "$WORK/venvs.log" 2>&1 &
VENVS_PID=$!
SORUN_PY_VERSIONS="3.11 $VERSIONS" bash "$ROOT/python/build_wheels.sh" "$WORK/wheels"
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ] || fail "python/build_wheels.sh (exit $rc)"
audit_rc=$rc
cd "$ROOT" || exit 1
source "$HERE/zoo_targets.sh"
bazel build -c opt "${ZOO_TARGETS[@]}" || fail "bazel build of the model zoo"
BIN=$(bazel info -c opt bazel-bin 2>/dev/null) || fail "bazel info"
wait "$VENVS_PID"
cat "$WORK/venvs.log"
[ -f "$WORK/venvs_failed" ] && skip "$(cat "$WORK/venvs_failed")"
echo "run_wheel_matrix: wheels, zoo and venvs ready in $(( $(date +%s) - T0 )) s"

status=0
for v in $VERSIONS; do
  t=$(date +%s)
  py=$(interpreter "$v")
  if [ -z "$py" ]; then echo "run_wheel_matrix: CPython $v left out: no interpreter"; continue; fi
  venv="$WORK/venv$v"
  pip=("$venv/bin/pip" -q --disable-pip-version-check)
  wheel=$(python3 "$ROOT/python/pep517_backend.py" wheel-name "$v")
  if [ "$v" = "$PIP_VERSION" ]; then
    # The checkout through pyproject.toml's backend: pip install ., and pip wheel . gives the same file.
    "${pip[@]}" wheel --no-deps -w "$WORK/pip-wheel" "$ROOT" || fail "pip wheel . ($v)"
    cmp "$WORK/pip-wheel/$wheel" "$WORK/wheels/$wheel" || fail "pip wheel . differs from build_wheels.sh's $wheel"
    "${pip[@]}" install --no-deps "$ROOT" || fail "pip install . ($v)"
    how="pip install . (pip wheel . = $wheel)"
  else
    "${pip[@]}" install --no-index "$WORK/wheels/$wheel" || fail "pip install $wheel"
    how=$wheel
  fi
  # From outside the repository, so `import sorun` finds the installed package only.
  (cd "$WORK" && SORUN_TEST_MODELS="$BIN/testdata/models" POCL_CACHE_DIR=${POCL_CACHE_DIR:-$HOME/.cache/pocl} \
    "$venv/bin/python" -m pytest -p no:cacheprovider -q -rs -m smoke --junitxml="$JUNIT_DIR/python_smoke_${v/./}/test.xml" \
    -o junit_suite_name="python_smoke_$v" "$HERE")
  prc=$?
  echo "run_wheel_matrix: CPython $v ($how): pytest -m smoke exit $prc in $(( $(date +%s) - t )) s"
  [ $prc -eq 0 ] || status=1
done
echo "run_wheel_matrix: done in $(( $(date +%s) - T0 )) s"
[ $status -ne 0 ] && exit $status
exit $audit_rc
