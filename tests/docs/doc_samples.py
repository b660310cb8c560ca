#!/usr/bin/env python3
"""Runs the documentation's samples (doc_blocks.py says how blocks are marked) and compares or rewrites them.

    doc_samples.py check  [--root DIR] [PAGE...]   //tests/docs:doc_samples_test: every `run`, `commands`
                                                   and `compile` block; exit 1 on any difference
    doc_samples.py update [PAGE...]                `bazel run //tests/docs:update_doc_samples`: rewrites the
                                                   `run` blocks (and `file` blocks) of the source tree's docs
                                                   from this run

Runs from the Bazel runfiles (the built `sorun`, the zoo models, the compiled samples). Each block runs in a
fresh scratch directory holding the fixtures below under the names the docs use, with `sorun` and the
compiled samples first in PATH and no SORUN_* variable set. Commands run with bash, stdout and stderr
merged. Output comparison collapses runs of spaces and normalises what varies from run to run (timings,
RSS) plus the block's `vary=` list; a `...` line stands for any number of lines.
"""
import difflib
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_blocks  # noqa: E402

RUNFILES_WORKSPACE = "sorun"

# Scratch-directory name -> runfiles path (relative to the workspace root in the runfiles tree).
FIXTURES = {
    "mlp.so": "testdata/models/mlp.so",
    "model.so": "testdata/models/mlp.so",
    "mlp.json": "testdata/models/mlp.json",
    "graph.json": "testdata/models/mlp.json",
    "mlp.params": "testdata/models/mlp.params",
    "model.params": "testdata/models/mlp.params",
    "x.npy": "testdata/models/mlp_input.npy",
    "mlp_opencl.so": "testdata/models/mlp_opencl.so",
    "mlp_opencl.json": "testdata/models/mlp_opencl.json",
    "mlp_opencl.params": "testdata/models/mlp_opencl.params",
    "nn_kernels.c": "testdata/kernels/nn_kernels.c",
    "kernels.c": "testdata/kernels/nn_kernels.c",
    "nn_device_host.c": "testdata/kernels/nn_device_host.c",
    "nn_opencl.cl": "testdata/kernels/nn_opencl.cl",
    "nn_opencl.fmap.json": "testdata/kernels/nn_opencl.fmap.json",
    "lib.so": "testdata/kernels/libnn_kernels.so",  # a plain kernel library: TVM's three-file lib.so
    "tvm_lib.so": "testdata/kernels/libnn_kernels.so",
    "testdata/relax/mlp.so": "testdata/relax/mlp.so",
    "testdata/relax/mlp.input_0.npy": "testdata/relax/mlp.input_0.npy",
    "tvm_relax_export.so": "testdata/relax/mlp.so",
    "fortran.npy": "testdata/npy/fortran_float32.npy",
    "app.c": "tests/api/c/example.c",
    "example.c": "tests/api/c/example.c",
    "example": "tests/api/sorun_example_test",
    "libtriton_sorun.so": "serving/triton/libtriton_sorun.so",  # docs/api.md's C++ example, built by //tests/api
}
# Fixtures linked rather than copied: programs whose shared libraries are found relative to their real
# path (a copy would lose Bazel's $ORIGIN-relative RUNPATH).
LINKED = {"example"}
# Programs found through PATH: name -> runfiles path.
PROGRAMS = {
    "sorun": "tools/sorun",
}
# Commands a doc shows that the runfiles stand in for: prefix -> runfiles path of the program.
ALIASES = {
    "bazel run //tools/demo:digits": "tools/demo/digits",
}
# `compile NAME` blocks: the program //tests/docs:NAME, in the runfiles.
COMPILED_DIR = "tests/docs"
# Placeholders of `commands` lines: -> a runfiles path (made absolute).
PLACEHOLDERS = {
    "<sorun checkout>": ".",
    "<dir of libsorun.so>": "api",
}
COMMAND_TIMEOUT_S = 120

