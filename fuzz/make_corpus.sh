#!/usr/bin/env bash
# Regenerates the committed seed corpora fuzz/corpus/<target>/ with //fuzz:make_corpus (sorun's own
# writers; a C compiler builds the small ELF seeds) plus the .npy fixtures of testdata/npy.
# Usage: fuzz/make_corpus.sh        (from anywhere inside the workspace)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT="$ROOT/fuzz/corpus"
bazel build //fuzz:make_corpus
rm -rf "$OUT"
mkdir -p "$OUT"
"$(bazel info bazel-bin)/fuzz/make_corpus" "$OUT"
cp testdata/npy/*.npy "$OUT/npy_fuzzer/"
echo "corpus: $(find "$OUT" -type f | wc -l) files, $(du -sb "$OUT" | cut -f1) bytes"
