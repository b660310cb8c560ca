#!/usr/bin/env bash
# Target 5 (footprint): the CPU-only core runtime built with --config=minsize, stripped, `size`d.
# --platform_suffix keeps this configuration's outputs apart from the -c opt tree (same flags
# otherwise, so the result is the one `bazel build -c opt --config=minsize //api:libsorun_runtime_cpu.so`
# gives) and --symlink_prefix=/ leaves bazel-bin pointing at the -c opt tree.
source "$(dirname "$0")/bench_common.sh"
flags=(-c opt --config=minsize --platform_suffix=minsize --symlink_prefix=/)
bazel build "${flags[@]}" //api:libsorun_runtime_cpu.so >&2
bench_header "footprint (target 5)"
so="$(bazel info "${flags[@]}" bazel-bin 2>/dev/null)/api/libsorun_runtime_cpu.so"
stripped="$OUT_DIR/libsorun_runtime_cpu.stripped.so"
strip -o "$stripped" "$so"
echo "unstripped: $(stat -c %s "$so") bytes; stripped: $(stat -c %s "$stripped") bytes ($(( $(stat -c %s "$stripped") / 1024 )) KiB)"
size "$stripped"