# What varies from run to run, always normalised: (pattern, replacement).
ALWAYS = [
    (r"\b\d+(?:\.\d+)?(?:e[-+]?\d+)? (ms|us|µs|s)\b", r"<t> \1"),  # "0.723 ms", "1.8 us"
    (r"\b(min|median|p90|max|mean) [-\d.e+]+", r"\1 <t>"),  # bench's run line
    (r'"(\w*_ms|min|median|p90|max|mean|\w*_rss_bytes)":[-\d.e+]+', r'"\1":<n>'),  # bench --json
    (r"peak RSS .*", "peak RSS <rss>"),
]
# What a block may declare as varying (vary=NAME,...).
VARY = {
    # A missing CUDA device: the count and the driver note depend on the machine.
    "cuda": [(r"(device cuda:\d+ is not present) \(.*", r"\1 (...)")],
    # Sizes of files linked by the toolchain (not of blobs, which sorun writes byte for byte).
    "size": [(r"(shared object, )[\d.]+ [KMG]?i?B", r"\1<size>"), (r"(wrote \S+ \()[\d.]+ [KMG]?i?B", r"\1<size>"),
             (r'"file_bytes":\d+', '"file_bytes":<n>')],
}


def runfiles_root():
    """The workspace directory of this program's runfiles tree."""
    for var in ("RUNFILES_DIR", "TEST_SRCDIR"):
        d = os.environ.get(var)
        if d and os.path.isdir(os.path.join(d, RUNFILES_WORKSPACE)):
            return os.path.join(d, RUNFILES_WORKSPACE)
    here = os.path.abspath(__file__)
    marker = ".runfiles" + os.sep + RUNFILES_WORKSPACE + os.sep
    if marker in here:
        return here[:here.index(marker) + len(marker) - 1]
    return os.getcwd()


# ---------------------------------------------------------------------------------------------------------
# Crafted fixtures.

_P1, _P2, _P3 = 11400714785074694791, 14029467366897019727, 1609587929392839161
_P4, _P5, _M = 9650029242287828579, 2870177450012600261, (1 << 64) - 1


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & _M


def _round(acc, lane):
    return (_rotl((acc + lane * _P2) & _M, 31) * _P1) & _M


def xxh64(data, seed=0):
    """XXH64 (the checksum of sorun's integrity record, base/xxhash), pure Python."""
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + _P1 + _P2) & _M, (seed + _P2) & _M, seed, (seed - _P1) & _M]
        while i + 32 <= n:
            lanes = struct.unpack_from("<4Q", data, i)
            v = [_round(a, b) for a, b in zip(v, lanes)]
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M
        for a in v:
            h = ((h ^ _round(0, a)) * _P1 + _P4) & _M
    else:
        h = (seed + _P5) & _M
    h = (h + n) & _M
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, struct.unpack_from("<Q", data, i)[0]), 27) * _P1 + _P4) & _M
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ ((struct.unpack_from("<I", data, i)[0] * _P1) & _M), 23) * _P2 + _P3) & _M
        i += 4
    while i < n:
        h = (_rotl(h ^ ((data[i] * _P5) & _M), 11) * _P1) & _M
        i += 1
    h ^= h >> 33
    h = (h * _P2) & _M
    h ^= h >> 29
    h = (h * _P3) & _M
    return h ^ (h >> 32)


def _blob_and_record(image):
    """(blob offset, blob bytes, record offset) of a sorun-packed library image (bytearray)."""
    rec = image.find(b"SORUNCK1")
    if rec < 0:
        raise RuntimeError("no __sorun_blob_checksum record")
    _, nbytes, stored = struct.unpack_from("<3Q", image, rec + 8)
    prefix = struct.pack("<Q", nbytes - 8)
    pos = image.find(prefix)
    while pos >= 0:
        if xxh64(bytes(image[pos:pos + nbytes])) == stored:
            return pos, nbytes, rec
        pos = image.find(prefix, pos + 1)
    raise RuntimeError("no blob matches the checksum record")


