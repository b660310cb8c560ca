"""Compiler flags for code that includes <Python.h> (Debian's python3-dev, CPython 3.11)."""

PYTHON_VERSION = "3.11"

# -isystem: the headers are system headers (no -Werror on them), found under Bazel's builtin
# /usr/include, so the sandbox and the header-inclusion check accept them.
PYTHON_COPTS = ["-isystem", "/usr/include/python" + PYTHON_VERSION]
