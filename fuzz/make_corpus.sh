#!/usr/bin/env bash
# Regenerates the committed seed corpora fuzz/corpus/<target>/ with //fuzz:make_corpus (sorun's own
# writers; a C compiler builds the small ELF seeds) plus the .npy fixtures of testdata/npy, and takes
# the blobs of small packed zoo models (testdata/models) as model_load_fuzzer seeds.
# Usage: fuzz/make_corpus.sh        (from anywhere inside the workspace)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT="$ROOT/fuzz/corpus"
# The packed zoo models whose blobs are small enough to be model_load_fuzzer seeds as they are.
ZOO=(digits)
BIN=$(bazel info bazel-bin)
ZOO_TARGETS=()
ZOO_FILES=()
for m in "${ZOO[@]}"; do
  ZOO_TARGETS+=("//testdata/models:$m")
  ZOO_FILES+=("$BIN/testdata/models/$m.so")
done
bazel build //fuzz:make_corpus //fuzz:make_relax_corpus "${ZOO_TARGETS[@]}"
rm -rf "$OUT"
mkdir -p "$OUT"
"$BIN/fuzz/make_corpus" "$OUT" "${ZOO_FILES[@]}"
cp testdata/npy/*.npy "$OUT/npy_fuzzer/"
mkdir -p "$OUT/relax_fuzzer" "$OUT/relax_vm_fuzzer"
"$BIN/fuzz/make_relax_corpus" "$OUT" testdata/relax
echo "corpus: $(find "$OUT" -type f | wc -l) files, $(du -sb "$OUT" | cut -f1) bytes"
