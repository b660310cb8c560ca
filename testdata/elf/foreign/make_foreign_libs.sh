#!/usr/bin/env bash
# Regenerates the committed one-function shared libraries of testdata/elf/foreign: the same C source
# compiled for x86-64 (x86_64-linux-gnu-gcc, or gcc on an x86-64 host) and for aarch64
# (aarch64-linux-gnu-gcc). Tests load the one that is NOT of the machine they run on, to check the
# wrong-architecture refusal names both architectures (tests/format/elf_preflight_test.cc).
# usage: testdata/elf/foreign/make_foreign_libs.sh   (needs Debian's gcc and gcc-aarch64-linux-gnu)
set -euo pipefail
cd "$(dirname "$0")"
src=$(mktemp --suffix=.c)
trap 'rm -f "$src"' EXIT
echo 'int sorun_foreign_answer(void) { return 42; }' > "$src"
x86cc=$(command -v x86_64-linux-gnu-gcc || command -v gcc)
"$x86cc" -shared -fPIC -Os -s -o answer_x86_64.so "$src"
aarch64-linux-gnu-gcc -shared -fPIC -Os -s -Wl,-z,max-page-size=4096 -o answer_aarch64.so "$src"
ls -l answer_*.so
