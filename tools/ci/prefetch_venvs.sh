#!/usr/bin/env bash
# Makes the pinned venvs of the later CI jobs (TVM 0.16, TVM 0.27, Triton, sorun compile, Ray Serve) while the main job
# compiles: on a fresh machine their downloads and unpacking are minutes of network and disk time that
# would otherwise sit on the critical path. .ci/run starts it in the background, niced, right after setup.
# Each installer is idempotent and holds a lock per venv, so a job that reaches its venv first simply
# waits for this script's install to finish (or does it itself if this one failed). Never fails the run:
# a venv that cannot be made here is made (or skipped with the reason) by its own job later.
#
# usage: tools/ci/prefetch_venvs.sh   (prints one line per venv with its time)
set -uo pipefail
cd "$(dirname "$0")/../.."

one() {
  local name=$1 t0 rc
  shift
  t0=$(date +%s)
  "$@" >/dev/null 2>&1
  rc=$?
  echo "prefetch: $name exit $rc in $(( $(date +%s) - t0 )) s"
}

one "TVM 0.16 venv" bash tests/interop/install_tvm.sh
one "TVM 0.27 venv" bash tests/interop/install_tvm027.sh
one "Triton venv" bash serving/triton/run_triton.sh --install-only
one "compile venv" bash tests/compile/install_compile_venv.sh
one "Ray Serve venv" bash tests/ray/install_ray.sh --deps-only
