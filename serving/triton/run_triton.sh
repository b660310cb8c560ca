#!/usr/bin/env bash
# Serves a Triton model repository with the sorun backend: installs the pinned Triton server and
# clients (serving/triton/requirements.txt: nvidia-pytriton 0.7.0 = Triton 2.51.0) into a venv OUTSIDE
# the repository, lays out the backend directory (<dir>/sorun/libtriton_sorun.so) and runs
# tritonserver in the foreground on loopback ports. docs/serving.md.
#
# usage: serving/triton/run_triton.sh REPO [TRITONSERVER_ARGS...]   serve REPO (Ctrl-C / SIGTERM stops)
#        serving/triton/run_triton.sh --install-only                  install or check the venv, then exit
#
# Environment (all optional):
#   SORUN_TRITON_VENV     the venv                      (default $HOME/.cache/sorun/triton-venv)
#   SORUN_TRITON_PYTHON   the interpreter for the venv  (default python3; CPython 3.8-3.12)
#   SORUN_TRITON_BACKEND  libtriton_sorun.so            (default bazel-out/k8-opt/bin/serving/triton/ of this
#                                                        checkout: bazel build -c opt //serving/triton:libtriton_sorun.so)
#   SORUN_TRITON_BACKEND_DIR  where <dir>/sorun/ is set up (default $SORUN_TRITON_VENV/backends)
#   TRITON_HTTP_PORT / TRITON_GRPC_PORT / TRITON_METRICS_PORT   (default 8000 / 8001 / 8002, on 127.0.0.1)
# TRITONSERVER_ARGS are appended (e.g. --model-control-mode=explicit --load-model=mlp --log-verbose=1).
#
# Exit codes: tritonserver's own while serving; for the install step 0 installed / up to date, 3 = cannot
# be installed here with the reason on the last line as "skipped: <reason>" (no python3 venv, PyPI
# unreachable, glibc older than the wheel's 2.35), 1 = installed but broken, 2 = usage error.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
REQ="$HERE/requirements.txt"
VENV=${SORUN_TRITON_VENV:-$HOME/.cache/sorun/triton-venv}

skip() { echo "run_triton: skipped: $*"; echo "skipped: $*"; exit 3; }
fail() { echo "run_triton: FAILED: $*" >&2; exit 1; }
usage() { echo "usage: $0 REPO [TRITONSERVER_ARGS...] | --install-only" >&2; exit 2; }

