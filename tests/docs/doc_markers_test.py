#!/usr/bin/env python3
"""Every code block of README.md and docs/*.md says how CI checks it, and the static kinds hold.

    doc_markers_test.py --label=//pkg:target ...   (//tests/docs:doc_markers_test; the labels are the
                                                   BUILD's DOC_LABELS, which Bazel resolves as data)

Checks (doc_blocks.py describes the markers):
  - every fenced block carries a valid `<!-- doc-test: ... -->` marker (pages in UNMARKED_PAGES excepted,
    with their reason), no marker stands alone, no indented code block;
  - `file PATH`: the block is PATH verbatim (`bazel run //tests/docs:update_doc_samples` copies it);
  - `excerpt PATH`: every paragraph of the block is in PATH (runs of whitespace compared as one space);
  - `compile NAME`: tests/docs/BUILD.bazel declares doc_sample NAME; a `wrapper=` file has `// DOC-SAMPLE`;
  - every Bazel label a block names (`//pkg:target`) is one of DOC_LABELS, so a renamed target fails here.
Prints the blocks CI does not run (not-run, with the reason) and the count of each kind.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_blocks  # noqa: E402
import doc_samples  # noqa: E402

LABEL_RE = re.compile(r"(?<![\w:/])//([a-z0-9_]+(?:/[a-z0-9_]+)*)(?::([\w.+\-]+))?")


def squash(text):
    return " ".join(text.split())


def check_block(block, root, build_text, labels):
    m, problems = block.marker, []
    where = block.where()
    if m is None:
        return ["%s: a ```%s block without a doc-test marker (doc_blocks.py lists the kinds)" % (where, block.info)]
    problems += ["%s: marker '%s': %s" % (where, m.text, e) for e in m.errors]
    if m.errors:
        return problems
    if m.kind in ("file", "excerpt"):
        path = os.path.join(root, m.arg)
        if not os.path.isfile(path):
            return problems + ["%s: %s is not in the repository (or not in this test's data)" % (where, m.arg)]
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if m.kind == "file" and block.text() != text:
            problems.append("%s: the block differs from %s (`bazel run //tests/docs:update_doc_samples` copies the "
                            "file into the doc)" % (where, m.arg))
        if m.kind == "excerpt":
            whole = squash(text)
            for para in "\n".join(block.body).split("\n\n"):
                if para.strip() and squash(para) not in whole:
                    problems.append("%s: not in %s: %s" % (where, m.arg, para.strip().split("\n")[0]))
    if m.kind == "compile":
        if not re.search(r'doc_sample\(\s*name\s*=\s*"%s"' % re.escape(m.arg), build_text):
            problems.append("%s: tests/docs/BUILD.bazel has no doc_sample(name = \"%s\")" % (where, m.arg))
        wrapper = m.options.get("wrapper")
        if wrapper:
            path = os.path.join(root, wrapper)
            if not os.path.isfile(path) or "// DOC-SAMPLE" not in open(path, encoding="utf-8").read():
                problems.append("%s: wrapper %s missing or without a `// DOC-SAMPLE` line" % (where, wrapper))
    if m.kind == "run":
        steps, errors = doc_samples.parse_session(block)
        problems += errors
        problems += ["%s: unknown vary=%s (known: %s)" % (where, v, ", ".join(doc_samples.VARY))
                     for v in m.vary() if v not in doc_samples.VARY]
    for match in LABEL_RE.finditer(block.text()):
        label = match.group(0)
        if label.endswith(".bzl") or label == "//" or label.startswith("//..."):
            continue
        if ":" not in label:
            label += ":" + match.group(1).split("/")[-1]
        if label not in labels:
            problems.append("%s: names %s, which is not in tests/docs/BUILD.bazel's DOC_LABELS (add it there, "
                            "so that Bazel checks it exists)" % (where, label))
    return problems


def main(argv):
    labels = set()
    for arg in argv[1:]:
        if not arg.startswith("--label="):
            print("usage: doc_markers_test.py [--label=//pkg:target]...", file=sys.stderr)
            return 2
        labels.add(arg[len("--label="):])
    root = doc_samples.runfiles_root()
    with open(os.path.join(root, "tests/docs/BUILD.bazel"), encoding="utf-8") as f:
        build_text = f.read()
    problems, counts, not_run = [], {}, []
    for page in doc_blocks.doc_pages(root):
        text = doc_blocks.read_page(root, page)
        blocks, found = doc_blocks.parse(page, text)
        problems += found
        lines = text.split("\n")
        fences = {b.first for b in blocks}
        for i, line in enumerate(lines):
            if doc_blocks.MARKER_RE.match(line) and i + 1 not in fences:
                problems.append("%s:%d: a doc-test marker must be the line right before a fence" % (page, i + 1))
        if page in doc_blocks.UNMARKED_PAGES:
            stray = [b for b in blocks if b.marker]
            problems += ["%s: marked, but %s is in UNMARKED_PAGES: remove it from there" % (b.where(), page)
                         for b in stray[:1]]
            counts["unmarked (%s)" % page] = len(blocks)
            continue
        for block in blocks:
            problems += check_block(block, root, build_text, labels)
            if block.marker:
                counts[block.kind] = counts.get(block.kind, 0) + 1
                if block.kind == "not-run":
                    not_run.append("%s: %s" % (block.where(), block.marker.reason))
    for p in problems:
        print("FAILED " + p)
    print("blocks: " + ", ".join("%d %s" % (n, k) for k, n in sorted(counts.items())))
    print("not run by CI (%d):" % len(not_run))
    for line in not_run:
        print("  " + line)
    for page, reason in sorted(doc_blocks.UNMARKED_PAGES.items()):
        print("unmarked page %s: %s" % (page, reason))
    print("doc markers: %d problems" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
