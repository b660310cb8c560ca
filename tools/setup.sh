#!/usr/bin/env bash
# Installs every Debian package sorun's build, tests, benchmarks and fuzzers need. Idempotent: does
# nothing when all packages are present. Needs root (or sudo) on Debian 12.
set -euo pipefail

PACKAGES=(
  bazel-bootstrap          # Bazel 4.2.3 (offline; see third_party/bazel/README.md)
  build-essential          # gcc/g++/binutils: the build, and the exporter's compiler at run time
  rapidjson-dev            # graph JSON
  libdlpack-dev            # DLPack 0.6 headers
  zlib1g-dev               # inflating gzip-compressed .tar exports (TVM writes `tar -czf`)
  libxxhash-dev            # XXH64 (blob checksum), used header-only: no runtime dependency (base/xxhash64.cc)
  libarchive-dev           # test-only: an independent tar reader the tar tests compare sorun's against
  libssl-dev               # OpenSSL libcrypto: the optional //security package (Ed25519, AES-256-GCM); not the runtime
  openssl                  # the openssl CLI: docs/security.md key commands (doc tests), the Triton signature test
  libgtest-dev             # GoogleTest
  libbenchmark-dev         # Google Benchmark
  ocl-icd-opencl-dev       # the OpenCL ICD loader
  opencl-headers
  pocl-opencl-icd          # a real OpenCL device on the CPU
  clang                    # libFuzzer builds
  clang-format             # the lint job (tools/ci/lint.sh, .clang-format)
  clang-tidy               # the lint job (.clang-tidy)
  lld                      # a third linker layout for the ELF blob injector tests (optional)
  libclang-rt-14-dev       # sanitizer / fuzzer runtimes for clang
  python3                  # test drivers and fixture scripts
  python3-numpy
  python3-dev              # CPython 3.11 headers for the Python extension (//python)
  python3-venv             # the fresh venv of tests/python/run_python_tests.sh
  pybind11-dev             # the Python binding (header-only)
  file
  valgrind                 # callgrind instruction counts (bench/callgrind_counts.sh, its CI budget check)
  gcc-aarch64-linux-gnu    # the aarch64 cross build (--config=aarch64, toolchains/aarch64, docs/embedded.md)
  g++-aarch64-linux-gnu
  qemu-user                # runs the aarch64 tests on this machine (toolchains/aarch64/qemu_run.sh)
)
# arm64 libraries of the aarch64 build, through Debian's multiarch (dpkg --add-architecture arm64).
ARM64_PACKAGES=(libc6 libstdc++6 zlib1g-dev libgtest-dev libssl-dev libarchive-dev libbenchmark-dev ocl-icd-opencl-dev)
for p in "${ARM64_PACKAGES[@]}"; do PACKAGES+=("$p:arm64"); done

missing=()
for p in "${PACKAGES[@]}"; do
  # With arm64 multiarch, a package installed for both architectures needs its native qualifier.
  dpkg -s "$p" >/dev/null 2>&1 || dpkg -s "$p:$(dpkg --print-architecture)" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
if ! dpkg --print-foreign-architectures | grep -qx arm64; then $SUDO dpkg --add-architecture arm64; fi
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "setup: done"
