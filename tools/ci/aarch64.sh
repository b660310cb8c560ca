#!/usr/bin/env bash
# The aarch64 job of CI (.ci/run; docs/embedded.md "CI"): cross-builds sorun for 64-bit Arm
# (--config=aarch64) and runs a chosen subset of the tests under qemu-aarch64, then the static core's size
# budget (embedded/size_report.sh). The subset is what emulation adds over the x86-64 suites: the ELF
# refusal, the TVM 0.27 aarch64 exports (the small checked-in ones, ResNet-18 and MobileNetV2) against TVM's
# x86-64 outputs and the thread pool (Arm's weaker memory model, 3 runs); with SORUN_AARCH64_TESTS=full also
# the bad-input catalogue, the zoo end to end (kernels cross-compiled, packed by the x86-64 `sorun pack`) and
# the threaded executor suites (3 runs). Left out: //tests/relax:vm_executor_test (its fixtures are x86-64
# TVM exports) and //tests/robustness:lifecycle_test (its RSS bound counts qemu's own translation cache:
# +155 MB over 10,000 load/unload cycles under emulation). Other suites run on demand: bazel test --config=aarch64 //tests/<pkg>/...
#   1. build: libsorun.so, the static cores and hello programs (full: also the CLI and the Triton backend);
#   2. large exports: ResNet-18 and MobileNetV2 for aarch64 and their x86-64 TVM references
#      (testdata/relax_aarch64/make_relax_aarch64_large.py, the pinned TVM 0.27 venv of
#      tests/interop/install_tvm027.sh), input 1x3xNxN (N = SORUN_AARCH64_LARGE_SIZE, default 64), cached
#      in ~/.cache/sorun/relax-aarch64-large/<hash of the generator sources and pins>-<N>; given to
#      aarch64_exports_test as SORUN_AARCH64_LARGE_MODELS (it skips those two cases, with the reason, when
#      the venv cannot be had here);
#   3. test: SUBSET under qemu, the "concurrency"-tagged ones --runs_per_test=3;
#   4. size: embedded/size_report.sh against embedded/size_budget.txt (both, graph, vm; and graph_noexc_lto,
#      the graph-only core without exceptions and RTTI linked with LTO: --config=minsize_lto).
# Exit 3 (skipped, the reason printed) when the cross compiler or qemu-aarch64 is missing.
# usage: [SORUN_AARCH64_TESTS=full] [SORUN_AARCH64_LARGE_SIZE=N] tools/ci/aarch64.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
for tool in aarch64-linux-gnu-g++ qemu-aarch64; do
  if ! command -v "$tool" >/dev/null; then
    echo "aarch64: skipped: $tool is not installed (tools/setup.sh installs it)"
    exit 3
  fi
done
# CI's quick subset needs no x86-64 host tools (a cold build of `sorun pack` for the zoo models alone costs
# minutes on 2 cores); SORUN_AARCH64_TESTS=full adds the suites over the zoo models (on demand).
SUBSET=(
  //tests/format:elf_preflight_test
  //tests/e2e:aarch64_exports_test
  //tests/runtime:thread_pool_test
)
if [ "${SORUN_AARCH64_TESTS:-quick}" = full ]; then
  SUBSET+=(
    //tests/robustness:bad_input_catalogue_test
    //tests/e2e:zoo_test
    //tests/executor:executor_conformance_threads_test
    //tests/graph_executor:graph_executor_test
  )
fi
status=0
t0=$(date +%s)
BUILD=(//api:libsorun.so //embedded/...)
# The CLI (with the packer) and the Triton backend: about 100 more compile actions, on demand only.
[ "${SORUN_AARCH64_TESTS:-quick}" = full ] && BUILD+=(//tools:sorun //serving/triton:libtriton_sorun.so)
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
# The threaded tests 3 times each (a race that x86-64's stronger ordering hides can show on Arm).
# The executor conformance suite's Relax cases use testdata/relax, x86-64 TVM exports: refused on aarch64
# ("built for x86_64, this machine is aarch64"); the aarch64 Relax exports are aarch64_exports_test's.
nice bazel test --config=aarch64 --test_filter=-*relax_* \
  --runs_per_test=executor_conformance_threads_test,thread_pool_test,graph_executor_test@3 \
  "${LARGE_ENV[@]}" "${SUBSET[@]}" || status=1
t2=$(date +%s)
echo "aarch64: tests under qemu $((t2 - t1b))s"
bash embedded/size_report.sh || status=1
echo "aarch64: size budget $(($(date +%s) - t2))s"
exit $status
