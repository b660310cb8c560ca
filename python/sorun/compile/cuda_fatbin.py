"""CUDA payloads compiled by nvcc at export time, for TVM 0.27 exports made on a machine with no CUDA driver.

Without a driver TVM 0.27's CUDA codegen keeps the kernels as CUDA C++ source (payload fmt "cuda") and never
calls its compile hook; sorun loads ptx, cubin or fatbin only (it has no NVRTC). `compiled_cuda_packer` is an
`export_library(fpack_imports=...)` hook (TVM's documented way to pack the import tree): it takes TVM's packed
container (`ModulePackImportsToC`: the `__tvm_ffi__library_bin` array of a C file TVM then compiles and links),
compiles the source of the one "cuda" module with nvcc, replaces that payload's fmt and code (the kernel table
is kept byte for byte) and writes the C file back. Nothing else in the container changes.

Standalone on purpose (standard library only; TVM imported when the hook runs): sorun.compile uses it, and so
do testdata/relax_cuda/make_relax_cuda_fixtures.py and bench/gpu/make_gpu_models.py, by file path, from a
TVM venv that has no sorun installed.
"""
import os
import re
import shutil
import struct
import subprocess
import tempfile

BLOB_SYMBOL = "__tvm_ffi__library_bin"  # TVM 0.22+ container: tree first (docs/spec/RELAX_FORMAT.md section 3)


def nvcc_args(fmt, archs):
    """nvcc's arguments for payload `fmt` ("ptx", "cubin" or "fatbin") and SM architectures `archs` (e.g.
    ["sm_90"]): a fatbin holds machine code for each and the PTX of the newest (JIT on later GPUs)."""
    archs = sorted(archs, key=lambda a: int(a[3:]))
    if fmt == "ptx":
        return ["--ptx", "-arch=" + archs[0].replace("sm_", "compute_")]
    if fmt == "cubin":
        if len(archs) != 1:
            raise ValueError("a cubin holds one architecture, got %s" % archs)
        return ["--cubin", "-arch=" + archs[0]]
    if fmt != "fatbin":
        raise ValueError("unknown CUDA payload format %r (ptx, cubin or fatbin)" % fmt)
    args = ["--fatbin"]
    for a in archs[:-1]:
        args.append("-gencode=arch=%s,code=%s" % (a.replace("sm_", "compute_"), a))
    newest = archs[-1]
    args.append("-gencode=arch=%s,code=[%s,%s]" % (newest.replace("sm_", "compute_"), newest,
                                                     newest.replace("sm_", "compute_")))
    return args


def find_nvcc():
    """nvcc: $NVCC when set (only it), else from PATH or /usr/local/cuda/bin; None when there is none."""
    if os.environ.get("NVCC"):
        return os.environ["NVCC"] if os.access(os.environ["NVCC"], os.X_OK) else None
    for candidate in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


class _Reader:
    """Little-endian reads over bytes, in TVM's stream encoding (u64 lengths)."""

    def __init__(self, data, what):
        self.data, self.pos, self.what = data, 0, what

    def take(self, n):
        if self.pos + n > len(self.data):
            raise ValueError("%s: truncated at byte %d (need %d)" % (self.what, self.pos, n))
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def bytes(self):
        return self.take(self.u64())

    def u64s(self):
        return [self.u64() for _ in range(self.u64())]


def _pack_bytes(b):
    return struct.pack("<Q", len(b)) + b


def split_cuda_payload(payload):
    """(fmt, kernel table bytes, kernel names, data) of a "cuda" payload in the tvm-ffi grammar:
    string fmt; u64 n; n x (string key, FunctionInfo{string name; vector<DLDataType> arg_types;
    vector<string> launch_param_tags; vector<i32> arg_extra_tags}); string data."""
    r = _Reader(payload, "cuda payload")
    fmt = r.bytes().decode()
    table_start = r.pos
    names = []
    for _ in range(r.u64()):
        names.append(r.bytes().decode())
        r.bytes()  # FunctionInfo.name
        r.take(4 * r.u64())  # arg_types
        for _ in range(r.u64()):
            r.bytes()  # launch_param_tags
        r.take(4 * r.u64())  # arg_extra_tags
    table = payload[table_start:r.pos]
    data = r.bytes()
    if r.pos != len(payload):
        raise ValueError("cuda payload: %d trailing bytes" % (len(payload) - r.pos))
    return fmt, table, names, data