def _patched_model(src, dst, old, new, fix_checksum):
    """Copies src to dst with `old` replaced by `new` (same length) inside the blob; with fix_checksum the
    integrity record is recomputed, so only sorun's structural checks can object."""
    assert len(old) == len(new)
    with open(src, "rb") as f:
        image = bytearray(f.read())
    pos, nbytes, rec = _blob_and_record(image)
    at = image.find(old, pos, pos + nbytes)
    if at < 0:
        raise RuntimeError("%r is not in the blob of %s" % (old, src))
    image[at:at + len(old)] = new
    if fix_checksum:
        struct.pack_into("<Q", image, rec + 24, xxh64(bytes(image[pos:pos + nbytes])))
    with open(dst, "wb") as f:
        f.write(image)


def _npy(path, shape, descr="<f4"):
    """Writes a zero-filled .npy file (format 1.0) of the given shape."""
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    count = 1
    for d in shape:
        count *= d
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + b"\0" * (4 * count))


def make_scratch(root, base):
    """A fresh scratch directory under base with every fixture; returns its path."""
    scratch = tempfile.mkdtemp(prefix="block-", dir=base)
    for name, rel in FIXTURES.items():
        src = os.path.join(root, rel)
        if not os.path.exists(src):
            continue  # not in this target's runfiles; a block that needs it fails naming the file
        dst = os.path.join(scratch, name)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if name in LINKED:
            os.symlink(os.path.realpath(src), dst)
        else:
            shutil.copyfile(src, dst)
            shutil.copymode(src, dst)
    mlp = os.path.join(scratch, "mlp.so")
    if os.path.exists(mlp):
        # The graph JSON inside the blob changed: the checksum no longer matches.
        _patched_model(mlp, os.path.join(scratch, "corrupt.so"), b'"fc1_w"', b'"fc1_W"', fix_checksum=False)
        # A node calling libc's system(), checksum recomputed: only the kernel rule refuses it.
        _patched_model(mlp, os.path.join(scratch, "calls_system.so"), b'"sorun_softmax"', b'"system"       ',
                       fix_checksum=True)
    _npy(os.path.join(scratch, "bad_shape.npy"), (1, 32))
    return scratch


def make_env(root, base):
    """The commands' environment: PATH with the programs first, no SORUN_* variables."""
    bindir = os.path.join(base, "bin")
    if not os.path.isdir(bindir):
        os.makedirs(bindir)
        for name, rel in PROGRAMS.items():
            os.symlink(os.path.realpath(os.path.join(root, rel)), os.path.join(bindir, name))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SORUN_")}
    env["PATH"] = bindir + ":/usr/local/bin:/usr/bin:/bin"
    env["LC_ALL"] = "C.UTF-8"
    env["RUNFILES_DIR"] = os.path.dirname(root)  # programs that find their data through runfiles
    return env


def run_command(command, cwd, env, root):
    """(exit code, merged output text) of one command line."""
    for prefix, rel in ALIASES.items():
        if command == prefix or command.startswith(prefix + " "):
            command = os.path.join(root, rel) + command[len(prefix):]
    try:
        p = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=COMMAND_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return 124, "timed out after %d s\n" % COMMAND_TIMEOUT_S
    return p.returncode, p.stdout.decode("utf-8", "replace")


# ---------------------------------------------------------------------------------------------------------
# `run` blocks.

EXIT_RE = re.compile(r"^(.*?)\s+\[exit (\d+)\]$")


class Step:
    def __init__(self, command, exit_code, output, gap):
        self.command, self.exit_code, self.output, self.gap = command, exit_code, output, gap


def parse_session(block):
    """The steps of a `run` block: `$ command [exit N]` lines, each followed by its output lines."""
    steps, errors = [], []
    for line in block.body:
        if line.startswith("$ "):
            m = EXIT_RE.match(line[2:])
            command, code = (m.group(1), int(m.group(2))) if m else (line[2:].rstrip(), 0)
            steps.append(Step(command, code, [], 0))
        elif not steps:
            errors.append("%s: a run block starts with a `$ command` line" % block.where())
            break
        else:
            steps[-1].output.append(line)
    for s in steps:
        while s.output and not s.output[-1].strip():
            s.output.pop()
            s.gap += 1
    return steps, errors


