#!/usr/bin/env bash
# The --run_under wrapper of `--config=aarch64` tests (.bazelrc): runs an aarch64 ELF program under
# qemu-aarch64, and anything else (a shell-script test, an x86-64 tool) as it is. The program's libraries
# are Debian's arm64 multiarch ones (/lib/ld-linux-aarch64.so.1, /usr/lib/aarch64-linux-gnu; tools/setup.sh),
# whose dynamic loader and libc match. Only without them is the cross toolchain's copy used
# (QEMU_LD_PREFIX=/usr/aarch64-linux-gnu): there a different build of glibc than the multiarch libc.so.6
# must not be mixed in, or the first pthread_create spins forever (seen with 2.36-8cross1 vs 2.36-9+deb12u14).
# usage: qemu_run.sh PROGRAM [ARGS...]
set -euo pipefail
prog=$1
# e_machine (bytes 18-19 of the ELF header) = 183 (0xb7, EM_AARCH64), little-endian.
if [ "$(head -c 4 "$prog" | od -An -c | tr -d ' ')" = '177ELF' ] &&
  [ "$(od -An -tx1 -j18 -N2 "$prog" | tr -d ' \n')" = "b700" ]; then
  if [ -e /lib/ld-linux-aarch64.so.1 ]; then
    unset QEMU_LD_PREFIX
  else
    export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
  fi
  # A test that starts another program of the build (the CLI tests) starts it through this emulator.
  export SORUN_TEST_EMULATOR=qemu-aarch64
  exec qemu-aarch64 "$@"
fi
exec "$@"
