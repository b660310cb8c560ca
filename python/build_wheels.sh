#!/usr/bin/env bash
# Builds the sorun wheel of every CPython (3.9 - 3.13) with one Bazel invocation (the runtime objects are
# shared; only the two binding files compile per version), copies them to OUT_DIR and checks each with
# `auditwheel show` (pinned: python/requirements-auditwheel.txt, in a venv outside the repository): the
# platform tag in the wheel's name must be the one auditwheel reports as the lowest it accepts.
#
# usage: python/build_wheels.sh [OUT_DIR]        (default $HOME/.cache/sorun/wheels)
#   SORUN_PY_VERSIONS        the versions to build (default "3.9 3.10 3.11 3.12 3.13")
#   SORUN_AUDITWHEEL_VENV    auditwheel's venv (default $HOME/.cache/sorun/auditwheel-venv; reused when it
#                            already has the pinned auditwheel)
# Prints one line a wheel: "wheel 3.X TAG SIZE_BYTES PATH". A version without headers (no
# /usr/include/python3.X, no pyenv 3.X) is left out with a line saying so.
# Exit codes: 0 built and accepted; 3 = wheels built but auditwheel cannot be installed ("skipped:
# <reason>" on the last line); anything else is a failure.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
OUT=${1:-$HOME/.cache/sorun/wheels}
VERSIONS=${SORUN_PY_VERSIONS:-3.9 3.10 3.11 3.12 3.13}
AW_VENV=${SORUN_AUDITWHEEL_VENV:-$HOME/.cache/sorun/auditwheel-venv}
T0=$(date +%s)

skip() { echo "build_wheels: skipped: $*"; echo "skipped: $*"; exit 3; }
fail() { echo "build_wheels: FAILED: $*" >&2; exit 1; }

# The include directory @cpython uses for a version (third_party/python/python_configure.bzl).
has_headers() {
  [ -f "/usr/include/python$1/Python.h" ] && return 0
  compgen -G "${PYENV_ROOT:-$HOME/.pyenv}/versions/$1.*/include/python$1/Python.h" >/dev/null
}

cd "$ROOT" || exit 1
TARGETS=()
BUILT=()
for v in $VERSIONS; do
  if has_headers "$v"; then
    TARGETS+=("//python:wheel_cp${v/./}")
    BUILT+=("$v")
  else
    echo "build_wheels: CPython $v left out: no headers (/usr/include/python$v or pyenv $v.*)"
  fi
done
[ "${#TARGETS[@]}" -gt 0 ] || fail "no CPython headers found for any of: $VERSIONS"
bazel build -c opt "${TARGETS[@]}" || fail "bazel build ${TARGETS[*]}"
BIN=$(bazel info -c opt bazel-bin 2>/dev/null) || fail "bazel info"
mkdir -p "$OUT"
for v in "${BUILT[@]}"; do
  name=$(python3 "$HERE/pep517_backend.py" wheel-name "$v") || fail "wheel name of $v"
  cp -f "$BIN/python/$name" "$OUT/$name" && chmod 644 "$OUT/$name" || fail "copy $name"
done
echo "build_wheels: ${#BUILT[@]} wheels built in $(( $(date +%s) - T0 )) s"

# auditwheel, outside the repository.
case "$AW_VENV" in /*) ;; *) AW_VENV="$(pwd)/$AW_VENV" ;; esac
case "$AW_VENV/" in "$ROOT"/*) fail "the auditwheel venv must live outside the repository (got $AW_VENV)" ;; esac
want=$(grep '^auditwheel==' "$HERE/requirements-auditwheel.txt")
if ! "$AW_VENV/bin/pip" freeze 2>/dev/null | grep -qx "$want"; then
  rm -rf "$AW_VENV"
  python3 -m venv "$AW_VENV" || skip "python3 -m venv $AW_VENV failed (apt-get install python3-venv)"
  "$AW_VENV/bin/pip" install -q --disable-pip-version-check -r "$HERE/requirements-auditwheel.txt" ||
    skip "pip could not install python/requirements-auditwheel.txt (PyPI unreachable?)"
fi

bad=0
for v in "${BUILT[@]}"; do
  name=$(python3 "$HERE/pep517_backend.py" wheel-name "$v")
  tag=${name##*-}; tag=${tag%.whl}
  shown=$("$AW_VENV/bin/auditwheel" show "$OUT/$name" 2>&1)
  lowest=$(echo "$shown" | tr '\n' ' ' | sed -n 's/.*consistent with the *following platform tag: *"\([^"]*\)".*/\1/p')
  if [ "$lowest" = "$tag" ]; then
    echo "wheel $v $tag $(stat -c %s "$OUT/$name") $OUT/$name"
  else
    echo "$shown" >&2
    echo "build_wheels: FAILED: $name is tagged $tag, auditwheel show says the lowest is '${lowest:-?}'" >&2
    bad=1
  fi
done
echo "build_wheels: done in $(( $(date +%s) - T0 )) s"
exit $bad
