#!/usr/bin/env python3
"""Writes the sorun wheel (PEP 427) from the built extension and the package's Python files.

usage: build_wheel.py OUT_WHL VERSION PY_VERSION PLATFORM EXTENSION_SO PACKAGE_FILE...
  e.g. build_wheel.py sorun-0.1.0-cp39-cp39-manylinux_2_35_x86_64.whl 0.1.0 3.9 manylinux_2_35_x86_64 ...

The wheel holds sorun/_sorun.cpython-3X-x86_64-linux-gnu.so (stripped), the package files,
sorun/_version.py, and sorun-VERSION.dist-info/{METADATA,WHEEL,RECORD} (RECORD: sha256 of every
file, urlsafe base64 without padding). Entries are sorted and time-stamped 1980-01-01, so the same
inputs give the same bytes. Requires-Python is ==3.X.*: the extension imports in that CPython only.
Called by the //python:wheel_cp3X genrules (python/wheel_defs.bzl).
"""
import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile


# `pip install 'sorun[compile]'`: what `sorun compile` (sorun/compile/) needs. apache-tvm 0.27's wheel is
# py3-none for CPython 3.10+; its MetaSchedule tuner needs psutil and cloudpickle, and crashes in
# tvm::ffi::ToJSONGraph with apache-tvm-ffi 0.1.15.post2, hence the 0.1.14.post0 pin.
COMPILE_EXTRA = "".join("Requires-Dist: %s; python_version >= \"3.10\" and extra == \"compile\"\n" % req for req in [
    "apache-tvm==0.27.0.post1",
    "apache-tvm-ffi==0.1.14.post0",
    "onnx==1.23.2",
    "onnxruntime==1.23.2",
    "psutil>=5.9",
    "cloudpickle>=2.0",
]) + "Provides-Extra: compile\n"


def record_hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "sha256=" + digest


def main(argv):
    if len(argv) < 6:
        sys.exit(__doc__)
    out, version, py_version, platform, ext = argv[:5]
    major, minor = py_version.split(".")
    abi = "cp%s%s" % (major, minor)
    tag = "%s-%s-%s" % (abi, abi, platform)
    ext_name = "_sorun.cpython-%s%s-x86_64-linux-gnu.so" % (major, minor)
    files = {}
    for path in argv[5:]:
        with open(path, "rb") as f:
            # python/sorun/compile/cli.py -> sorun/compile/cli.py
            files[path[path.rindex("sorun/"):]] = f.read()
    with tempfile.TemporaryDirectory() as tmp:
        stripped = os.path.join(tmp, ext_name)
        subprocess.run(["strip", "--strip-unneeded", "-o", stripped, ext], check=True)
        with open(stripped, "rb") as f:
            files["sorun/" + ext_name] = f.read()
    files["sorun/_version.py"] = ('__version__ = "%s"\n' % version).encode()
    dist = "sorun-%s.dist-info" % version
    files[dist + "/METADATA"] = (
        "Metadata-Version: 2.1\nName: sorun\nVersion: %s\n"
        "Summary: Run a TVM-compiled model shipped as one shared library\n"
        "Requires-Python: ==%s.*\n%s" % (version, py_version, COMPILE_EXTRA)).encode()
    files[dist + "/entry_points.txt"] = b"[console_scripts]\nsorun-compile = sorun.compile.cli:console_main\n"
    files[dist + "/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: sorun build_wheel.py\nRoot-Is-Purelib: false\nTag: %s\n" % tag).encode()
    record = "".join("%s,%s,%d\n" % (name, record_hash(data), len(data)) for name, data in sorted(files.items()))
    files[dist + "/RECORD"] = (record + dist + "/RECORD,,\n").encode()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as whl:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            whl.writestr(info, files[name])


if __name__ == "__main__":
    main(sys.argv[1:])
