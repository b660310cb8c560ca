#!/usr/bin/env bash
# The serving job: the sorun backend inside a real Triton Inference Server (docs/serving.md), driven by
# real clients (tritonclient HTTP and gRPC) on loopback ports. Bazel-independent: uses prebuilt binaries.
#
#   bazel build -c opt //serving/triton:libtriton_sorun.so && bazel build //tools:sorun //testdata/models/...
#   tests/serving/run_triton_tests.sh [JUNIT_XML] [PYTEST_ARGS...]
#
# Environment (all optional):
#   SORUN_BIN             the sorun CLI            (default: tools/sorun of this checkout's bazel-bin, k8-opt
#                                                   or k8-fastbuild output tree, the first that has it)
#   ZOO_DIR               the packed model zoo     (default: testdata/models of the same trees)
#   SORUN_TRITON_BACKEND  libtriton_sorun.so       (default: bazel-out/k8-opt/bin/serving/triton/, else the others)
#   SORUN_TRITON_VENV     the pinned Triton venv   (default: $HOME/.cache/sorun/triton-venv; serving/triton/run_triton.sh)
#   SORUN_SERVING_OUT     server logs and serving_measurements.json (default: /tmp/sorun-serving)
#   SORUN_INTEROP_DIR     TVM-built models to serve too (tests/interop/tvm_models.py output; skipped if unset)
# Exit: 0 every test passed; 1 a test failed (or the setup did); 3 skipped: the Triton wheel cannot be
# installed here (the reason is printed, and written to JUNIT_XML as one skipped case).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
START=$(date +%s)

JUNIT=""
if [ $# -ge 1 ] && [ "${1#-}" = "$1" ]; then  # the first argument, unless it is a pytest flag ("" = none)
  JUNIT=$1
  shift
  case "$JUNIT" in ""|/*) ;; *) JUNIT="$(pwd)/$JUNIT" ;; esac
fi

# The first of bazel-bin (the last build's configuration), the -c opt and the fastbuild output trees
# that holds RELATIVE_PATH (the backend is built with -c opt, the CLI and the zoo usually are not).
built() {
  local tree
  for tree in "${2:-}" "$ROOT/bazel-bin" "$ROOT/bazel-out/k8-opt/bin" "$ROOT/bazel-out/k8-fastbuild/bin"; do
    [ -n "$tree" ] && [ -e "$tree/$1" ] && { echo "$tree/$1"; return; }
  done
  echo "$ROOT/bazel-bin/$1"
}
export SORUN_BIN=${SORUN_BIN:-$(built tools/sorun)}
export ZOO_DIR=${ZOO_DIR:-$(dirname "$(built testdata/models/mlp.so)")}
export SORUN_TRITON_BACKEND=${SORUN_TRITON_BACKEND:-$(built serving/triton/libtriton_sorun.so "$ROOT/bazel-out/k8-opt/bin")}
export SORUN_TRITON_VENV=${SORUN_TRITON_VENV:-$HOME/.cache/sorun/triton-venv}
export SORUN_SERVING_OUT=${SORUN_SERVING_OUT:-/tmp/sorun-serving}
mkdir -p "$SORUN_SERVING_OUT"
rm -f "$SORUN_SERVING_OUT/serving_measurements.json" "$SORUN_SERVING_OUT"/*.log

xml_escape() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g'; }
junit_single() {  # STATUS(skipped|failure) MESSAGE
  [ -n "$JUNIT" ] || return 0
  local msg
  msg=$(printf '%s' "$2" | xml_escape)
  mkdir -p "$(dirname "$JUNIT")"
  {
    echo '<?xml version="1.0" encoding="utf-8"?>'
    if [ "$1" = skipped ]; then
      echo '<testsuites><testsuite name="serving" tests="1" skipped="1" failures="0" errors="0">'
      echo "<testcase classname=\"serving\" name=\"triton_setup\"><skipped message=\"$msg\"/></testcase>"
    else
      echo '<testsuites><testsuite name="serving" tests="1" skipped="0" failures="1" errors="0">'
      echo "<testcase classname=\"serving\" name=\"triton_setup\"><failure message=\"$msg\"/></testcase>"
    fi
    echo '</testsuite></testsuites>'
  } >"$JUNIT"
}

echo "serving: sorun $SORUN_BIN, zoo $ZOO_DIR, backend $SORUN_TRITON_BACKEND, out $SORUN_SERVING_OUT"
missing=""
[ -x "$SORUN_BIN" ] || missing="$missing sorun CLI ($SORUN_BIN)"
[ -f "$ZOO_DIR/mlp.so" ] || missing="$missing zoo ($ZOO_DIR/mlp.so)"
[ -f "$SORUN_TRITON_BACKEND" ] || missing="$missing backend ($SORUN_TRITON_BACKEND)"
if [ -n "$missing" ]; then
  msg="prebuilt binaries missing:$missing (bazel build -c opt //serving/triton:libtriton_sorun.so; bazel build //tools:sorun //testdata/models/...)"
  echo "serving: $msg"
  junit_single failure "$msg"
  echo "0 passed, 1 failed"
  exit 1
fi

install_log=$(bash "$ROOT/serving/triton/run_triton.sh" --install-only 2>&1)
install_rc=$?
echo "$install_log"
case $install_rc in
  0) ;;
  3)
    reason=$(echo "$install_log" | grep '^skipped: ' | tail -1 | sed 's/^skipped: //')
    echo "serving: skipped: Triton unavailable: ${reason:-see above}"
    junit_single skipped "Triton unavailable: ${reason:-see run_triton.sh}"
    exit 3
    ;;
  *)
    msg="installing the Triton venv failed (exit $install_rc): $(echo "$install_log" | tail -1)"
    echo "serving: $msg"
    junit_single failure "$msg"
    echo "0 passed, 1 failed"
    exit 1
    ;;
esac

cd "$HERE" || exit 1
args=(-p no:cacheprovider -v -rs --durations=10)
[ -n "$JUNIT" ] && args+=("--junitxml=$JUNIT")
"$SORUN_TRITON_VENV/bin/python" -m pytest "${args[@]}" "$@"  # collects tests/serving (the working directory)
rc=$?
if [ -f "$SORUN_SERVING_OUT/serving_measurements.json" ]; then
  echo "serving: measurements ($SORUN_SERVING_OUT/serving_measurements.json):"
  cat "$SORUN_SERVING_OUT/serving_measurements.json"
fi
echo "serving: total $(($(date +%s) - START)) s, pytest exit $rc"
case $rc in
  0) exit 0 ;;
  5) echo "serving: pytest collected no test"; exit 1 ;;
  *) exit 1 ;;
esac