[ $# -ge 1 ] || usage
case "$VENV" in
  /*) ;;
  *) VENV="$(pwd)/$VENV" ;;
esac
case "$VENV/" in
  "$ROOT"/*) fail "the venv must live outside the repository (got $VENV)" ;;
esac

# --- the venv: the pinned wheels, installed once (a stamp records the pins)
install_venv() {
  local py=${SORUN_TRITON_PYTHON:-python3}
  command -v "$py" >/dev/null 2>&1 || skip "no $py on PATH (set SORUN_TRITON_PYTHON)"
  local pyver
  pyver=$("$py" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null) || skip "$py does not run"
  "$py" -c "import venv, ensurepip" 2>/dev/null || skip "$py has no venv/ensurepip module"
  local glibc
  glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
  if [ -n "$glibc" ] && [ "$(printf '%s\n2.35\n' "$glibc" | sort -V | head -1)" != "2.35" ]; then
    skip "glibc $glibc is older than 2.35, which the nvidia-pytriton 0.7.0 wheel (Triton 2.51) needs"
  fi
  local stamp_want="$(sha256sum "$REQ" | cut -d' ' -f1) python $pyver"
  local stamp="$VENV/.sorun-triton-pins"
  local check='import tritonclient.http, tritonclient.grpc, numpy, pytest, os, sys; import pytriton; d = os.path.dirname(pytriton.__file__); sys.exit(0 if os.access(os.path.join(d, "tritonserver/bin/tritonserver"), os.X_OK) else 1)'
  mkdir -p "$(dirname "$VENV")" || skip "cannot create $(dirname "$VENV")"
  exec 9>"$VENV.lock" || skip "cannot write $VENV.lock"
  flock 9  # one installer at a time per venv
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$stamp_want" ] && "$VENV/bin/python" -c "$check" 2>/dev/null; then
    echo "run_triton: venv up to date: $VENV (python $pyver)"
    exec 9>&-
    return 0
  fi
  if [ -e "$VENV" ]; then
    [ -f "$VENV/pyvenv.cfg" ] || fail "$VENV exists and is not a venv; refusing to replace it"
    echo "run_triton: replacing stale venv $VENV"
    rm -rf "$VENV"
  fi
  echo "run_triton: creating $VENV with $py (Python $pyver)"
  "$py" -m venv "$VENV" || skip "python -m venv failed for $py"
  local log="$VENV.pip.log"
  if ! "$VENV/bin/pip" install --no-deps --only-binary=:all: --progress-bar off -q -r "$REQ" >"$log" 2>&1; then
    local reason
    reason=$(grep -E "ERROR|error:" "$log" | tail -1)
    rm -rf "$VENV"
    skip "pip could not install the pinned wheels (nvidia-pytriton==0.7.0 or a dependency unavailable for Python $pyver, or PyPI unreachable): ${reason:-see $log}"
  fi
  "$VENV/bin/pip" check >>"$log" 2>&1 || fail "pip check: the pinned set is inconsistent (see $log)"
  "$VENV/bin/python" -c "$check" 2>>"$log" || fail "the installed venv lacks tritonserver or a client module (see $log)"
  echo "$stamp_want" >"$stamp"
  echo "run_triton: installed $VENV (python $pyver)"
  exec 9>&-  # release the lock: the server must not hold it
}

if [ "$1" = "--install-only" ]; then
  [ $# -eq 1 ] || usage
  install_venv
  exit 0
fi

REPO=$1
shift
[ -d "$REPO" ] || { echo "run_triton: model repository $REPO is not a directory" >&2; exit 2; }
REPO=$(cd "$REPO" && pwd)
install_venv >&2

BACKEND=${SORUN_TRITON_BACKEND:-$ROOT/bazel-out/k8-opt/bin/serving/triton/libtriton_sorun.so}
[ -f "$BACKEND" ] || fail "backend $BACKEND not found (bazel build -c opt //serving/triton:libtriton_sorun.so, or set SORUN_TRITON_BACKEND)"
BACKEND_DIR=${SORUN_TRITON_BACKEND_DIR:-$VENV/backends}
mkdir -p "$BACKEND_DIR/sorun" || fail "cannot create $BACKEND_DIR/sorun"
# A copy, replaced atomically: a server still running from this directory keeps its mapped file.
cp "$BACKEND" "$BACKEND_DIR/sorun/.libtriton_sorun.so.$$" && mv -f "$BACKEND_DIR/sorun/.libtriton_sorun.so.$$" \
  "$BACKEND_DIR/sorun/libtriton_sorun.so" || fail "cannot install the backend into $BACKEND_DIR/sorun"

SITE=$("$VENV/bin/python" -c 'import os, pytriton; print(os.path.dirname(os.path.dirname(pytriton.__file__)))') ||
  fail "cannot locate pytriton in $VENV"
SERVER="$SITE/pytriton/tritonserver/bin/tritonserver"
LIBS="$SITE/nvidia_pytriton.libs"
echo "run_triton: $SERVER, repository $REPO, backend $BACKEND_DIR/sorun/libtriton_sorun.so," \
  "http 127.0.0.1:${TRITON_HTTP_PORT:-8000} grpc 127.0.0.1:${TRITON_GRPC_PORT:-8001}" \
  "metrics 127.0.0.1:${TRITON_METRICS_PORT:-8002}" >&2
export LD_LIBRARY_PATH="$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec "$SERVER" --model-repository="$REPO" --backend-directory="$BACKEND_DIR" \
  --http-address=127.0.0.1 --http-port="${TRITON_HTTP_PORT:-8000}" \
  --grpc-address=127.0.0.1 --grpc-port="${TRITON_GRPC_PORT:-8001}" \
  --metrics-address=127.0.0.1 --metrics-port="${TRITON_METRICS_PORT:-8002}" \
  "$@"
