#!/usr/bin/env python3
"""Writes the sorun wheel (PEP 427) from the built extension and the package's Python files.

usage: build_wheel.py OUT_WHL VERSION EXTENSION_SO PACKAGE_FILE...

The wheel holds sorun/_sorun.cpython-311-x86_64-linux-gnu.so (stripped), the package files,
sorun/_version.py, and sorun-VERSION.dist-info/{METADATA,WHEEL,RECORD} (RECORD: sha256 of every
file, urlsafe base64 without padding). Entries are sorted and time-stamped 1980-01-01, so the same
inputs give the same bytes. Called by the //python:wheel genrule.
"""
import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile

TAG = "cp311-cp311-linux_x86_64"
EXT_NAME = "_sorun.cpython-311-x86_64-linux-gnu.so"


def record_hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "sha256=" + digest


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    out, version, ext = argv[0], argv[1], argv[2]
    files = {}
    for path in argv[3:]:
        with open(path, "rb") as f:
            files["sorun/" + os.path.basename(path)] = f.read()
    with tempfile.TemporaryDirectory() as tmp:
        stripped = os.path.join(tmp, EXT_NAME)
        subprocess.run(["strip", "--strip-unneeded", "-o", stripped, ext], check=True)
        with open(stripped, "rb") as f:
            files["sorun/" + EXT_NAME] = f.read()
    files["sorun/_version.py"] = ('__version__ = "%s"\n' % version).encode()
    dist = "sorun-%s.dist-info" % version
    files[dist + "/METADATA"] = (
        "Metadata-Version: 2.1\nName: sorun\nVersion: %s\n"
        "Summary: Run a TVM-compiled model shipped as one shared library\n"
        "Requires-Python: ==3.11.*\n" % version).encode()
    files[dist + "/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: sorun build_wheel.py\nRoot-Is-Purelib: false\nTag: %s\n" % TAG).encode()
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