def normalise(lines, vary):
    rules = list(ALWAYS)
    for name in vary:
        rules += VARY[name]
    out = []
    for line in lines:
        line = re.sub(r" {2,}", " ", line.rstrip())
        for pattern, repl in rules:
            line = re.sub(pattern, repl, line)
        out.append(line)
    return out


def matches(expected, actual):
    """True when actual matches expected, where an expected `...` line stands for any lines."""
    parts, cur = [], []
    for line in expected:
        if line.strip() == "...":
            parts.append(cur)
            cur = []
        else:
            cur.append(line)
    parts.append(cur)
    if len(parts) == 1:
        return expected == actual
    if actual[:len(parts[0])] != parts[0]:
        return False
    pos = len(parts[0])
    for part in parts[1:-1]:
        for start in range(pos, len(actual) - len(part) + 1):
            if actual[start:start + len(part)] == part:
                pos = start + len(part)
                break
        else:
            return False
    last = parts[-1]
    return not last or (len(actual) - pos >= len(last) and actual[len(actual) - len(last):] == last)


def truncate_like(expected, actual):
    """actual cut the way expected is: its lines before the first `...` and after the last one."""
    marks = [i for i, line in enumerate(expected) if line.strip() == "..."]
    if not marks:
        return actual
    head, tail = marks[0], len(expected) - marks[-1] - 1
    if head + tail >= len(actual):
        return actual
    return actual[:head] + ["..."] + (actual[len(actual) - tail:] if tail else [])


def render_session(steps, outputs):
    """The block body of a session from its steps and their (exit code, output lines)."""
    annotated = [len(s.command) for s, (code, _) in zip(steps, outputs) if code != 0]
    column = max(annotated) + 3 if annotated else 0
    lines = []
    for s, (code, out) in zip(steps, outputs):
        head = "$ " + s.command
        if code != 0:
            head = head.ljust(column if column <= 60 else len(head) + 1) + " [exit %d]" % code
        lines.append(head)
        lines += out
        lines += [""] * s.gap
    return "\n".join(lines) + "\n"


def run_session(block, root, base, env):
    """(problems, regenerated body) of a `run` block."""
    steps, problems = parse_session(block)
    if problems:
        return problems, None
    for name in block.marker.vary():
        if name not in VARY:
            return ["%s: unknown vary=%s (known: %s)" % (block.where(), name, ", ".join(VARY))], None
    scratch = make_scratch(root, base)
    outputs = []
    for s in steps:
        code, text = run_command(s.command, scratch, env, root)
        text = text.replace(scratch + "/", "").replace(scratch, ".")
        lines = text.rstrip("\n").split("\n") if text.strip() else []
        lines = [line.rstrip() for line in lines]
        outputs.append((code, truncate_like(s.output, lines)))
        want, got = normalise(s.output, block.marker.vary()), normalise(lines, block.marker.vary())
        if code != s.exit_code or not matches(want, got):
            diff = "\n".join(difflib.unified_diff(s.output, lines, "doc", "run", lineterm="", n=2))
            problems.append("%s: `%s`: exit %d (doc: %d)\n%s" % (block.where(), s.command, code, s.exit_code, diff))
    shutil.rmtree(scratch, ignore_errors=True)
    return problems, render_session(steps, outputs)


# ---------------------------------------------------------------------------------------------------------
# `commands` blocks, `compile` blocks, commands in a `file` block's comments.

