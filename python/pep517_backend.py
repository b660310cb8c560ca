"""The PEP 517 build backend of `pip install .` / `pip wheel .` (pyproject.toml: backend-path = ["python"]).

It drives the one build of truth, Bazel: build_wheel runs `bazel build -c opt //python:wheel_cp3X` for the
CPython running it and copies that wheel, byte for byte, into pip's wheel directory, so `pip wheel .`
gives the same file as python/build_wheels.sh. build_sdist packs the files git tracks plus PKG-INFO.
Needs nothing from PyPI (requires = []): `bazel` (tools/setup.sh) and the interpreter's headers.

Also a command line for python/build_wheels.sh:  python3 python/pep517_backend.py wheel-name 3.X
"""
import io
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUPPORTED = ("3.9", "3.10", "3.11", "3.12", "3.13")


def _read(relpath, pattern):
    with open(os.path.join(ROOT, relpath)) as f:
        m = re.search(pattern, f.read(), re.M)
    if not m:
        raise RuntimeError("%s: no match for %s" % (relpath, pattern))
    return m.group(1)


def sorun_version():
    return _read("version.bzl", r'^SORUN_VERSION = "([^"]+)"')


def wheel_name(py_version):
    """The file //python:wheel_cp3X writes (python/wheel_defs.bzl's wheel_name)."""
    abi = "cp" + py_version.replace(".", "")
    tag = _read("python/wheel_defs.bzl", r'^MANYLINUX_TAG = "([^"]+)"')
    return "sorun-%s-%s-%s-%s.whl" % (sorun_version(), abi, abi, tag)


def _this_python():
    py_version = "%d.%d" % sys.version_info[:2]
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        raise RuntimeError("sorun: free-threaded CPython (%st) is not supported (pybind11 2.10 has no such build)"
                           % py_version)
    if py_version not in SUPPORTED:
        raise RuntimeError("sorun: CPython %s is not supported; wheels exist for %s" % (py_version, ", ".join(SUPPORTED)))
    return py_version


def _bazel(*args):
    # stdout of a PEP 517 hook belongs to the frontend's log; Bazel's progress goes there too.
    cmd = ["bazel"] + list(args)
    sys.stderr.write("sorun backend: %s\n" % " ".join(cmd))
    return subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    py_version = _this_python()
    _bazel("build", "-c", "opt", "//python:wheel_cp" + py_version.replace(".", ""))
    name = wheel_name(py_version)
    src = os.path.join(_bazel("info", "-c", "opt", "bazel-bin"), "python", name)
    with open(src, "rb") as f:
        data = f.read()
    with open(os.path.join(wheel_directory, name), "wb") as f:
        f.write(data)
    return name


def build_sdist(sdist_directory, config_settings=None):
    base = "sorun-%s" % sorun_version()
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                           stdout=subprocess.PIPE).stdout.decode().split("\0")
    pkg_info = ("Metadata-Version: 2.1\nName: sorun\nVersion: %s\nRequires-Python: >=3.9,<3.14\n"
                % sorun_version()).encode()
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel in sorted(f for f in files if f and os.path.isfile(os.path.join(ROOT, f))):
            tar.add(os.path.join(ROOT, rel), arcname=base + "/" + rel, recursive=False)
        info = tarfile.TarInfo(base + "/PKG-INFO")
        info.size, info.mtime = len(pkg_info), int(time.time())
        tar.addfile(info, io.BytesIO(pkg_info))
    return name


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "wheel-name":
        print(wheel_name(sys.argv[2]))
    else:
        sys.exit("usage: pep517_backend.py wheel-name 3.X")
