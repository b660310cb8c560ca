#!/usr/bin/env bash
# Stages the GPU benchmark (bench/gpu/README.md) in a self-contained folder for a GPU machine with an NVIDIA
# driver, python3 and (optionally) PyTorch + torchvision and ncu, but no Bazel, toolkit or TVM:
#
#   bash bench/gpu/stage_gpu_bench.sh [OUT] [--arch sm_90] [--small]    # here: builds everything
#   bash OUT/run_gpu_bench.sh                                            # there: under 5 minutes of GPU time
#
# It also writes OUT.tar.xz (about 30 MB with the big models), what a GPU run carries:
#   tar -xJf .gpu_bench.tar.xz && bash .gpu_bench/run_gpu_bench.sh
#
# OUT (default .gpu_bench/, git-ignored): bin/sorun and bin/gpu_executors_bench (-c opt), lib/libcrypto.so.3
# (the CLI's one library beyond glibc/libstdc++/zlib), models/ — ResNet-18 and MobileNetV2 built by
# make_gpu_models.py with TVM 0.27 + nvcc (fatbin for --arch; cached in ~/.cache/sorun/gpu-models keyed by the
# script's hash and the arch, so a second staging is quick), the launch-bound Relax MLP export
# (testdata/relax_cuda/mlp_cubin.so, sm_90 cubin) and the zoo's all-CUDA graph model (mlp_cuda_only.so) — and
# the scripts. --small stages only the two small models (the stand-in driver rehearsal). Prints the folder's
# size; with the big models it stays under the 64 MiB a GPU run may carry.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=.gpu_bench
arch=sm_90
small=0
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) arch=$2; shift 2 ;;
    --small) small=1; shift ;;
    *) out=$1; shift ;;
  esac
done

bazel build -c opt //tools:sorun //bench/gpu:gpu_executors_bench //testdata/models:mlp_cuda_only
bin=$(bazel info -c opt bazel-bin)
[ -f "$bin/testdata/models/mlp_cuda_only.so" ] || { echo "stage_gpu_bench.sh: no nvcc: mlp_cuda_only.so was not built" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/models"
cp "$bin/tools/sorun" "$bin/bench/gpu/gpu_executors_bench" "$out/bin/"
strip "$out/bin/sorun" "$out/bin/gpu_executors_bench"
cp -L /lib/x86_64-linux-gnu/libcrypto.so.3 "$out/lib/"
cp bench/gpu/run_gpu_bench.sh bench/gpu/torch_bench.py bench/gpu/summarize_gpu_bench.py "$out/"
cp "$bin/testdata/models/mlp_cuda_only.so" "$out/models/"
cp testdata/relax_cuda/mlp_cubin.so "$out/models/mlp_relax.so"
if [ "$small" -eq 0 ]; then
  bash tests/interop/install_tvm027.sh
  key=$(cat bench/gpu/make_gpu_models.py bench/peer/onnx_models.py testdata/relax_cuda/make_relax_cuda_fixtures.py python/sorun/compile/cuda_fatbin.py |
        sha256sum | cut -c1-16)
  cache="$HOME/.cache/sorun/gpu-models/$key-$arch"
  if [ ! -f "$cache/resnet18.so" ] || [ ! -f "$cache/mobilenetv2.so" ]; then
    mkdir -p "$cache"
    "$HOME/.cache/sorun/tvm027-venv/bin/python" bench/gpu/make_gpu_models.py "$cache" --arch "$arch"
  fi
  cp "$cache"/*.so "$cache"/*.input.npy "$out/models/"
fi
chmod -R u+w "$out"
tar -C "$(dirname "$out")" -cJf "$out.tar.xz" "$(basename "$out")"
echo "staged $(du -sh "$out" | cut -f1) in $out ($(du -h "$out.tar.xz" | cut -f1) as $out.tar.xz);" \
  "on the GPU machine: tar -xJf $(basename "$out").tar.xz && bash $(basename "$out")/run_gpu_bench.sh"