def command_lines(block):
    """The runnable lines of a `commands` block (comments and `bazel` lines left out)."""
    out = []
    for line in block.body:
        text = line.split(" #", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        if text and not text.startswith("bazel "):
            out.append(text)
    return out


def substitute(command, root):
    for placeholder, rel in PLACEHOLDERS.items():
        command = command.replace(placeholder, os.path.abspath(os.path.join(root, rel)))
    return command


def run_commands(where, commands, root, base, env):
    problems = []
    scratch = make_scratch(root, base)
    for command in commands:
        code, text = run_command(substitute(command, root), scratch, env, root)
        if code != 0:
            problems.append("%s: `%s` exited %d:\n%s" % (where, command, code, text.rstrip()))
            break
    shutil.rmtree(scratch, ignore_errors=True)
    return problems


def comment_commands(text, program):
    """Command lines in a C/C++ file's comments: those starting with `program ` (e.g. a build line) and
    the `./...` lines that follow them (running what it built)."""
    out = []
    for line in text.split("\n"):
        m = re.match(r"^\s*(?://|/?\*)\s+(.*)$", line)
        command = m.group(1).strip() if m else ""
        if command.startswith(program + " ") or (out and command.startswith("./")):
            out.append(command)
    return out


def check_block(block, root, base, env):
    """(problems, new body or None) of one block."""
    kind = block.kind
    if kind == "run":
        return run_session(block, root, base, env)
    if kind == "commands":
        return run_commands(block.where(), command_lines(block), root, base, env), None
    if kind == "compile":
        program = os.path.join(root, COMPILED_DIR, block.marker.arg)
        if not os.path.exists(program):
            return ["%s: //tests/docs:%s is not in this test's data" % (block.where(), block.marker.arg)], None
        scratch = make_scratch(root, base)
        code, text = run_command(program, scratch, env, root)
        shutil.rmtree(scratch, ignore_errors=True)
        if code != 0:
            return ["%s: the compiled sample //tests/docs:%s exited %d:\n%s" % (
                block.where(), block.marker.arg, code, text.rstrip())], None
        return [], None
    if kind == "file" and "commands" in block.marker.options:
        lines = comment_commands(block.text(), block.marker.options["commands"])
        if not lines:
            return ["%s: no comment line starts with `%s `" % (block.where(), block.marker.options["commands"])], None
        return run_commands(block.where() + " (comment)", lines, root, base, env), None
    return [], None


def main(argv):
    if len(argv) < 2 or argv[1] not in ("check", "update"):
        print(__doc__)
        return 2
    mode, pages = argv[1], argv[2:]
    root = runfiles_root()
    docs_root = root
    if mode == "update":
        docs_root = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
        if not docs_root:
            print("update: run it with `bazel run //tests/docs:update_doc_samples`", file=sys.stderr)
            return 2
    pages = pages or doc_blocks.doc_pages(docs_root)
    base = tempfile.mkdtemp(prefix="doc-samples-", dir=os.environ.get("TEST_TMPDIR"))
    env = make_env(root, base)
    problems, counts, changed = [], {}, []
    for page in pages:
        text = doc_blocks.read_page(docs_root, page)
        blocks, _ = doc_blocks.parse(page, text)
        replacements = []
        for block in blocks:
            if not block.marker:
                continue
            found, body = check_block(block, root, base, env)
            if block.kind == "file" and mode == "update":
                with open(os.path.join(docs_root, block.marker.arg), encoding="utf-8") as f:
                    body = f.read()
            counts[block.kind] = counts.get(block.kind, 0) + 1
            if mode == "update" and block.kind in ("run", "file"):
                found = []  # rewritten below
            problems += found
            if mode == "update" and body is not None and body != block.text():
                replacements.append((block, body))
                changed.append(block.where())
        new_text = text
        for block, body in reversed(replacements):  # from the end: earlier blocks keep their line numbers
            new_text = doc_blocks.replace_block(new_text, block, body)
        if new_text != text:
            with open(os.path.join(docs_root, page), "w", encoding="utf-8") as f:
                f.write(new_text)
    shutil.rmtree(base, ignore_errors=True)
    ran = ", ".join("%d %s" % (n, k) for k, n in sorted(counts.items()))
    for p in problems:
        print("FAILED " + p + "\n")
    if mode == "update":
        for where in changed:
            print("updated " + where)
        print("doc samples: %d blocks rewritten (%s)" % (len(changed), ran))
        return 1 if problems else 0
    print("doc samples: %d problems (%s)" % (len(problems), ran))
    if problems:
        print("A `run` block differs from a run: `bazel run //tests/docs:update_doc_samples` rewrites it from "
              "the current build (review the diff); other kinds are fixed by hand.")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
