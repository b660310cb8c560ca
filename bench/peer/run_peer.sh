#!/usr/bin/env bash
# The peer benchmark in one command (bench/peer/README.md): installs the TVM and ONNX Runtime venvs
# (outside the repository), builds sorun, then runs peer_bench.py (extra arguments are passed on,
# e.g. --threads 1 --processes 5 --markdown /tmp/peer.md). Exit 3 when a venv cannot be installed here.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tests/interop/install_tvm.sh || exit $?
bash bench/peer/install_peer.sh || exit $?
bazel build //tools:sorun //api:libsorun_runtime_cpu.so
exec python3 bench/peer/peer_bench.py --sorun "$(bazel info bazel-bin 2>/dev/null)/tools/sorun" "$@"
