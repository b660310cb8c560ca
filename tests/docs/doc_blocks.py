"""The fenced code blocks of the documentation and their doc-test markers (standard library only).

Every fenced block in README.md and docs/*.md is preceded by a marker line saying how CI checks it:

    <!-- doc-test: KIND [ARG] [key=value ...] [: REASON] -->
    ```sh
    ...
    ```

KIND                   what CI does with the block
  run [vary=a,b]       a session: `$ command` lines (`[exit N]` at the end of the line when it fails) and
                       their output. //tests/docs:doc_samples_test runs the commands in a scratch
                       directory of fixtures and compares the output after normalising timings and the
                       `vary` list; `bazel run //tests/docs:update_doc_samples` rewrites the block from a run.
  commands             command lines without output: each `sorun`/`cc`/`./program` line runs in the scratch
                       directory and must exit 0; `bazel` lines name targets that must exist.
  compile NAME         C/C++ compiled by //tests/docs:NAME (extracted from the doc at build time) and run
                       by doc_samples_test (exit 0). `wrapper=PATH`: the block is a fragment that PATH's
                       `// DOC-SAMPLE` line stands for (its #include lines go to `// DOC-SAMPLE-INCLUDES`).
  file PATH            the whole of PATH, verbatim (a test compiles and runs that file); the update tool
                       copies the file into the doc.
  excerpt PATH         each paragraph of the block appears in PATH (whitespace runs are one space), a file
                       that the build uses.
  python               run by the Python job (tests/python/test_docs.py, the installed wheel): a block
                       with `>>>` prompts is a doctest, any other block a script.
  triton               run by the Triton job (tests/serving/test_docs.py, a real tritonserver).
  diagram              not code: a diagram, a directory layout, a byte grammar.
  not-run: REASON      a sample CI cannot run; the reason says why (keep this list short).

Pages not listed by doc_pages() (docs/spec/: vendored specifications) carry no markers.
"""
import os
import re

MARKER_RE = re.compile(r"^\s*<!--\s*doc-test:\s*(.*?)\s*-->\s*$")
FENCE_RE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
KINDS = ("run", "commands", "compile", "file", "excerpt", "python", "triton", "diagram", "not-run")
# Kinds whose first argument is required (a name or a repository path).
KINDS_WITH_ARG = ("compile", "file", "excerpt")

# Pages whose blocks are not marked, with the reason (checked by doc_markers_test).
UNMARKED_PAGES = {
    "docs/architecture.md": "being rewritten with the executor layer (issue 27); its three blocks are diagrams",
}


class Marker:
    """A parsed `<!-- doc-test: ... -->` line."""

    def __init__(self, text):
        self.text = text
        reason = ""
        if ":" in text:
            text, reason = text.split(":", 1)
        words = text.split()
        self.kind = words[0] if words else ""
        self.arg = ""
        self.options = {}
        self.errors = []
        for word in words[1:]:
            if "=" in word:
                key, value = word.split("=", 1)
                self.options[key] = value
            elif not self.arg:
                self.arg = word
            else:
                self.errors.append("unexpected word %r" % word)
        self.reason = reason.strip()
        if self.kind not in KINDS:
            self.errors.append("unknown kind %r (kinds: %s)" % (self.kind, ", ".join(KINDS)))
        if self.kind in KINDS_WITH_ARG and not self.arg:
            self.errors.append("%s needs an argument" % self.kind)
        if self.kind == "not-run" and not self.reason:
            self.errors.append("not-run needs a reason after ':'")

    def vary(self):
        return [v for v in self.options.get("vary", "").split(",") if v]


class Block:
    """One fenced block: `first`/`last` are the 0-based indices of its fence lines in the page."""

    def __init__(self, page, first, last, info, body, marker):
        self.page = page
        self.first = first
        self.last = last
        self.info = info
        self.body = body  # the lines between the fences, without newlines
        self.marker = marker  # Marker or None

    @property
    def line(self):
        return self.first + 1  # 1-based line of the opening fence

    @property
    def kind(self):
        return self.marker.kind if self.marker else None

    def text(self):
        return "\n".join(self.body) + ("\n" if self.body else "")

    def where(self):
        return "%s:%d" % (self.page, self.line)


def parse(page, text):
    """(blocks, problems) of a page's text. problems: unclosed fences and indented code blocks."""
    lines = text.split("\n")
    blocks, problems = [], []
    i = 0
    while i < len(lines):
        m = FENCE_RE.match(lines[i])
        if not m:
            if _is_indented_code(lines, i):
                problems.append("%s:%d: an indented code block: use a fenced block with a doc-test marker" %
                                (page, i + 1))
            i += 1
            continue
        indent, fence, info = m.groups()
        j = i + 1
        while j < len(lines):
            c = FENCE_RE.match(lines[j])
            if c and c.group(2).startswith(fence[0]) and len(c.group(2)) >= len(fence) and not c.group(3).strip():
                break
            j += 1
        if j == len(lines):
            problems.append("%s:%d: fence never closed" % (page, i + 1))
            break
        marker = None
        k = i - 1
        if k >= 0 and MARKER_RE.match(lines[k]):
            marker = Marker(MARKER_RE.match(lines[k]).group(1))
        body = [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines[i + 1:j]]
        blocks.append(Block(page, i, j, info.strip(), body, marker))
        i = j + 1
    return blocks, problems


def _is_indented_code(lines, i):
    """A CommonMark indented code block outside lists: 4+ spaces after a blank line, and the last
    non-blank line before it is neither a list item nor indented (a list item's continuation)."""
    if not lines[i].startswith("    ") or not lines[i].strip() or i == 0 or lines[i - 1].strip():
        return False
    k = i - 1
    while k >= 0 and not lines[k].strip():
        k -= 1
    if k < 0:
        return True
    prev = lines[k]
    return not (prev.startswith((" ", "\t")) or re.match(r"^\s*([-*+]|\d+[.)])\s", prev))


def doc_pages(root):
    """README.md and docs/*.md, relative to root, sorted."""
    pages = ["README.md"]
    pages += sorted("docs/" + f for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
    return pages


def read_page(root, page):
    with open(os.path.join(root, page), encoding="utf-8") as f:
        return f.read()


def page_blocks(root, page):
    return parse(page, read_page(root, page))


def replace_block(text, block, new_body):
    """The page text with `block`'s body replaced by `new_body` (a string, newline-terminated or empty)."""
    lines = text.split("\n")
    indent = FENCE_RE.match(lines[block.first]).group(1)
    body = new_body.split("\n")
    if body and body[-1] == "":
        body.pop()
    body = [indent + line if line else line for line in body]
    return "\n".join(lines[:block.first + 1] + body + lines[block.last:])


def split_fragment(body_lines):
    """(include lines, other lines) of a C/C++ fragment: the #include lines go to the file's top."""
    includes = [line for line in body_lines if line.startswith("#include")]
    rest = [line for line in body_lines if not line.startswith("#include")]
    while rest and not rest[0].strip():
        rest.pop(0)
    return includes, rest


def assemble_sample(block, wrapper_text=None):
    """The source file of a `compile` block: the block itself, or the wrapper with the fragment in it."""
    if wrapper_text is None:
        return block.text()
    includes, rest = split_fragment(block.body)
    out = []
    for line in wrapper_text.split("\n"):
        stripped = line.strip()
        indent = line[:len(line) - len(line.lstrip())]
        if stripped == "// DOC-SAMPLE-INCLUDES":
            out.extend(includes)
        elif stripped == "// DOC-SAMPLE":
            out.extend(indent + r if r else r for r in rest)
        else:
            out.append(line)
    return "\n".join(out)
