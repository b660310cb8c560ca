#!/usr/bin/env bash
# The aarch64 job of CI (.ci/run; docs/embedded.md "Tests under emulation"): cross-builds sorun for 64-bit Arm
# (--config=aarch64) and runs every test that can run on aarch64 under qemu-aarch64, then the static core's
# size budget.
#   1. build: libsorun.so, the CLI, the Triton backend (build only: no Triton server for arm64 here), the
#      static cores and hello programs;
#   2. large exports: ResNet-18 and MobileNetV2 for aarch64 and their x86-64 TVM references
#      (testdata/relax_aarch64/make_relax_aarch64_large.py, the pinned TVM 0.27 venv of
#      tests/interop/install_tvm027.sh), input 1x3xNxN (N = SORUN_AARCH64_LARGE_SIZE, default 64), cached
#      in ~/.cache/sorun/relax-aarch64-large/<hash of the generator sources and pins>-<N>; given to
#      aarch64_exports_test as SORUN_AARCH64_LARGE_MODELS (it skips those two cases, with the reason, when
#      the venv cannot be had here);
#   3. test: //tests/... under qemu (toolchains/aarch64/qemu_run.sh), the "concurrency"-tagged suites three
#      times each (Arm's weaker memory model), the TVM fixtures of testdata/relax as their aarch64 builds
#      (testdata/relax/aarch64). Not here, each for its reason:
#        - //tests/opencl/...: PoCL, the OpenCL platform, is installed for x86-64 only;
#        - //tests/cuda/...: the CUDA toolkit and the stand-in driver are x86-64;
#        - tag x86_64_only: tests driven by the host's Python or compiler (ctypes, the doc samples, the doc
#          markers, whose labels include the Python extension);
#      and, inside suites, cases of x86-64-only fixtures (TVM 0.16, CUDA and OpenCL exports) skip naming
#      both architectures (tests/util/host_build.h);
#   4. size: embedded/size_report.sh against embedded/size_budget.txt (both, graph, vm; and graph_noexc_lto,
#      the graph-only core without exceptions and RTTI linked with LTO: --config=minsize_lto).
# Exit 3 (skipped, the reason printed) when the cross compiler or qemu-aarch64 is missing.
# usage: [SORUN_AARCH64_LARGE_SIZE=N] tools/ci/aarch64.sh [extra bazel test flags]
set -uo pipefail
cd "$(dirname "$0")/../.."
for tool in aarch64-linux-gnu-g++ qemu-aarch64; do
  if ! command -v "$tool" >/dev/null; then
    echo "aarch64: skipped: $tool is not installed (tools/setup.sh installs it)"
    exit 3
  fi
done
# What runs under qemu: every test but the packages whose platform exists for x86-64 only.
TESTS=(//tests/... -//tests/opencl/... -//tests/cuda/...)
status=0
t0=$(date +%s)
BUILD=(//api:libsorun.so //tools:sorun //serving/triton:libtriton_sorun.so //embedded/...)
nice bazel build --config=aarch64 "${BUILD[@]}" || status=1
t1=$(date +%s)
echo "aarch64: build $((t1 - t0))s"
# The large exports: generated once per generator version and size (about 40 s at N = 64 on 2 cores), then
# reused; written to a temporary folder and renamed into place, so a concurrent run never reads half a set.
LARGE_SIZE=${SORUN_AARCH64_LARGE_SIZE:-64}
LARGE_ENV=()
venv=${SORUN_TVM027_VENV:-$HOME/.cache/sorun/tvm027-venv}
venv_log=$(mktemp)
if bash tests/interop/install_tvm027.sh "$venv" >"$venv_log" 2>&1; then
  # The key: the generator sources and the venv's pins (the installer's stamp: TVM's version, Python's).
  key=$(cat testdata/relax_aarch64/make_relax_aarch64_large.py \
    testdata/relax_aarch64/make_relax_aarch64_fixtures.py tests/interop/relax_models.py bench/peer/onnx_models.py \
    "$venv/.sorun-tvm027-pins" | sha256sum | cut -c1-16)
  large="$HOME/.cache/sorun/relax-aarch64-large/$key-$LARGE_SIZE"
  if [ ! -f "$large/complete" ]; then
    mkdir -p "$(dirname "$large")"
    tmp=$(mktemp -d "$large.tmp.XXXXXX")
    if nice "$venv/bin/python" testdata/relax_aarch64/make_relax_aarch64_large.py "$tmp" --size "$LARGE_SIZE"; then
      touch "$tmp/complete"
      mv -T "$tmp" "$large" 2>/dev/null || rm -rf "$tmp" # another run got there first: its set is the same
    else
      rm -rf "$tmp"
      status=1
    fi
  fi
  [ -f "$large/complete" ] && touch "$large"
  # Sets unused for a week (older generator versions or sizes) go, and so do leftovers of killed runs.
  find "$(dirname "$large")" -mindepth 1 -maxdepth 1 -mtime +7 -exec rm -rf {} +
  if [ -f "$large/complete" ]; then
    LARGE_ENV=(--test_env=SORUN_AARCH64_LARGE_MODELS="$large")
    echo "aarch64: large exports (1x3x${LARGE_SIZE}x$LARGE_SIZE) in $large"
  fi
else
  echo "aarch64: large exports not generated (the test skips them): $(tail -1 "$venv_log")"
  grep -q '^skipped:' "$venv_log" || status=1 # installed but broken: a failure, not a skip
fi
rm -f "$venv_log"
t1b=$(date +%s)
echo "aarch64: large exports $((t1b - t1))s"
# The threaded suites 3 times each (a race that x86-64's stronger ordering hides can show on Arm).
threaded=$(bazel query "attr(tags, concurrency, tests(//tests/...)) except //tests/opencl/... except //tests/cuda/..." \
  2>/dev/null | paste -sd, -)
# --build_tests_only: the tests left out by tag are not built either (the doc markers' labels include the
# Python extension, which does not cross-build).
nice bazel test --config=aarch64 --build_tests_only --test_tag_filters=-x86_64_only \
  ${threaded:+--runs_per_test="$threaded@3"} \
  "${LARGE_ENV[@]}" "$@" -- "${TESTS[@]}" || status=1
t2=$(date +%s)
echo "aarch64: tests under qemu $((t2 - t1b))s"
bash embedded/size_report.sh || status=1
echo "aarch64: size budget $(($(date +%s) - t2))s"
exit $status
