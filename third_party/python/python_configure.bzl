"""Repository rule @cpython: the C headers of every CPython the wheels are built for (python/build_wheels.sh).

For each version in PYTHON_VERSIONS it symlinks the first include directory found: Debian's
/usr/include/python3.X (python3-dev), else the newest $PYENV_ROOT/versions/3.X.*/include/python3.X
(PYENV_ROOT defaults to ~/.pyenv). A version without headers gets an empty directory and
PYTHON_HEADERS_FOUND[version] = False in @cpython//:defs.bzl; its targets are tagged manual, so
`bazel build //...` never needs them. An extension must not link libpython: the importing interpreter
provides the symbols, so these are headers only.
"""

PYTHON_VERSIONS = ["3.9", "3.10", "3.11", "3.12", "3.13"]

def _include_dir(repository_ctx, version):
    debian = repository_ctx.path("/usr/include/python%s/Python.h" % version)
    if debian.exists:
        return "/usr/include/python" + version
    env = repository_ctx.os.environ
    root = env.get("PYENV_ROOT", env.get("HOME", "/root") + "/.pyenv")
    versions = repository_ctx.path(root + "/versions")
    if not versions.exists:
        return None
    found = []
    for d in versions.readdir():
        name = d.basename
        parts = name.split(".")
        if len(parts) == 3 and ".".join(parts[:2]) == version and parts[2].isdigit():
            if d.get_child("include").get_child("python" + version).get_child("Python.h").exists:
                found.append((int(parts[2]), str(d) + "/include/python" + version))
    return sorted(found)[-1][1] if found else None

def _cpython_impl(repository_ctx):
    build = ["package(default_visibility = [\"//visibility:public\"])", ""]
    found = {}
    for version in PYTHON_VERSIONS:
        inc = _include_dir(repository_ctx, version)
        found[version] = inc != None
        if inc:
            repository_ctx.symlink(inc, version)
        else:
            repository_ctx.file(version + "/.empty", "")
        build += [
            "cc_library(",
            "    name = \"headers_%s\"," % version.replace(".", "_"),
            "    hdrs = glob([\"%s/**/*.h\"])," % version,
            "    includes = [\"%s\"]," % version,
            ")",
            "",
        ]
    repository_ctx.file("BUILD.bazel", "\n".join(build))
    repository_ctx.file("defs.bzl", "PYTHON_HEADERS_FOUND = %r\n" % found)

cpython_configure = repository_rule(
    implementation = _cpython_impl,
    environ = ["PYENV_ROOT", "HOME"],
    local = True,
)
