"""The installed wheel: what the extension needs at import, and the wheel's RECORD."""
import ast
import base64
import hashlib
import os
import subprocess
import sys

import pytest

import sorun

pytestmark = pytest.mark.smoke  # every version's wheel runs this file (run_wheel_matrix.sh)

ALLOWED = {"libc.so.6", "libstdc++.so.6", "libm.so.6", "libgcc_s.so.1", "libdl.so.2", "libpthread.so.0",
           "ld-linux-x86-64.so.2"}


def extension_path():
    return sorun._sorun.__file__


def test_extension_needs_only_libc_and_libstdcxx():
    out = subprocess.run(["readelf", "-d", extension_path()], check=True, capture_output=True, text=True).stdout
    needed = {line.split("[")[1].split("]")[0] for line in out.splitlines() if "(NEEDED)" in line}
    assert needed and needed <= ALLOWED, needed  # no libOpenCL, libz, libpython
    assert "RPATH" not in out and "RUNPATH" not in out


def test_extension_exports_only_its_init_and_the_tvm_c_abi():
    out = subprocess.run(["nm", "-D", "--defined-only", extension_path()], check=True, capture_output=True,
                         text=True).stdout
    names = {line.split()[-1] for line in out.splitlines() if line.strip()}
    others = {n for n in names if n != "PyInit__sorun" and not n.startswith("TVM")}
    assert "PyInit__sorun" in names and "TVMBackendRegisterSystemLibSymbol" in names, sorted(names)
    assert not others, sorted(others)  # nothing of the C++ runtime or pybind11 leaks


def test_import_in_a_clean_process_loads_no_opencl_or_cuda():
    code = ("import sorun, sys; maps = open('/proc/self/maps').read(); "
            "sys.exit(1 if ('libOpenCL' in maps or 'libcuda' in maps) else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_record_matches_installed_files():
    site = os.path.dirname(os.path.dirname(sorun.__file__))
    dist = os.path.join(site, "sorun-%s.dist-info" % sorun.__version__)
    with open(os.path.join(dist, "RECORD")) as f:
        rows = [line.rstrip("\n").split(",") for line in f if line.strip()]
    checked = 0
    for name, digest, size in rows:
        if not digest:
            continue
        with open(os.path.join(site, name), "rb") as f:
            data = f.read()
        want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert (digest, int(size)) == (want, len(data)), name
        checked += 1
    assert checked >= 5
    with open(os.path.join(dist, "WHEEL")) as f:
        wheel = f.read()
    abi = "cp%d%d" % sys.version_info[:2]  # this interpreter's wheel, tagged manylinux (python/wheel_defs.bzl)
    assert "Tag: %s-%s-manylinux_2_" % (abi, abi) in wheel, wheel
    with open(os.path.join(dist, "METADATA")) as f:
        assert "Requires-Python: ==%d.%d.*" % sys.version_info[:2] in f.read()


def test_every_package_source_is_in_the_wheel():
    """Every module of python/sorun/ is installed: the wheel's file list (python/wheel_defs.bzl PACKAGE_FILES)
    is written by hand, and a module left out of it broke sorun compile's worker at import."""
    source = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python",
                          "sorun")
    if not os.path.isdir(source):
        pytest.skip("not run from the source tree: %s is missing" % source)
    installed = os.path.dirname(sorun.__file__)
    modules = [os.path.relpath(os.path.join(d, f), source) for d, _, files in os.walk(source) for f in files
               if f.endswith((".py", ".pyi", ".typed")) and "__pycache__" not in d]
    assert len(modules) >= 10
    missing = [m for m in modules if not os.path.isfile(os.path.join(installed, m))]
    assert not missing, "in python/sorun/ but not in the wheel (python/wheel_defs.bzl PACKAGE_FILES): %s" % missing


def _stub_members(classes, name):
    """Names a class of __init__.pyi declares, its stub base classes' included."""
    node = classes[name]
    names = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
    names |= {n.target.id for n in node.body if isinstance(n, ast.AnnAssign)}
    for base in node.bases:
        if isinstance(base, ast.Name) and base.id in classes:
            names |= _stub_members(classes, base.id)
    return names


def test_type_stubs_declare_every_public_name():
    with open(os.path.join(os.path.dirname(sorun.__file__), "__init__.pyi")) as f:
        stub = ast.parse(f.read())
    classes = {n.name: n for n in stub.body if isinstance(n, ast.ClassDef)}
    functions = {n.name for n in stub.body if isinstance(n, ast.FunctionDef)}
    missing = []
    for name in sorun.__all__:
        obj = getattr(sorun, name)
        if isinstance(obj, type):
            if name not in classes:
                missing.append(name)
                continue
            declared = _stub_members(classes, name)
            inherited = set(dir(RuntimeError)) if issubclass(obj, BaseException) else set()
            missing += ["%s.%s" % (name, a) for a in dir(obj)
                        if (not a.startswith("_") or a in ("__call__", "__dlpack__", "__dlpack_device__"))
                        and a not in declared and a not in inherited]
        elif callable(obj) and name not in functions:
            missing.append(name)
    assert not missing, missing
