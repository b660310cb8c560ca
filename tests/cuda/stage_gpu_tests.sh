#!/usr/bin/env bash
# Builds the CUDA backend's test binaries on this machine and stages them with their runfiles (test
# kernels, shared libraries, the CUDA Relax exports of testdata/relax_cuda) in a self-contained folder
# (default: .gpu_tests/, git-ignored) that runs on any x86-64 Linux machine with an NVIDIA driver and a
# glibc/libstdc++ at least as new as this machine's (no Bazel, toolkit or sources needed there):
#
#   bash tests/cuda/stage_gpu_tests.sh      # here (needs nvcc for the test kernels)
#   bash .gpu_tests/run.sh                  # there: runs every binary; a missing GPU fails
#
# libcuda.so.1 is opened at run time from that machine's own driver.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=${1:-.gpu_tests}
tests=(cuda_gpu_test cuda_module_test cuda_backend_test kernel_args_test cuda_module_relax_export_test
       cuda_module_relax_payload_test executor_streams_test device_weight_cache_cuda_test captured_runs_test
       cuda_graph_test)

targets=()
for t in "${tests[@]}"; do targets+=("//tests/cuda:$t"); done
bazel build //testdata/cuda:test_kernels "${targets[@]}"
defs="$(bazel info output_base)/external/local_cuda/defs.bzl"
# The output folder of the build above: the bazel-bin symlink follows whichever build ran last (another
# user's -c opt build in a shared workspace), `bazel info bazel-bin` names this configuration's.
bin="$(bazel info bazel-bin)"
if ! grep -q 'NVCC_AVAILABLE = True' "$defs"; then
  echo "stage_gpu_tests.sh: no nvcc (set CUDA_PATH to the toolkit); the GPU tests need the nvcc-built kernels" >&2
  exit 1
fi

rm -rf "$out"
mkdir -p "$out"
for t in "${tests[@]}"; do
  cp -rL "$bin/tests/cuda/$t.runfiles" "$out/$t.runfiles"  # the binary, its .so deps and data
done
chmod -R u+w "$out"

cat >"$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs the staged CUDA tests. SORUN_REQUIRE_GPU=1 (the default here) makes "no CUDA driver/device" a
# failure instead of a skip. Extra arguments go to every test binary (e.g. --gtest_filter=...).
# Ends with "N passed, M failed" (binaries); exits non-zero if any failed.
here=$(cd "$(dirname "$0")" && pwd)
# Drivers mounted outside the loader's default path (containers) are usually here.
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
  [ -e "$d/libcuda.so.1" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
done
export SORUN_REQUIRE_GPU=${SORUN_REQUIRE_GPU:-1} TEST_WORKSPACE=sorun
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
passed=0 failed=0
for runfiles in "$here"/*.runfiles; do
  t=$(basename "$runfiles" .runfiles)
  echo "=== $t"
  if (cd "$runfiles/sorun" && TEST_SRCDIR="$runfiles" "./tests/cuda/$t" --gtest_color=no "$@"); then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
RUN
chmod +x "$out/run.sh"
echo "staged $(du -sh "$out" | cut -f1) in $out; on the GPU machine run: bash $out/run.sh"