def compile_cuda(source, fmt, kernels, nvcc, archs):
    """nvcc's image of `source` in `fmt`; checks that every kernel is a launchable .entry in the PTX.
    Raises subprocess.CalledProcessError (nvcc's output in .output) or ValueError."""
    with tempfile.TemporaryDirectory() as tmp:
        cu = os.path.join(tmp, "kernels.cu")
        with open(cu, "wb") as f:
            f.write(source)
        ptx = os.path.join(tmp, "kernels.ptx")
        run = dict(check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        subprocess.run([nvcc, "-w"] + nvcc_args("ptx", archs) + ["-o", ptx, cu], **run)  # -w: TVM's unused cse_v*
        with open(ptx) as f:
            entries = set(re.findall(r"\.visible\s+\.entry\s+(\w+)\(", f.read()))
        missing = sorted(set(kernels) - entries)
        if missing:
            raise ValueError("nvcc's PTX has no .entry for %s" % missing)
        out = ptx if fmt == "ptx" else os.path.join(tmp, "kernels." + fmt)
        if fmt != "ptx":
            subprocess.run([nvcc, "-w"] + nvcc_args(fmt, archs) + ["-o", out, cu], **run)
        with open(out, "rb") as f:
            return f.read()


def rewrite_container(blob, fmt, nvcc, archs):
    """The length-prefixed tree-first container `blob` with its one "cuda" payload compiled to `fmt`."""
    (nbytes,) = struct.unpack_from("<Q", blob, 0)
    if nbytes != len(blob) - 8:
        raise ValueError("%s: length prefix %d, %d bytes follow" % (BLOB_SYMBOL, nbytes, len(blob) - 8))
    r = _Reader(blob[8:], BLOB_SYMBOL)
    indptr, children = r.u64s(), r.u64s()
    out = struct.pack("<Q", len(indptr)) + b"".join(struct.pack("<Q", v) for v in indptr)
    out += struct.pack("<Q", len(children)) + b"".join(struct.pack("<Q", v) for v in children)
    rewritten = 0
    for _ in range(len(indptr) - 1):
        kind = r.bytes()
        out += _pack_bytes(kind)
        if kind == b"_lib":
            continue
        payload = r.bytes()
        if kind == b"cuda":
            old_fmt, table, kernels, source = split_cuda_payload(payload)
            if old_fmt != "cuda":
                raise ValueError("the cuda module has fmt %r, expected CUDA source ('cuda')" % old_fmt)
            image = compile_cuda(source, fmt, kernels, nvcc, archs)
            payload = _pack_bytes(fmt.encode()) + table + _pack_bytes(image)
            rewritten += 1
        out += _pack_bytes(payload)
    if r.pos != len(r.data):
        raise ValueError("%s: %d trailing bytes" % (BLOB_SYMBOL, len(r.data) - r.pos))
    if rewritten != 1:
        raise ValueError("%s: %d cuda modules, expected 1" % (BLOB_SYMBOL, rewritten))
    return struct.pack("<Q", len(out)) + out


def compiled_cuda_packer(fmt, nvcc, archs):
    """An export_library `fpack_imports` hook: TVM's C container with the cuda payload compiled to `fmt`
    for SM architectures `archs`."""

    def pack(module, is_system_lib, prefix, workspace_dir):
        from tvm.runtime import _ffi_api  # pylint: disable=import-outside-toplevel

        source = _ffi_api.ModulePackImportsToC(module, is_system_lib, prefix)
        array = re.search(r"(%s\[)(\d+)(\] = \{)(.*?)(\};)" % BLOB_SYMBOL, source, re.S)
        if array is None:
            raise ValueError("ModulePackImportsToC wrote no %s array" % BLOB_SYMBOL)
        blob = bytes(int(x, 16) for x in re.findall(r"0x([0-9a-fA-F]{2})", array.group(4)))
        if len(blob) != int(array.group(2)):
            raise ValueError("%s: %s bytes declared, %d listed" % (BLOB_SYMBOL, array.group(2), len(blob)))
        new = rewrite_container(blob, fmt, nvcc, archs)
        rows = ",\n".join("  " + ",".join("0x%02x" % b for b in new[i:i + 20]) for i in range(0, len(new), 20))
        source = (source[:array.start()] + array.group(1) + str(len(new)) + array.group(3) + "\n" + rows + ",\n" +
                  array.group(5) + source[array.end():])
        path = os.path.join(workspace_dir, prefix + "devc.c")
        with open(path, "w") as f:
            f.write(source)
        return path

    return pack
