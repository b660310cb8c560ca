#!/usr/bin/env bash
# The aarch64 job of CI (.ci/run; docs/embedded.md "CI"): cross-builds sorun for 64-bit Arm
# (--config=aarch64) and runs a chosen subset of the tests under qemu-aarch64, then the static core's size
# budget (embedded/size_report.sh). The subset is what emulation adds over the x86-64 suites: the ELF
# refusal, the TVM 0.27 aarch64 exports against TVM's x86-64 outputs and the thread pool (Arm's weaker
# memory model, 3 runs); with SORUN_AARCH64_TESTS=full also the bad-input catalogue, the zoo end to end
# (kernels cross-compiled, packed by the x86-64 `sorun pack`) and the threaded executor suites (3 runs). Left out: //tests/relax:vm_executor_test (its fixtures are x86-64 TVM exports) and
# //tests/robustness:lifecycle_test (its RSS bound counts qemu's own translation cache: +155 MB over 10,000
# load/unload cycles under emulation). Other suites run on demand: bazel test --config=aarch64 //tests/<pkg>/...
#   1. build: libsorun.so, the static cores and hello programs (full: also the CLI and the Triton backend);
#   2. test: SUBSET under qemu, the "concurrency"-tagged ones --runs_per_test=3;
#   3. size: embedded/size_report.sh against embedded/size_budget.txt.
# Exit 3 (skipped, the reason printed) when the cross compiler or qemu-aarch64 is missing.
# usage: [SORUN_AARCH64_TESTS=full] tools/ci/aarch64.sh
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
# The threaded tests 3 times each (a race that x86-64's stronger ordering hides can show on Arm).
# The executor conformance suite's Relax cases use testdata/relax, x86-64 TVM exports: refused on aarch64
# ("built for x86_64, this machine is aarch64"); the aarch64 Relax exports are aarch64_exports_test's.
nice bazel test --config=aarch64 --test_filter=-*relax_* \
  --runs_per_test=executor_conformance_threads_test,thread_pool_test,graph_executor_test@3 \
  "${SUBSET[@]}" || status=1
t2=$(date +%s)
echo "aarch64: tests under qemu $((t2 - t1))s"
bash embedded/size_report.sh || status=1
echo "aarch64: size budget $(($(date +%s) - t2))s"
exit $status
