#!/usr/bin/env python3
"""Writes the source of a documentation block marked `<!-- doc-test: compile NAME [wrapper=PATH] -->`.

    extract_sample.py PAGE NAME OUT [WRAPPER]

Used by the doc_sample() macro (tests/docs/doc_sample.bzl) at build time: OUT is the block verbatim, or
WRAPPER with the block in place of its `// DOC-SAMPLE` line (the block's #include lines replace
`// DOC-SAMPLE-INCLUDES`). Fails when PAGE has no such block, or two.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_blocks  # noqa: E402


def main(argv):
    if len(argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    page, name, out = argv[1:4]
    with open(page, encoding="utf-8") as f:
        blocks, _ = doc_blocks.parse(page, f.read())
    found = [b for b in blocks if b.kind == "compile" and b.marker.arg == name]
    if len(found) != 1:
        print("%s: %d blocks marked `doc-test: compile %s` (want 1)" % (page, len(found), name), file=sys.stderr)
        return 1
    wrapper_text = None
    if len(argv) == 5:
        with open(argv[4], encoding="utf-8") as f:
            wrapper_text = f.read()
    header = "// Extracted from %s:%d by tests/docs/extract_sample.py; edit the doc, not this file.\n" % (
        page, found[0].line)
    with open(out, "w", encoding="utf-8") as f:
        f.write(header + doc_blocks.assemble_sample(found[0], wrapper_text))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
