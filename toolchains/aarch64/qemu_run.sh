#!/usr/bin/env bash
# The --run_under wrapper of `--config=aarch64` tests (.bazelrc): runs an aarch64 ELF program under
# qemu-aarch64 with the arm64 cross libraries (-L /usr/aarch64-linux-gnu, falling back to the multiarch
# /usr/lib/aarch64-linux-gnu), and anything else (a shell-script test, an x86-64 tool) as it is.
# usage: qemu_run.sh PROGRAM [ARGS...]
set -euo pipefail
prog=$1
# e_machine (bytes 18-19 of the ELF header) = 183 (0xb7, EM_AARCH64), little-endian.
if [ "$(head -c 4 "$prog" | od -An -c | tr -d ' ')" = '177ELF' ] &&
  [ "$(od -An -tx1 -j18 -N2 "$prog" | tr -d ' \n')" = "b700" ]; then
  export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
  exec qemu-aarch64 "$@"
fi
exec "$@"
